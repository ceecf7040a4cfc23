/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Alerts with state: what a job's on_failure (and on_event) hear of an
 * instance that fails is its transitions, not every attempt.
 *
 *   failing        the first failed run (or start) after it was well
 *   crash-loop     its restart delay reached restart_delay_max (after
 *                  two failed runs at least)
 *   still-failing  a reminder, at a failure at least alert_repeat after
 *                  the last alert said
 *   recovered      a run lasted min_uptime again (RUNNING that long), or
 *                  succeeded
 *
 * With alert_repeat = "0", every failed run is said, as "failed" (in
 * place of failing and still-failing).
 *
 * FATAL and a dead message are said as before (hook.c).  The state, with
 * the failures so far and the restart delay reached, is kept in state.db
 * (state_alert), so that a restart of vigild is neither a new burst of
 * alerts nor of starts: alert_resume gives the instance its failures
 * back, and its next failed start waits the delay it had reached.
 */

#include "config.h"

#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "effects.h"
#include "evloop.h"
#include "inst.h"
#include "jobs.h"
#include "log.h"
#include "monotime.h"
#include "state.h"
#include "store.h"
#include "xmalloc.h"

static int alert_stable(sd_event_source *, uint64_t, void *);
static void alert_limit_note(struct inst *);

/*
 * Say event for in to its hooks (status: the wait status of the run it
 * is about, -1: none; msg_id: its message, 0: none), and record the state.
 */
static void
alert_say(struct inst *in, const char *event, int status, int64_t msg_id)
{
	in->alert.said = store_now();
	hook_alert(
	    in, event, status, msg_id, in->alert.failures, in->alert.since);
	state_alert(in);
}

/* The instance is well again. */
static void
alert_recovered(struct inst *in)
{
	if (in->alert.state == ALERT_OK)
		return;
	log_info("%s: recovered after %u failed run%s", in->label,
	    in->alert.failures, in->alert.failures == 1 ? "" : "s");
	in->alert.state = ALERT_OK;
	alert_say(in, "recovered", -1, 0);
	in->alert.failures = 0;
	in->alert.since = 0;
	in->alert.delay = 0;
}

/*
 * A run of in failed (status: its wait status, -1 when it never ran;
 * msg_id: a queue run's message, else 0): the first says "failing", the
 * others only a reminder when one is due.
 */
void
alert_failed(struct inst *in, int status, int64_t msg_id)
{
	uint64_t repeat = in->job->spec->alert_repeat;
	int64_t now = store_now();

	in->alert.failures++;
	alert_limit_note(in);
	if (in->alert.state == ALERT_OK) {
		in->alert.state = ALERT_FAILING;
		in->alert.since = now;
		alert_say(
		    in, repeat == 0 ? "failed" : "failing", status, msg_id);
		return;
	}
	if (repeat == 0)
		alert_say(in, "failed", status, msg_id);
	else if (now - in->alert.said >= (int64_t)repeat)
		alert_say(in, "still-failing", status, msg_id);
	else
		state_alert(in); /* the count, for a restart of vigild */
}

/*
 * start_limit = "N/INTERVAL": would a failed start now be the Nth within
 * INTERVAL?  The caller passes it to the decision (life_input's
 * limit_reached), which gives up then (FATAL).
 */
int
alert_limit_reached(const struct inst *in)
{
	const struct job_spec *spec = in->job->spec;
	const struct inst_alert *a = &in->alert;
	uint64_t now = monotime_now();
	int i, n = 0;

	if (spec->start_limit_burst <= 0 || a->fails == NULL)
		return (spec->start_limit_burst == 1);
	for (i = 0; i < a->nfails; i++) {
		if (now - a->fails[i] < spec->start_limit_interval)
			n++;
	}
	return (n + 1 >= spec->start_limit_burst);
}

/* Note the time of a failed start, for start_limit's window. */
static void
alert_limit_note(struct inst *in)
{
	const struct job_spec *spec = in->job->spec;
	struct inst_alert *a = &in->alert;
	int cap = spec->start_limit_burst;

	if (cap <= 0)
		return;
	if (a->fails == NULL || a->capfails != cap) {
		free(a->fails);
		a->fails = xcalloc((size_t)cap, sizeof(*a->fails));
		a->capfails = cap;
		a->nfails = 0;
	}
	if (a->nfails == cap) {
		memmove(a->fails, a->fails + 1,
		    (size_t)(cap - 1) * sizeof(*a->fails));
		a->nfails--;
	}
	a->fails[a->nfails++] = monotime_now();
}

/* A run of in succeeded: it is well. */
void
alert_succeeded(struct inst *in)
{
	alert_recovered(in);
}

/* Arm (or disarm) the check that the run lasted min_uptime. */
static void
alert_stable_arm(struct inst *in, int on)
{
	uint64_t at = in->run.started + in->job->spec->min_uptime;

	in->alert.stable = sd_event_source_disable_unref(in->alert.stable);
	if (!on)
		return;
	evloop_timer_at(&in->alert.stable, CLOCK_MONOTONIC, at,
	    DURATION_USEC_PER_MSEC, alert_stable, in);
}

static int
alert_stable(sd_event_source *s, uint64_t usec, void *arg)
{
	struct inst *in = arg;

	(void)s;
	(void)usec;
	in->alert.stable = sd_event_source_disable_unref(in->alert.stable);
	if (in->state == JOB_RUNNING)
		alert_recovered(in);
	return (0);
}

/*
 * The state of in changed from was: a BACKOFF whose delay reached
 * restart_delay_max is a crash loop; a RUNNING instance that fails is
 * well again once the run lasted min_uptime.
 */
static void
alert_changed(struct inst *in, enum job_state was)
{
	const struct job_spec *spec = in->job->spec;
	char d[32];

	if (in->state == JOB_FATAL && was != JOB_FATAL &&
	    spec->start_limit_burst > 0 &&
	    in->alert.nfails >= spec->start_limit_burst &&
	    monotime_now() - in->alert.fails[0] < spec->start_limit_interval)
		log_warnx("%s: gave up: %d failed starts within %s "
		          "(start_limit); vigilctl start %s tries again",
		    in->label, spec->start_limit_burst,
		    duration_format(spec->start_limit_interval, d, sizeof(d)),
		    in->label);
	if (in->state == JOB_BACKOFF && in->alert.state == ALERT_FAILING &&
	    in->alert.failures >= 2 &&
	    in->life.delay * 10 >= spec->restart_delay_max * 9) {
		in->alert.state = ALERT_CRASHLOOP;
		in->alert.delay = in->life.delay;
		log_warnx("%s: crash loop: %u failed runs in a row, restarted "
		          "every %s (restart_delay_max)",
		    in->label, in->alert.failures,
		    duration_format(spec->restart_delay_max, d, sizeof(d)));
		alert_say(
		    in, "crash-loop", in->last.known ? in->last.status : -1, 0);
		return;
	}
	if (in->state == JOB_BACKOFF)
		in->alert.delay = in->life.delay;
	alert_stable_arm(in,
	    in->state == JOB_RUNNING && in->alert.state != ALERT_OK &&
	        in->run.pid > 0);
}

/* The instance goes (a reload removed it, or vigild exits). */
static void
alert_free(struct inst *in)
{
	in->alert.stable = sd_event_source_disable_unref(in->alert.stable);
	free(in->alert.fails);
	in->alert.fails = NULL;
	in->alert.nfails = in->alert.capfails = 0;
}

/*
 * At start-up, once every instance had its start: an instance that was
 * failing when vigild stopped goes on from its failures (its next failed
 * start waits the delay it had reached, not restart_delay).
 */
void
alert_resume(struct inst *in)
{
	if (in->alert.state == ALERT_OK || in->alert.failures == 0)
		return;
	if (in->life.failures < in->alert.failures)
		in->life.failures = in->alert.failures;
	log_info("%s: %s since before this vigild started (%u failed runs): "
	         "going on from there",
	    in->label,
	    in->alert.state == ALERT_CRASHLOOP ? "in a crash loop" : "failing",
	    in->alert.failures);
}

const struct inst_observer alert_observer = {
	.changed = alert_changed,
	.gone = alert_free,
};
