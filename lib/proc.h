/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Facts about processes from /proc and kill(2): start times (to tell a
 * process from a later one that reused its pid) and process group liveness.
 */

#ifndef VIGIL_PROC_H
#define VIGIL_PROC_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

/* One process as /proc/PID/stat shows it. */
struct proc_info {
	pid_t pid, ppid, pgid, sid;
	uint64_t starttime; /* clock ticks since boot */
	char state;         /* 'Z': a zombie */
};

/* Every process at one moment, sorted by pid. */
struct proc_snapshot {
	struct proc_info *procs;
	size_t n, cap;
};

int proc_starttime(pid_t, uint64_t *);
int proc_pgid(pid_t, pid_t *);
int proc_ppid(pid_t, pid_t *);
int proc_sid(pid_t, pid_t *);
int proc_uids(pid_t, uid_t *, uid_t *);
int proc_environ_has(pid_t, const char *);
int proc_each(int (*)(pid_t, void *), void *);
int proc_snapshot(struct proc_snapshot *);
struct proc_info *proc_snapshot_find(const struct proc_snapshot *, pid_t);
void proc_snapshot_clear(struct proc_snapshot *);
const char *proc_describe(pid_t, char *, size_t);
uint64_t proc_boot_ticks(void);
int proc_is_same(pid_t, uint64_t);
int proc_group_exists(pid_t);
int proc_group_signal(pid_t, int);

#endif
