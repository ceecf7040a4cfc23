/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * cgroup v2, the file operations: where the hierarchy is and where vigild
 * sits in it, making and removing a cgroup, moving a process in, whether
 * anything is left in it (cgroup.events), signalling or killing all of
 * it, and what it uses (cpu.stat, memory.current, pids.current).  Every
 * call works on directory descriptors; nothing here logs or keeps state.
 */

#ifndef VIGIL_CGROUP_H
#define VIGIL_CGROUP_H

#include <sys/types.h>

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* Where the cgroup2 hierarchy is, and vigild's own cgroup in it. */
struct cgroup_where {
	char mount[PATH_MAX]; /* the cgroup2 mount point */
	char self[PATH_MAX];  /* vigild's cgroup, a path under mount */
	int is_root;          /* self is the hierarchy's root */
	int delegated;        /* self was delegated (trusted.delegate) */
};

/* What a cgroup uses; a figure not known is UINT64_MAX. */
struct cgroup_usage {
	uint64_t cpu_usec;     /* cpu.stat usage_usec */
	uint64_t memory_bytes; /* memory.current, else the members' RSS */
	uint64_t tasks;        /* pids.current, else the processes */
};

/*
 * The usage files of one cgroup, kept open between reads (a scrape reads
 * them for every instance): each -1 until first opened, -2 when the file
 * is not there (its controller is off).
 */
struct cgroup_files {
	int cpu;         /* cpu.stat */
	int memory;      /* memory.current */
	int pids;        /* pids.current */
	int procs;       /* cgroup.procs, where one of those two is not */
	int statm;       /* /proc/PID/statm of the first of the processes */
	pid_t statm_pid; /* that PID */
};
#define CGROUP_FILES_INIT                                                      \
	{                                                                      \
		-1, -1, -1, -1, -1, 0                                          \
	}

int cgroup_mount_parse(const char *, char *, size_t, char *, size_t);
int cgroup_self_parse(const char *, char *, size_t);
int cgroup_find(struct cgroup_where *, char **);
int cgroup_open(int, const char *, int);
int cgroup_remove(int, const char *);
int cgroup_write(int, const char *, const char *);
int cgroup_move(int, pid_t);
int cgroup_populated(int);
int cgroup_pids(int, pid_t **, size_t *);
int cgroup_signal(int, int);
int cgroup_kill(int);
int cgroup_usage(int, struct cgroup_files *, struct cgroup_usage *);
void cgroup_files_close(struct cgroup_files *);
uint64_t cgroup_oom_kills(int);
int cgroup_lists(int, const char *, const char *);

#endif
