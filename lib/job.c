/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The restart policy: job_decide() turns the end of a run into what
 * follows (restart now, after a backoff, never, FATAL); the lifecycle
 * (life.c) takes it at the run's end.  And the one wording of how a
 * process ended (job_exit_format).  Pure: the unit tests walk every
 * branch.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/wait.h>

#include <stdio.h>
#include <strings.h>

#include "backoff.h"
#include "conf.h"
#include "job.h"
#include "signame.h"

static const char *const job_state_names[JOB_STATE_COUNT] = {
	"STOPPED",
	"STARTING",
	"RUNNING",
	"BACKOFF",
	"STOPPING",
	"EXITED",
	"FATAL",
	"BLOCKED",
	"WAITING",
};

/* Return the upper-case name of a state (a static string). */
const char *
job_state_name(enum job_state s)
{
	if ((unsigned int)s >= JOB_STATE_COUNT)
		return ("UNKNOWN");
	return (job_state_names[s]);
}

/* Parse a state name, in any case.  Return the state, or -1. */
int
job_state_parse(const char *s)
{
	int i;

	for (i = 0; i < JOB_STATE_COUNT; i++) {
		if (strcasecmp(s, job_state_names[i]) == 0)
			return (i);
	}
	return (-1);
}

/*
 * Return 1 if an instance in this state has (or is about to have) processes
 * or a pending start: it holds its lock and counts as wanted.
 */
int
job_state_is_active(enum job_state s)
{
	switch (s) {
	case JOB_STARTING:
	case JOB_RUNNING:
	case JOB_BACKOFF:
	case JOB_STOPPING:
	case JOB_BLOCKED:
		return (1);
	default:
		return (0);
	}
}

static int
job_run_succeeded(const struct job_spec *spec, const struct job_outcome *o)
{
	if (o->exec_failed || !WIFEXITED(o->status))
		return (0);
	return (job_spec_is_success(spec, WEXITSTATUS(o->status)));
}

static int
job_wants_restart(const struct job_spec *spec, int success)
{
	switch (spec->restart) {
	case CONF_RESTART_ALWAYS:
		return (1);
	case CONF_RESTART_ON_FAILURE:
		return (!success);
	case CONF_RESTART_NEVER:
	default:
		return (0);
	}
}

/*
 * Decide what follows the end of a run.  A run that ends while a stop was
 * requested leads to STOPPED.  A run shorter than min_uptime (or one that
 * never reached exec, or never sent READY=1) is a failed start: the count of consecutive failed
 * starts grows and the restart waits backoff_next(); a longer run resets the
 * count and restarts at once.  With max_restarts = N > 0, the job turns
 * FATAL once a failed start would need restart number N + 1; with
 * start_limit, once it is the Nth in the interval (the caller counts the
 * window: limit_reached).  rnd feeds the
 * jitter.  The restart policy decides between a restart and EXITED.
 * A periodic job waits for its next slot (WAITING), whatever happened; so
 * does a queue job's slot for its next message.
 */
void
job_decide(const struct job_spec *spec, const struct job_outcome *o,
    uint32_t rnd, struct job_decision *d)
{
	struct backoff b;

	/* A run stopped for a late READY=1 or WATCHDOG=1 has failed. */
	d->success =
	    job_run_succeeded(spec, o) && !o->never_ready && !o->watchdog;
	d->failed_start =
	    o->exec_failed || o->never_ready || o->uptime < spec->min_uptime;
	d->failures = d->failed_start ? o->failures + 1 : 0;
	d->delay = 0;

	if (o->stop_requested) {
		d->state = JOB_STOPPED;
		d->failures = 0;
		return;
	}
	/*
	 * A periodic job never restarts, never gives up: the next slot.  A
	 * queue slot is free for the next message (the message's own fate,
	 * retry or dead list, is decided by the dispatcher).
	 */
	if (spec->kind == CONF_KIND_PERIODIC || spec->kind == CONF_KIND_QUEUE) {
		d->state = JOB_WAITING;
		d->failures = 0;
		return;
	}
	if (!job_wants_restart(spec, d->success)) {
		d->state = JOB_EXITED;
		return;
	}
	if (d->failed_start && spec->max_restarts > 0 &&
	    d->failures > (unsigned int)spec->max_restarts) {
		d->state = JOB_FATAL;
		return;
	}
	/* start_limit: the Nth failed start within its interval. */
	if (d->failed_start && o->limit_reached) {
		d->state = JOB_FATAL;
		return;
	}
	if (!d->failed_start) {
		d->state = JOB_STARTING;
		return;
	}
	b.base = spec->restart_delay;
	b.max = spec->restart_delay_max;
	d->delay = backoff_next(&b, d->failures, rnd);
	d->state = d->delay > 0 ? JOB_BACKOFF : JOB_STARTING;
}

/*
 * The one wording of how a process ended, for everything users see:
 * "exit 3" (code >= 0), "signal KILL" (sig > 0, " (core dumped)" when
 * core), or "-" when neither is known.  Into buf, which is returned.
 */
char *
job_exit_format(int code, int sig, int core, char *buf, size_t len)
{
	const char *name;
	const char *dumped = core ? " (core dumped)" : "";

	if (code >= 0)
		snprintf(buf, len, "exit %d", code);
	else if (sig > 0 && (name = signame_name(sig)) != NULL)
		snprintf(buf, len, "signal %s%s", name, dumped);
	else if (sig > 0)
		snprintf(buf, len, "signal %d%s", sig, dumped);
	else
		snprintf(buf, len, "-");
	return (buf);
}

/* A wait(2) status in job_exit_format's words, into buf. */
char *
job_exit_describe(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		return (job_exit_format(WEXITSTATUS(status), -1, 0, buf, len));
	if (WIFSIGNALED(status))
		return (job_exit_format(
		    -1, WTERMSIG(status), WCOREDUMP(status), buf, len));
	snprintf(buf, len, "status %#x", status);
	return (buf);
}
