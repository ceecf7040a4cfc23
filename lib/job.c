/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The policy half of supervision.  job_decide() turns the end of a run into
 * the next state; supervise.c applies it (timers, spawn, records).  Keeping
 * this pure lets the unit tests walk every branch.
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
 * FATAL once a failed start would need restart number N + 1.  rnd feeds the
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
 * Describe a wait(2) status as "exit 0", "exit 3" or "signal KILL" (with
 * " (core dumped)" when it did) into buf, and return buf.
 */
char *
job_exit_describe(int status, char *buf, size_t len)
{
	const char *name;

	if (WIFEXITED(status))
		snprintf(buf, len, "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status)) {
		name = signame_name(WTERMSIG(status));
		if (name != NULL)
			snprintf(buf, len, "signal %s%s", name,
			    WCOREDUMP(status) ? " (core dumped)" : "");
		else
			snprintf(buf, len, "signal %d%s", WTERMSIG(status),
			    WCOREDUMP(status) ? " (core dumped)" : "");
	} else
		snprintf(buf, len, "status %#x", status);
	return (buf);
}
