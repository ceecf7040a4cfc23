/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The fence keeper: a small process forked by vigild at start-up in
 * cluster mode, which enforces the trust deadline of each cluster run when
 * vigild itself cannot (stopped, hung, swapping).  It learns of each run,
 * over a socket pair, (key, process group, deadline) from the run's own
 * child before it execs (keeper_announce), with the run's cgroup
 * directory (SCM_RIGHTS) when there is one; then from vigild at each
 * renew, and the key alone when the run is gone.
 * The records of one pass of the loop (a renew's, for every run) go in
 * one datagram: one wakeup of the keeper per renew.  At a
 * deadline (CLOCK_BOOTTIME, a timerfd: a suspended host counts) the
 * keeper kills the group and every member of the cgroup; when vigild goes away
 * (end of file) it kills every group it still knows.  It runs no exec and
 * holds no descriptor but its socket, its timer and the cgroups.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/wait.h>

#include <errno.h>
#include <stddef.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "child.h"
#include "cluster.h"
#include "evloop.h"
#include "log.h"
#include "sendfd.h"
#include "spawn.h"
#include "xmalloc.h"

#define KEEPER_SET 1
#define KEEPER_DEL 2
#define KEEPER_BATCH 256 /* records in one datagram */

struct keeper_msg {
	uint32_t op;
	int32_t pgid;
	uint64_t key;
	uint64_t deadline; /* CLOCK_BOOTTIME usec; 0: none */
};

/* A record in the keeper. */
struct keeper_rec {
	uint64_t key;
	pid_t pgid;
	uint64_t deadline;
	int cg_fd; /* the run's cgroup directory, or -1 */
	int fired;
};

static struct {
	int fd; /* vigild's end, or -1 */
	struct child child;
	int warned;
	void (*resend)(void); /* tells a new keeper every record */
	struct keeper_msg pend[KEEPER_BATCH]; /* records not sent yet */
	size_t npend;
	sd_event_source *flush; /* sends them at the end of the pass */
} keeper = { .fd = -1 };

static void keeper_flush(void);
static void keeper_reaped(struct child *, pid_t, int);

static uint64_t
keeper_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ((uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000);
}

/*
 * In the keeper: kill a record's group, and every member of its cgroup
 * one by one (not cgroup.kill: a cgroup killed that way cannot take a
 * process cloned into it again, and the next vigild reuses it).
 */
static void
keeper_kill(struct keeper_rec *r, const char *why)
{
	if (r->pgid > 1 && kill(-r->pgid, SIGKILL) == 0)
		fprintf(stderr, "vigild-keeper: %s: sent KILL to group %ld\n",
		    why, (long)r->pgid);
	if (r->cg_fd != -1)
		(void)cgroup_signal(r->cg_fd, SIGKILL);
	r->fired = 1;
}

/* In the keeper: one record (with the cgroup fd, or -1). */
static void
keeper_apply(
    const struct keeper_msg *m, int fd, struct keeper_rec **recs, size_t *n)
{
	struct keeper_rec *r = NULL;
	size_t i;

	for (i = 0; i < *n; i++)
		if ((*recs)[i].key == m->key)
			r = &(*recs)[i];
	if (m->op == KEEPER_DEL) {
		if (r != NULL) {
			if (r->cg_fd != -1)
				close(r->cg_fd);
			*r = (*recs)[--*n];
		}
		if (fd != -1)
			close(fd);
		return;
	}
	if (r == NULL) {
		*recs = xreallocarray(*recs, *n + 1, sizeof(**recs));
		r = &(*recs)[(*n)++];
		r->cg_fd = -1;
	} else if (fd != -1 && r->cg_fd != -1) {
		close(r->cg_fd);
		r->cg_fd = -1;
	}
	r->key = m->key;
	if (r->pgid != m->pgid || r->deadline != m->deadline)
		r->fired = 0;
	r->pgid = m->pgid;
	r->deadline = m->deadline;
	if (fd != -1)
		r->cg_fd = fd;
}

/* In the keeper: one datagram from vigild (0), or its end (-1). */
static int
keeper_read(int sock, struct keeper_rec **recs, size_t *n)
{
	static struct keeper_msg m[KEEPER_BATCH];
	struct msghdr mh;
	struct iovec iov;
	struct cmsghdr *cm;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	ssize_t len;
	size_t i, k;
	int fd = -1;

	memset(&mh, 0, sizeof(mh));
	iov.iov_base = m;
	iov.iov_len = sizeof(m);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = u.buf;
	mh.msg_controllen = sizeof(u.buf);
	len = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	if (len == -1 && (errno == EINTR || errno == EAGAIN))
		return (0);
	if (len <= 0)
		return (-1);
	for (cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	k = (size_t)len / sizeof(m[0]);
	if (k == 0 || (size_t)len % sizeof(m[0]) != 0) {
		if (fd != -1)
			close(fd);
		return (0);
	}
	/* A cgroup comes with a datagram of one record only. */
	for (i = 0; i < k; i++)
		keeper_apply(&m[i], k == 1 ? fd : -1, recs, n);
	if (k != 1 && fd != -1)
		close(fd);
	return (0);
}

/* The keeper's life: records in, kills at their deadlines. */
static void __attribute__((noreturn)) keeper_main(int sock)
{
	struct keeper_rec *recs = NULL;
	struct itimerspec its;
	struct pollfd pfd[2];
	uint64_t now, next;
	size_t n = 0, i;
	int tfd;

	(void)prctl(PR_SET_NAME, "vigild-keeper", 0, 0, 0);
	if ((tfd = timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC)) == -1)
		_exit(1);
	for (;;) {
		next = 0;
		for (i = 0; i < n; i++)
			if (recs[i].deadline != 0 && !recs[i].fired &&
			    (next == 0 || recs[i].deadline < next))
				next = recs[i].deadline;
		memset(&its, 0, sizeof(its));
		if (next != 0) {
			its.it_value.tv_sec = (time_t)(next / 1000000);
			its.it_value.tv_nsec = (long)(next % 1000000) * 1000;
			if (next < 1000000 && its.it_value.tv_nsec == 0)
				its.it_value.tv_nsec = 1;
		}
		(void)timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
		pfd[0].fd = sock;
		pfd[0].events = POLLIN;
		pfd[1].fd = tfd;
		pfd[1].events = POLLIN;
		if (poll(pfd, 2, -1) == -1 && errno != EINTR)
			break;
		if ((pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    keeper_read(sock, &recs, &n) == -1)
			break;
		now = keeper_now();
		for (i = 0; i < n; i++)
			if (recs[i].deadline != 0 && !recs[i].fired &&
			    recs[i].deadline <= now)
				keeper_kill(&recs[i],
				    "a cluster run outlived its lease's trust "
				    "deadline");
	}
	/* vigild is gone: nothing of a cluster run may outlive it. */
	for (i = 0; i < n; i++)
		keeper_kill(&recs[i], "vigild is gone");
	_exit(0);
}

/*
 * Fork the keeper; resend tells a new one every record if it ever has to
 * be started again.  0, or -1 with errno.
 */
int
keeper_start(void (*resend)(void))
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1)
		return (-1);
	if ((pid = fork()) == -1) {
		close(sv[0]);
		close(sv[1]);
		return (-1);
	}
	if (pid == 0) {
		/* Only its socket and stderr: no lock, no listener. */
		if (sv[1] != 3) {
			if (dup2(sv[1], 3) == -1)
				_exit(1);
		}
#ifdef HAVE_CLOSE_RANGE
		(void)close_range(4, ~0U, 0);
#else
		for (int fd = 4; fd < 65536; fd++)
			(void)close(fd);
#endif
		keeper_main(3);
	}
	close(sv[1]);
	keeper.resend = resend;
	keeper.fd = sv[0];
	child_watch(&keeper.child, pid, CHILD_KEEPER, keeper_reaped);
	keeper.warned = 0;
	return (0);
}

/* At exit (every run gone): the keeper ends with its socket. */
void
keeper_stop(void)
{
	keeper_flush();
	keeper.flush = sd_event_source_disable_unref(keeper.flush);
	if (keeper.fd != -1)
		close(keeper.fd);
	keeper.fd = -1;
}

/* Send n records in one datagram, the first with cg_fd if not -1. */
static void
keeper_send(const struct keeper_msg *m, size_t n, int cg_fd)
{
	if (keeper.fd == -1 || n == 0)
		return;
	if (sendfd(keeper.fd, m, n * sizeof(*m), cg_fd,
	        MSG_NOSIGNAL | MSG_DONTWAIT) == -1 &&
	    !keeper.warned) {
		keeper.warned = 1;
		log_warn("fence keeper");
	}
}

/* Send the records kept during this pass of the loop. */
static void
keeper_flush(void)
{
	keeper_send(keeper.pend, keeper.npend, -1);
	keeper.npend = 0;
}

static int
keeper_flush_cb(sd_event_source *s, void *arg)
{
	keeper_flush();
	return (0);
}

/* Keep a record for the end of the pass (one datagram for a renew). */
static void
keeper_queue(const struct keeper_msg *m)
{
	if (keeper.npend == KEEPER_BATCH)
		keeper_flush();
	keeper.pend[keeper.npend++] = *m;
	evloop_defer(&keeper.flush, keeper_flush_cb, NULL);
}

/* A run's record: its group, killed at deadline (0: only if vigild goes). */
void
keeper_set(uint64_t key, pid_t pgid, uint64_t deadline, int cg_fd)
{
	struct keeper_msg m;

	memset(&m, 0, sizeof(m));
	m.op = KEEPER_SET;
	m.key = key;
	m.pgid = (int32_t)pgid;
	m.deadline = deadline;
	if (cg_fd == -1) {
		keeper_queue(&m);
		return;
	}
	/* A new keeper told again: after what came before, with the cgroup. */
	keeper_flush();
	keeper_send(&m, 1, cg_fd);
}

/*
 * Before the spawn of a run: the record its child sends the keeper
 * itself once it has its group, before it execs (spawn_child_announce).
 * A record vigild sent after the spawn could come too late: vigild
 * killed between the two, the run's children would outlive it unknown
 * to the keeper.  The renew that follows the spawn says the same again.
 */
void
keeper_announce(
    uint64_t key, uint64_t deadline, int cg_fd, struct spawn_announce *a)
{
	static struct keeper_msg m; /* one spawn at a time */

	if (keeper.fd == -1)
		return;
	keeper_flush(); /* what came before (a DEL of the last run) first */
	memset(&m, 0, sizeof(m));
	m.op = KEEPER_SET;
	m.key = key;
	m.deadline = deadline;
	a->fd = keeper.fd;
	a->buf = &m;
	a->len = sizeof(m);
	a->pid_off = offsetof(struct keeper_msg, pgid);
	a->pass_fd = cg_fd;
}

/* The run is gone: its record too. */
void
keeper_del(uint64_t key)
{
	struct keeper_msg m;

	memset(&m, 0, sizeof(m));
	m.op = KEEPER_DEL;
	m.key = key;
	keeper_queue(&m);
}

/* The keeper died: a new one, told every record again. */
static void
keeper_reaped(struct child *c, pid_t pid, int status)
{
	(void)c;
	if (keeper.fd == -1)
		return; /* at exit */
	log_warnx(
	    "fence keeper (pid %ld) ended (status %d): starting a new one",
	    (long)pid, status);
	close(keeper.fd);
	keeper.fd = -1;
	if (keeper_start(keeper.resend) == -1)
		log_warn("fence keeper");
	else if (keeper.resend != NULL)
		keeper.resend();
}
