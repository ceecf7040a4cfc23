/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * vigild's global state: its loop, configuration, directories, the jobs
 * (struct job, jobs.h) by name, and the counts of their instances.
 * What each layer offers the others is in its own header: jobs.h (jobs
 * and their instances at run time), inst.h (the instance layer and its
 * seams), effects.h (the modules that carry the lifecycle's actions
 * out), state.h, cluster.h, cmd.h, server.h, daemon.h.  The map of who
 * calls whom is in docs/architecture.md (contrib/modgraph.py).
 */

#ifndef VIGILD_H
#define VIGILD_H

#include <bsd/sys/tree.h>
#include <stddef.h>

#include "job.h"

struct broken_job;
struct conf;
struct job;

RB_HEAD(job_tree, job);
RB_PROTOTYPE(job_tree, job, entry, job_cmp)

/* vigild's global state. */
struct vigild {
	struct conf *conf;
	const char *jobs_dir;
	const char *runtime_dir;
	const char *state_dir;
	const char *log_dir;
	/* The directories, opened and checked at start (lib/safedir.c). */
	int runtime_dirfd;
	int locks_dirfd; /* RUNTIME/locks */
	int state_dirfd; /* -1: no state dir, vigild goes on without it */
	int log_dirfd;
	struct job_tree jobs;
	size_t njobs;
	struct broken_job *broken; /* job files with errors, sorted by name */
	size_t nbroken;
	size_t nactive;                 /* instances in an active state */
	size_t nstate[JOB_STATE_COUNT]; /* instances in each state */
	int under_systemd;              /* NOTIFY_SOCKET was set */
	int shutting_down;
	int started; /* the jobs were started: catch_up is over */
	int exit_code;
	int lock_fd;
};

extern struct vigild vigild;

#endif
