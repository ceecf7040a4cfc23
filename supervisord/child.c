/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The registry of vigild's children (child.h) and the one place that
 * reaps them.  vigild is a subreaper: it also reaps what a run leaves
 * behind, orphans no one registered; those are only logged.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/tree.h>
#include <sys/wait.h>

#include <errno.h>

#include "child.h"
#include "log.h"

static int
child_cmp(struct child *a, struct child *b)
{
	return (a->pid < b->pid ? -1 : a->pid > b->pid);
}

RB_HEAD(child_tree, child);
RB_PROTOTYPE(child_tree, child, entry, child_cmp)
RB_GENERATE(child_tree, child, entry, child_cmp)

static struct child_tree children = RB_INITIALIZER(&children);

/* c is pid now, of kind; reaped(c, status) once it is reaped. */
void
child_watch(
    struct child *c, pid_t pid, enum child_kind kind, child_reaped_fn *reaped)
{
	child_unwatch(c);
	c->pid = pid;
	c->kind = kind;
	c->reaped = reaped;
	RB_INSERT(child_tree, &children, c);
}

/* c is no longer waited for (its reap, if it comes, is an orphan's). */
void
child_unwatch(struct child *c)
{
	if (c->pid == 0)
		return;
	RB_REMOVE(child_tree, &children, c);
	c->pid = 0;
}

/* The child registered as pid, or NULL. */
struct child *
child_find(pid_t pid)
{
	struct child key = { .pid = pid };

	if (pid <= 0)
		return (NULL);
	return (RB_FIND(child_tree, &children, &key));
}

/*
 * SIGCHLD: reap the children that have exited, ours or reparented, at
 * most max of them: 1 if the batch was full (more may be waiting), else
 * 0.  A reap can start the next run at once, and on a busy machine each
 * fork takes long enough for another child to end meanwhile: without a
 * bound, crash-looping jobs would keep vigild here for good.
 */
int
child_reap_all(size_t max)
{
	struct child *c;
	pid_t pid;
	size_t n = 0;
	int status;

	while (n < max) {
		pid = waitpid(-1, &status, WNOHANG);
		if (pid == -1 && errno == EINTR)
			continue;
		if (pid <= 0)
			break;
		n++;
		if ((c = child_find(pid)) == NULL) {
			log_debug("reaped pid %ld (not a child vigild waits "
			          "for)",
			    (long)pid);
			continue;
		}
		child_unwatch(c);
		c->reaped(c, pid, status);
	}
	return (n == max);
}
