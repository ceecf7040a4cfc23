/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * A run's processes without a cgroup (`cgroup = "off"`, or none usable):
 * its lineage.  Seeds are the session and process group vigild gave the
 * run at spawn, the processes found the run's before (by pid and start
 * time), and the orphans handed to vigild (the subreaper) that keep the
 * run's lock or were born during the run with its VIGIL_RUN_ID; then
 * every descendant of a seed.  Never vigild, init, a zombie, or what the
 * caller says is another's.  run.c signals and waits for them.
 */

#include "config.h"

#include <sys/types.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "jobs.h"
#include "lineage.h"
#include "lock.h"
#include "log.h"
#include "proc.h"
#include "xmalloc.h"

/*
 * Is p the run of in's by itself: in the session or group the run was
 * given at spawn, found the run's before (same pid, same start), or an
 * orphan handed to vigild that holds the instance's lock or was born
 * during the run with its VIGIL_RUN_ID (a process can only claim to be
 * the run's, which exposes nothing but itself to the run's signals)?
 */
static int
lineage_seed(const struct inst *in, const struct proc_info *p)
{
	char entry[64];
	pid_t s = in->run.pgid;
	size_t i;

	if (s > 1 && (p->sid == s || p->pgid == s))
		return (1);
	for (i = 0; i < in->run.nlineage; i++)
		if (in->run.lineage[i].pid == p->pid &&
		    in->run.lineage[i].starttime == p->starttime)
			return (1);
	if (p->ppid != getpid())
		return (0);
	if (in->lock_fd != -1 && lock_pid_holds(p->pid, in->lock_fd))
		return (1);
	/* Born during the run, with the run's id: a reparented orphan. */
	if (in->run.born == 0 || p->starttime < in->run.born)
		return (0);
	snprintf(entry, sizeof(entry), "VIGIL_RUN_ID=%s", in->run.id);
	return (proc_environ_has(p->pid, entry));
}

/*
 * Is p never the run of in's: vigild, init, a zombie, or what other says
 * is another's (a hook, a probe, another run: the caller knows them)?
 */
static int
lineage_never(
    const struct inst *in, const struct proc_info *p, lineage_other_fn other)
{
	if (p->pid <= 1 || p->pid == getpid() || p->state == 'Z')
		return (1);
	return (other != NULL && other(in, p->pid, p->sid));
}

/* Mark the descendants of marked processes, to the last generation. */
static void
lineage_descend(struct proc_snapshot *ps, unsigned char *mark)
{
	struct proc_info *parent;
	size_t i;
	int more;

	do {
		more = 0;
		for (i = 0; i < ps->n; i++) {
			if (mark[i] != 0 ||
			    (parent = proc_snapshot_find(
			         ps, ps->procs[i].ppid)) == NULL ||
			    mark[parent - ps->procs] != 1)
				continue;
			mark[i] = 1;
			more = 1;
		}
	} while (more);
}

/*
 * Find the run's processes now (see the top of the file), kept in in->run.lineage, and return how many there are.  The
 * leader's session and group ids are the kernel's until their last
 * member is gone; a process found once stays the run's while it lives,
 * reparented or not.  other(in, pid, sid) says which processes are
 * another's (never the run's).  When /proc cannot be read, the last
 * count stands.
 */
size_t
lineage_find(struct inst *in, lineage_other_fn other)
{
	struct proc_snapshot ps;
	unsigned char *mark;
	size_t i, n = 0;

	if (proc_snapshot(&ps) == -1) {
		log_warn("%s: read /proc", in->label);
		proc_snapshot_clear(&ps);
		return (in->run.nlineage);
	}
	mark = xcalloc(ps.n + 1, 1);
	for (i = 0; i < ps.n; i++) {
		if (lineage_never(in, &ps.procs[i], other))
			mark[i] = 2; /* never */
		else if (lineage_seed(in, &ps.procs[i]))
			mark[i] = 1;
	}
	lineage_descend(&ps, mark);
	for (i = 0; i < ps.n; i++)
		if (mark[i] == 1)
			ps.procs[n++] = ps.procs[i];
	free(mark);
	free(in->run.lineage);
	in->run.lineage = NULL;
	in->run.nlineage = n;
	if (n > 0)
		in->run.lineage = xreallocarray(ps.procs, n, sizeof(*ps.procs));
	else
		free(ps.procs);
	return (n);
}

/*
 * Without a cgroup: send sig to each of the run's processes as the last
 * lineage_find found them, but those of group skip, signalled already
 * (each still the same process: pid and start time).  Return how many
 * were signalled.
 */
int
lineage_signal(struct inst *in, int sig, pid_t skip)
{
	size_t i;
	int n = 0;

	for (i = 0; i < in->run.nlineage; i++) {
		if (in->run.lineage[i].pgid == skip ||
		    !proc_is_same(
		        in->run.lineage[i].pid, in->run.lineage[i].starttime))
			continue;
		if (kill(in->run.lineage[i].pid, sig) == 0)
			n++;
		else if (errno != ESRCH)
			log_warn("%s: kill %ld", in->label,
			    (long)in->run.lineage[i].pid);
	}
	return (n);
}

/* The run is over: forget its processes. */
void
lineage_clear(struct inst *in)
{
	free(in->run.lineage);
	in->run.lineage = NULL;
	in->run.nlineage = 0;
}
