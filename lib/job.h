/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Job policy: the states an instance goes through and the decision taken
 * when a run ends ("restart now, later, or never?").  No system calls, no
 * clock: callers pass numbers in and apply the decision.
 */

#ifndef VIGIL_JOB_H
#define VIGIL_JOB_H

#include <stddef.h>
#include <stdint.h>

struct job_spec;

enum job_state {
	JOB_STOPPED = 0,
	JOB_STARTING,
	JOB_RUNNING,
	JOB_BACKOFF,
	JOB_STOPPING,
	JOB_EXITED,
	JOB_FATAL,
	JOB_BLOCKED,
	JOB_WAITING, /* periodic: between runs, its next slot armed */
	JOB_STATE_COUNT,
};

/* How a run ended, as seen by the supervisor. */
struct job_outcome {
	int exec_failed;       /* the child never reached exec */
	int status;            /* wait(2) status when !exec_failed */
	uint64_t uptime;       /* microseconds from fork to exit */
	unsigned int failures; /* consecutive failed starts before this run */
	int stop_requested;    /* an operator or shutdown stop was under way */
	int never_ready;       /* ready = "notify" and no READY=1 came */
	int watchdog;          /* stopped by the watchdog: a failure */
	int limit_reached;     /* start_limit: N - 1 failed in its window */
};

/* What to do next. */
struct job_decision {
	enum job_state state;  /* STOPPED, STARTING, BACKOFF, EXITED, FATAL,
	                          WAITING */
	unsigned int failures; /* new count of consecutive failed starts */
	uint64_t delay;        /* with BACKOFF: microseconds until restart */
	int success;           /* the run counts as a success */
	int failed_start;      /* the run was shorter than min_uptime */
};

const char *job_state_name(enum job_state);
int job_state_parse(const char *);
int job_state_is_active(enum job_state);
void job_decide(const struct job_spec *, const struct job_outcome *, uint32_t,
    struct job_decision *);
char *job_exit_format(int, int, int, char *, size_t);
char *job_exit_describe(int, char *, size_t);

#endif
