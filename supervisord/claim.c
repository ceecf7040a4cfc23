/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Exclusivity: an instance runs only while it holds its claim.  The seam
 * is struct claim_ops (acquire, renew, release, who holds it); the one
 * backend today, claim_local, is an OFD lock on RUNTIME/locks/LABEL.lock
 * with a holder record in LABEL.holder that only vigild writes (never
 * given to a job, so that no job can name a victim).  A cluster lease
 * becomes a second backend, taken before the local one.
 *
 * What a held claim means is decided by the lifecycle (lib/life.c, rows
 * RECLAIM and FOREIGN): a proven leftover of an earlier vigild is stopped
 * (claim_leftover_term/kill); anything else is only named and waited for.
 */

#include "config.h"

#include <sys/types.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"
#include "effects.h"
#include "inst.h"
#include "jobs.h"
#include "log.h"
#include "proc.h"
#include "signame.h"
#include "vigild.h"
#include "xmalloc.h"

/* The instance's lock file (suffix ".lock") or record (".holder"). */
static char *
claim_path(const struct inst *in, const char *suffix)
{
	char *path;

	xasprintf(
	    &path, "%s/locks/%s%s", vigild.runtime_dir, in->label, suffix);
	return (path);
}

/* A message for a lock or record file that failed to open. */
static void
claim_cause(char **cause, const char *what, const char *path)
{
	if (errno == EPERM)
		xasprintf(cause, "%s %s: not a regular file of vigild's user",
		    what, path);
	else
		xasprintf(cause, "%s %s: %s", what, path, strerror(errno));
}

/*
 * Open the lock and the record and try the lock.  Return the lock's
 * descriptor (held, or r->fd set when another description holds it: our
 * own, to find out who), or -1 with r->cause.
 */
static int
claim_local_try(struct inst *in, struct claim_result *r)
{
	char *path = claim_path(in, ".lock"),
	     *rpath = claim_path(in, ".holder");
	int fd;

	if ((fd = lock_open(path)) == -1)
		claim_cause(&r->cause, "open", path);
	else if (in->record_fd == -1 &&
	    (in->record_fd = lock_record_open(rpath)) == -1)
		claim_cause(&r->cause, "open", rpath);
	else if (lock_try(fd) == -1) {
		if (errno == EAGAIN)
			r->fd = fd;
		else
			claim_cause(&r->cause, "lock", path);
	} else if (lock_holder_clear(in->record_fd) == -1)
		claim_cause(&r->cause, "write", rpath);
	free(path);
	free(rpath);
	if (r->cause != NULL && fd != -1) {
		close(fd);
		fd = -1;
	}
	return (fd);
}

/*
 * The lock is held by another description: by a proven leftover of a
 * vigild (the record names its group and the kernel shows a member of it
 * holding the lock), or by something vigild cannot vouch for.
 */
static enum claim_status
claim_local_who(struct inst *in, struct claim_result *r)
{
	struct lock_holder h;

	if (lock_holder_read(in->record_fd, &h) == 0 &&
	    lock_holder_check(&h, r->fd, &r->holder) != LOCK_HOLDER_GONE) {
		r->same = in->leftover.pid == h.pid &&
		    in->leftover.starttime == h.starttime;
		in->leftover = h;
		return (CLAIM_LEFTOVER);
	}
	return (CLAIM_FOREIGN);
}

/*
 * Is something left in the instance's cgroup?  Only vigild puts processes
 * there, and an instance's cgroup is empty once its run is over: what is
 * left is a run of a vigild that died (a process that left its session,
 * or one that closed its lock).  Nothing starts while it is there; it is
 * reclaimed through the cgroup.  Return 1 with r and leftover filled.
 */
static int
claim_cgroup_leftover(struct inst *in, struct claim_result *r)
{
	char *cause = NULL;
	pid_t *pids;
	size_t n;
	uint64_t start;

	if (!track_enabled())
		return (0);
	if (track_prepare(in, &cause) <= 0) {
		free(cause);
		return (0);
	}
	if (!track_populated(in) || track_members(in, &pids, &n) == -1)
		return (0);
	if (n == 0) {
		free(pids);
		return (0);
	}
	if (proc_starttime(pids[0], &start) == -1)
		start = 0;
	r->holder = pids[0];
	r->same = in->leftover.vigild == -1 && in->leftover.pid == pids[0] &&
	    in->leftover.starttime == start;
	memset(&in->leftover, 0, sizeof(in->leftover));
	in->leftover.pid = pids[0];
	in->leftover.starttime = start;
	in->leftover.vigild = -1; /* known by its cgroup, not a record */
	free(pids);
	return (1);
}

/*
 * Take the instance's lock.  lock_fd is set only while the lock is held:
 * no lock, no run.
 */
static enum claim_status
claim_local_acquire(struct inst *in, struct claim_result *r)
{
	int fd;

	if (in->lock_fd != -1)
		return (CLAIM_TAKEN);
	if (claim_cgroup_leftover(in, r))
		return (CLAIM_LEFTOVER);
	fd = claim_local_try(in, r);
	if (r->cause != NULL)
		return (CLAIM_ERROR);
	if (r->fd != -1)
		return (claim_local_who(in, r));
	/* Whatever an earlier run wrote into the file is of no use. */
	(void)ftruncate(fd, 0);
	in->lock_fd = fd;
	return (CLAIM_TAKEN);
}

/* Record the run that holds the lock now (a spawn, a MAINPID= move). */
static void
claim_local_renew(struct inst *in, const struct lock_holder *h)
{
	if (lock_holder_write(in->record_fd, h) == -1)
		log_warn("%s: write lock record", in->label);
}

/* Give up the instance's lock: clear our record and close both files. */
static void
claim_local_release(struct inst *in)
{
	if (in->record_fd != -1) {
		if (in->lock_fd != -1)
			(void)lock_holder_clear(in->record_fd);
		close(in->record_fd);
		in->record_fd = -1;
	}
	if (in->lock_fd == -1)
		return;
	close(in->lock_fd);
	in->lock_fd = -1;
}

/* Who holds the lock of our description fd: a pid, or 0. */
static pid_t
claim_local_holder(struct inst *in, int fd)
{
	return (lock_find_holder(fd));
}

/* Is name "JOB.lock" or "JOB@N.lock" for job j? */
static int
claim_is_lock_of(const struct job *j, const char *name)
{
	size_t len = strlen(j->name);
	const char *p = name + len;

	if (strncmp(name, j->name, len) != 0)
		return (0);
	if (*p == '@') {
		if (!isdigit((unsigned char)*++p))
			return (0);
		while (isdigit((unsigned char)*p))
			p++;
	}
	return (strcmp(p, ".lock") == 0);
}

/* Is lock file name held by one of j's instances? */
static int
claim_is_ours(const struct job *j, const char *name)
{
	size_t len;
	int i;

	for (i = 0; i < j->ninsts; i++) {
		len = strlen(j->insts[i]->label);
		if (j->insts[i]->lock_fd != -1 &&
		    strncmp(name, j->insts[i]->label, len) == 0 &&
		    strcmp(name + len, ".lock") == 0)
			return (1);
	}
	return (0);
}

/*
 * Is a lock of the job held by something other than its instances: a
 * leftover run in an instance that is stopped now, or one past a lowered
 * number of instances?
 */
static int
claim_local_held_elsewhere(const struct job *j)
{
	char dir[PATH_MAX], path[PATH_MAX * 2];
	struct dirent *de;
	DIR *d;
	int held = 0, fd;

	snprintf(dir, sizeof(dir), "%s/locks", vigild.runtime_dir);
	if ((d = opendir(dir)) == NULL)
		return (0);
	while (!held && (de = readdir(d)) != NULL) {
		if (!claim_is_lock_of(j, de->d_name) ||
		    claim_is_ours(j, de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if ((fd = lock_open(path)) == -1)
			continue;
		/* Taken here for a moment, the lock goes with the close. */
		if (lock_try(fd) == -1 && errno == EAGAIN) {
			log_warnx("%s: %s is held by a process this vigild did "
			          "not start",
			    j->name, path);
			held = 1;
		}
		close(fd);
	}
	closedir(d);
	return (held);
}

const struct claim_ops claim_local = {
	.name = "local",
	.acquire = claim_local_acquire,
	.renew = claim_local_renew,
	.release = claim_local_release,
	.holder = claim_local_holder,
	.held_elsewhere = claim_local_held_elsewhere,
};

/* The backend of an instance's claim. */
static const struct claim_ops *
claim_of(const struct inst *in)
{
	if (in->job->spec->cluster && cluster_enabled())
		return (in->job->spec->kind == CONF_KIND_QUEUE ?
		        &claim_cluster_msg :
		        &claim_cluster);
	return (&claim_local);
}

/* Take the instance's claim, or find out who has it (into *r). */
enum claim_status
claim_take(struct inst *in, struct claim_result *r)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	return (claim_of(in)->acquire(in, r));
}

void
claim_result_clear(struct claim_result *r)
{
	if (r->fd != -1)
		close(r->fd);
	r->fd = -1;
	free(r->cause);
	r->cause = NULL;
}

/* Record the run now holding the claim. */
void
claim_record(struct inst *in, const struct lock_holder *h)
{
	claim_of(in)->renew(in, h);
}

/* Give the claim up (nothing happens when it is not held). */
void
claim_release(struct inst *in)
{
	claim_of(in)->release(in);
}

/*
 * The run failed here (a cluster service handing over): the release
 * that follows says so.
 */
void
claim_failed(struct inst *in)
{
	const struct claim_ops *ops = claim_of(in);

	if (ops->failed != NULL)
		ops->failed(in);
}

/*
 * May a run start on the claim the instance holds?  A restart keeps its
 * claim without taking it again: a cluster lease may have stopped being
 * trusted meanwhile (its fence not run yet).  1, or 0 with *cause.
 */
int
claim_trusted(struct inst *in, char **cause)
{
	const struct claim_ops *ops = claim_of(in);

	return (ops->trusted == NULL || ops->trusted(in, cause));
}

/*
 * Before a spawn on the claim held (cg_fd: the run's cgroup, or -1):
 * what the child tells its backend before it execs, if anything.
 */
void
claim_announce(struct inst *in, int cg_fd, struct spawn_announce *a)
{
	const struct claim_ops *ops = claim_of(in);

	if (ops->announce != NULL)
		ops->announce(in, cg_fd, a);
}

/* Is a claim of job j held outside its instances? */
int
claim_held_elsewhere(const struct job *j)
{
	return (claim_local.held_elsewhere(j));
}

/* LIFE_A_LEFTOVER_TERM: stop_signal to the proven leftover's group. */
void
claim_leftover_term(struct inst *in, pid_t holder)
{
	const struct lock_holder *h = &in->leftover;
	int sig = in->job->spec->stop_signal;
	char who[128];

	if (h->vigild == -1) {
		proc_describe(holder, who, sizeof(who));
		log_warnx("%s: its cgroup holds pid %s, left by an earlier "
		          "vigild; reclaiming: sending %s",
		    in->label, who, signame_name(sig));
		inst_reason(
		    in, "leftover pid %s in its cgroup; reclaiming", who);
		track_signal(in, sig);
		if (sig != SIGKILL && sig != SIGCONT)
			track_signal(in, SIGCONT);
		return;
	}
	log_warnx("%s: lock held by leftover pid %ld (group %ld) of vigild "
	          "%ld; reclaiming: sending %s",
	    in->label, (long)holder, (long)h->pgid, (long)h->vigild,
	    signame_name(sig));
	inst_reason(in,
	    "lock held by leftover pid %ld of vigild %ld; reclaiming",
	    (long)holder, (long)h->vigild);
	(void)proc_group_signal(h->pgid, sig);
	(void)proc_group_signal(h->pgid, SIGCONT);
}

/* LIFE_A_LEFTOVER_KILL: it outlived stop_timeout. */
void
claim_leftover_kill(struct inst *in, pid_t holder)
{
	log_warnx("%s: leftover pid %ld outlived stop_timeout, sending KILL",
	    in->label, (long)holder);
	if (in->leftover.vigild == -1)
		track_signal(in, SIGKILL);
	else
		(void)proc_group_signal(in->leftover.pgid, SIGKILL);
}

/*
 * LIFE_A_NAME_HOLDER: the lock is held by a process vigild cannot prove
 * it started: never signal it; name it (once, by a scan of /proc).
 */
void
claim_name_holder(struct inst *in, int fd)
{
	char who[128];
	pid_t pid;

	memset(&in->leftover, 0, sizeof(in->leftover));
	pid = fd != -1 ? claim_of(in)->holder(in, fd) : 0;
	if (pid != 0)
		proc_describe(pid, who, sizeof(who));
	else
		strlcpy(who, "an unknown process", sizeof(who));
	log_warnx("%s: lock held by %s%s, which this vigild did not start; "
	          "not signalling it, waiting for the lock",
	    in->label, pid != 0 ? "pid " : "", who);
	inst_reason(in, "lock held by %s%s, not started by vigild; waiting",
	    pid != 0 ? "pid " : "", who);
}
