/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The words of the lifecycle (life.c): phase and event names for logs and
 * tests, the job state a phase shows, and the event each timer brings.
 */

#include "config.h"

#include <stddef.h>

#include "life.h"

/* clang-format off */
static const char *const life_phase_names[LIFE_PHASE_COUNT] = {
	"stopped", "exited", "fatal", "waiting", "deps", "lockwait",
	"spawned", "running", "backoff", "drain", "term", "kill", "reclaim",
	"reclaim-kill", "foreign", "lease",
};

static const char *const life_event_names[LIFE_EV_COUNT] = {
	"start", "stop", "deps-wait", "deps-ok", "lock-ok", "lock-leftover",
	"lock-foreign", "lock-error", "msg", "spawned", "spawn-failed",
	"exec-ok", "exec-failed", "ready", "exit", "group-gone",
	"backoff-done", "ready-timeout", "stop-timeout", "kill-poll",
	"drain-timeout", "recheck", "watchdog", "timeout", "slot", "arm",
	"mainpid", "unhealthy", "lock-wait", "fence", "reaped",
	"step-timeout", "pidwait", "no-daemon", "step-failed",
};

static const char *const life_stage_names[] = {
	"none", "pre", "main", "pidwait", "post",
};
/* clang-format on */

/* The state users see for a phase. */
enum job_state
life_state(enum life_phase ph)
{
	static const enum job_state map[LIFE_PHASE_COUNT] = {
		[LIFE_STOPPED] = JOB_STOPPED,
		[LIFE_EXITED] = JOB_EXITED,
		[LIFE_FATAL] = JOB_FATAL,
		[LIFE_WAITING] = JOB_WAITING,
		[LIFE_DEPS] = JOB_STARTING,
		[LIFE_LOCKWAIT] = JOB_STARTING,
		[LIFE_SPAWNED] = JOB_STARTING,
		[LIFE_RUNNING] = JOB_RUNNING,
		[LIFE_BACKOFF] = JOB_BACKOFF,
		[LIFE_DRAIN] = JOB_STOPPING,
		[LIFE_TERM] = JOB_STOPPING,
		[LIFE_KILL] = JOB_STOPPING,
		[LIFE_RECLAIM] = JOB_BLOCKED,
		[LIFE_RECLAIM_KILL] = JOB_BLOCKED,
		[LIFE_FOREIGN] = JOB_BLOCKED,
		[LIFE_LEASE] = JOB_STARTING,
	};

	return ((unsigned int)ph < LIFE_PHASE_COUNT ? map[ph] : JOB_STOPPED);
}

/* A short name of a phase, for debug logs and tests. */
const char *
life_phase_name(enum life_phase ph)
{
	return (
	    (unsigned int)ph < LIFE_PHASE_COUNT ? life_phase_names[ph] : "?");
}

/* A short name of an event, for debug logs and tests. */
const char *
life_event_name(enum life_event ev)
{
	return ((unsigned int)ev < LIFE_EV_COUNT ? life_event_names[ev] : "?");
}

/* A short name of a stage, for debug logs and tests. */
const char *
life_stage_name(enum life_stage st)
{
	return (
	    (unsigned int)st <= LIFE_STAGE_POST ? life_stage_names[st] : "?");
}

/* The event a timer armed for t brings when it fires. */
enum life_event
life_timer_event(enum life_timer t)
{
	switch (t) {
	case LIFE_TIMER_BACKOFF:
		return (LIFE_EV_BACKOFF_DONE);
	case LIFE_TIMER_READY:
		return (LIFE_EV_READY_TIMEOUT);
	case LIFE_TIMER_STOP:
		return (LIFE_EV_STOP_TIMEOUT);
	case LIFE_TIMER_KILL:
		return (LIFE_EV_KILL_POLL);
	case LIFE_TIMER_DRAIN:
		return (LIFE_EV_DRAIN_TIMEOUT);
	case LIFE_TIMER_STEP:
		return (LIFE_EV_STEP_TIMEOUT);
	case LIFE_TIMER_PIDWAIT:
		return (LIFE_EV_PIDWAIT);
	default:
		return (LIFE_EV_RECHECK);
	}
}
