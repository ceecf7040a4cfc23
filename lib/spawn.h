/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Start one job instance: fork, then in the child set the parent-death
 * signal, a new session, send the announcement if there is one, set
 * stdio, the lock descriptor, limits, credentials, directory and a clean
 * environment, and exec.  A failure before exec
 * travels back to the parent as text through a close-on-exec pipe.
 */

#ifndef VIGIL_SPAWN_H
#define VIGIL_SPAWN_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

struct job_spec;

/*
 * A datagram the child sends after setsid() and before anything of the
 * job runs: its pid (an int32_t written at pid_off in buf) told to a
 * watcher that must know every run before it can make a process of its
 * own (vigild's fence keeper), with pass_fd along (SCM_RIGHTS) when not
 * -1.  fd > 0: send it; a failure to send fails the start.
 */
struct spawn_announce {
	int fd;
	void *buf;
	size_t len;
	size_t pid_off;
	int pass_fd;
};

struct spawn_request {
	const struct job_spec *spec;
	int instance;
	const char *run_id;
	char *const *extra_env; /* more "KEY=value", NULL-terminated, or NULL */
	int lock_fd;            /* passed to the child as fd 3, or -1 */
	int stdin_fd;           /* > 0: the child's stdin; else /dev/null */
	int stdout_fd;          /* -1: inherit vigild's */
	int stderr_fd;          /* -1: inherit vigild's */
	int cgroup_fd;          /* > 0: the cgroup (a directory) it runs in */
	char *const *argv; /* what to exec instead of spec->argv, or NULL */
	struct spawn_announce announce; /* fd 0: none */
};

struct spawn_result {
	pid_t pid;
	uint64_t starttime; /* the child's /proc start time, 0: unknown */
	int done;           /* the outcome is known: */
	char *cause;        /* NULL: exec'd; else why the child exits 127 */
	int report_fd;      /* not done: EOF = exec done, text = failure */
};

void spawn_init(void);
int spawn_start(const struct spawn_request *, struct spawn_result *, char **);
int spawn_report_read(int, char **);
int spawn_command_check(const struct job_spec *, char **);

#endif
