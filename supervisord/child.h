/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

#ifndef VIGIL_CHILD_H
#define VIGIL_CHILD_H

#include <sys/types.h>
#include <sys/tree.h>

#include <stddef.h>

/*
 * The children vigild waits for, by pid: every kind registers here (a
 * run's leader, an exec: probe, an exec_start_post, a hook, the fence
 * keeper), and one SIGCHLD path (child_reap_all) hands each reaped child
 * to its owner.  The entry lives in the owner's own structure: no
 * allocation.
 */
enum child_kind {
	CHILD_RUN,    /* the leader of an instance's run (run.c) */
	CHILD_PROBE,  /* an exec: probe (prober.c) */
	CHILD_POST,   /* an exec_start_post, of its run's lineage */
	CHILD_HOOK,   /* on_failure, on_event (hook.c) */
	CHILD_KEEPER, /* the fence keeper (keeper.c) */
};

struct child;
typedef void child_reaped_fn(struct child *, pid_t, int);

struct child {
	pid_t pid; /* 0: not watched */
	enum child_kind kind;
	child_reaped_fn *reaped; /* (c, pid, status) once reaped, unwatched */
	RB_ENTRY(child) entry;
};

/* The structure of type whose member c is. */
#define child_owner(c, type, member)                                           \
	((type *)(void *)((char *)(c)-offsetof(type, member)))

void child_watch(struct child *, pid_t, enum child_kind, child_reaped_fn *);
void child_unwatch(struct child *);
struct child *child_find(pid_t);
int child_reap_all(size_t);

#endif
