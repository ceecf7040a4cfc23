/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The probes of an instance (job options ready = "tcp:...", "http:...",
 * "exec:..." and health), one at a time, all on the event loop: a
 * non-blocking connect (and for http: one HTTP/1.1 GET read up to its
 * status line) or, for exec:, a child of its own in the instance's cgroup
 * (what it leaves behind is the run's, stopped with it); each attempt
 * bounded.
 *
 * Ready: from the spawn, an attempt after 10 ms, then after twice as long
 * each time up to 1 s, until one answers: READY into the lifecycle (whose
 * ready_timeout ends a probe that never does).  Health: once RUNNING, an
 * attempt every health_interval; health_failures failures in a row feed
 * UNHEALTHY, which restarts the instance.
 *
 * prober_sync runs after every step of an instance's lifecycle and starts
 * or stops its probe to match the phase.  Attempts start from a timer,
 * never inside a step, so an answer is always a step of its own.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/tree.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "child.h"
#include "duration.h"
#include "effects.h"
#include "evloop.h"
#include "inst.h"
#include "jobs.h"
#include "log.h"
#include "probe.h"
#include "signame.h"
#include "spawn.h"
#include "xmalloc.h"

#define PROBER_MS 1000ULL
#define PROBER_SEC (1000 * PROBER_MS)
#define PROBER_FIRST (10 * PROBER_MS)      /* ready: the first wait */
#define PROBER_STEP_MAX (1 * PROBER_SEC)   /* ready: the longest wait */
#define PROBER_NET_BOUND (1 * PROBER_SEC)  /* a connect and its answer */
#define PROBER_EXEC_BOUND (5 * PROBER_SEC) /* an exec: probe's child */
#define PROBER_HEALTH_BOUND (10 * PROBER_SEC)

enum prober_purpose {
	PROBER_NONE,
	PROBER_READY,
	PROBER_HEALTH
};

enum prober_stage {
	PROBER_IDLE,
	PROBER_CONNECT,
	PROBER_SEND,
	PROBER_READ,
	PROBER_CHILD
};

struct prober {
	struct inst *in;
	enum prober_purpose purpose;
	const struct probe_spec *spec;
	enum prober_stage stage;
	int fd;
	sd_event_source *io;
	sd_event_source *timer; /* the next attempt, or this one's bound */
	struct child child;     /* exec: the child */
	char req[1024];
	size_t reqlen, sent;
	char ans[16];
	size_t got;
	uint64_t step; /* ready: the wait before the next attempt */
	int failures;  /* health: in a row */
};

static int prober_null = -1; /* /dev/null, for exec: probes' output */

static int prober_timer_fired(sd_event_source *, uint64_t, void *);
static void prober_reaped(struct child *, pid_t, int);

/* The bound of one attempt. */
static uint64_t
prober_bound(const struct prober *p)
{
	uint64_t b =
	    p->spec->kind == PROBE_EXEC ? PROBER_EXEC_BOUND : PROBER_NET_BOUND;

	if (p->purpose == PROBER_HEALTH) {
		b = p->in->job->spec->health_interval;
		if (b > PROBER_HEALTH_BOUND)
			b = PROBER_HEALTH_BOUND;
	}
	return (b);
}

/* (Re)arm the probe's timer usec from now. */
static void
prober_arm(struct prober *p, uint64_t usec)
{
	evloop_timer_in(
	    &p->timer, CLOCK_MONOTONIC, usec, 1000, prober_timer_fired, p);
}

/* End the current attempt: its socket, or its child (killed). */
static void
prober_attempt_end(struct prober *p)
{
	p->io = sd_event_source_disable_unref(p->io);
	if (p->fd != -1)
		close(p->fd);
	p->fd = -1;
	if (p->child.pid > 0) {
		/* Its reap finds no probe: vigild just reaps it. */
		(void)kill(-p->child.pid, SIGKILL);
		(void)kill(p->child.pid, SIGKILL);
		child_unwatch(&p->child);
	}
	p->stage = PROBER_IDLE;
}

/* Free the instance's probe, if any. */
void
prober_forget(struct inst *in)
{
	struct prober *p = in->probe;

	if (p == NULL)
		return;
	prober_attempt_end(p);
	p->timer = sd_event_source_disable_unref(p->timer);
	free(p);
	in->probe = NULL;
}

/*
 * An attempt ended (ok, or why not).  Ready: READY, or the next attempt
 * later.  Health: the count of failures in a row, UNHEALTHY at
 * health_failures, the next attempt after health_interval.  After a feed,
 * p may be gone.
 */
static void
prober_done(struct prober *p, int ok, const char *why)
{
	struct inst *in = p->in;
	const struct job_spec *spec = in->job->spec;

	prober_attempt_end(p);
	if (p->purpose == PROBER_READY) {
		if (ok) {
			log_info("%s: ready (%s answered)", in->label,
			    p->spec->text);
			inst_feed(in, LIFE_EV_READY);
			return;
		}
		log_debug(
		    "%s: ready probe %s: %s", in->label, p->spec->text, why);
		prober_arm(p, p->step);
		p->step = p->step * 2 > PROBER_STEP_MAX ? PROBER_STEP_MAX :
		                                          p->step * 2;
		return;
	}
	if (ok) {
		if (p->failures > 0)
			log_info("%s: health check %s passes again", in->label,
			    p->spec->text);
		p->failures = 0;
	} else {
		p->failures++;
		log_warnx("%s: health check %s failed (%d of %d): %s",
		    in->label, p->spec->text, p->failures,
		    spec->health_failures, why);
	}
	prober_arm(p, spec->health_interval);
	if (!ok && p->failures >= spec->health_failures) {
		p->failures = 0;
		inst_feed(in, LIFE_EV_UNHEALTHY);
	}
}

/* http: read the answer up to its status line. */
static void
prober_read(struct prober *p)
{
	char why[64];
	ssize_t n;
	int code;

	n = recv(p->fd, p->ans + p->got, sizeof(p->ans) - p->got, MSG_DONTWAIT);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n == -1) {
		prober_done(p, 0, strerror(errno));
		return;
	}
	p->got += (size_t)n;
	code = probe_http_status(p->ans, p->got);
	if (code == 0 && n > 0 && p->got < sizeof(p->ans))
		return; /* more to come */
	if (code <= 0) {
		prober_done(p, 0,
		    code == 0 ? "closed before answering" :
		                "the answer is not HTTP/1");
		return;
	}
	snprintf(why, sizeof(why), "answered %d", code);
	prober_done(p, code >= 200 && code < 400, why);
}

/* http: send the request, as far as the socket takes it. */
static void
prober_send(struct prober *p)
{
	ssize_t n;

	n = send(p->fd, p->req + p->sent, p->reqlen - p->sent,
	    MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n == -1) {
		prober_done(p, 0, strerror(errno));
		return;
	}
	p->sent += (size_t)n;
	if (p->sent < p->reqlen)
		return;
	p->stage = PROBER_READ;
	(void)sd_event_source_set_io_events(p->io, EPOLLIN);
}

/* The connect is over: tcp: that is the answer; http: the request. */
static void
prober_connected(struct prober *p)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(p->fd, SOL_SOCKET, SO_ERROR, &err, &len) == -1)
		err = errno;
	if (err != 0) {
		prober_done(p, 0, strerror(err));
		return;
	}
	if (p->spec->kind == PROBE_TCP) {
		prober_done(p, 1, NULL);
		return;
	}
	p->stage = PROBER_SEND;
	p->reqlen = probe_http_request(p->spec, p->req, sizeof(p->req));
	p->sent = 0;
	p->got = 0;
	prober_send(p);
}

static int
prober_io(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	struct prober *p = arg;

	(void)s;
	(void)fd;
	(void)revents;
	switch (p->stage) {
	case PROBER_CONNECT:
		prober_connected(p);
		break;
	case PROBER_SEND:
		prober_send(p);
		break;
	case PROBER_READ:
		prober_read(p);
		break;
	default:
		break;
	}
	return (0);
}

/* tcp: and http: start with a non-blocking connect. */
static void
prober_connect(struct prober *p)
{
	p->fd = socket(p->spec->addr.ss_family,
	    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (p->fd == -1) {
		prober_done(p, 0, strerror(errno));
		return;
	}
	if (connect(p->fd, (const struct sockaddr *)&p->spec->addr,
	        p->spec->addrlen) == -1 &&
	    errno != EINPROGRESS) {
		prober_done(p, 0, strerror(errno));
		return;
	}
	p->stage = PROBER_CONNECT;
	evloop_io(&p->io, p->fd, EPOLLOUT, prober_io, p);
}

/* exec: a child running the command as the job would, output dropped. */
static void
prober_exec(struct prober *p)
{
	struct spawn_request req;
	struct spawn_result res;
	char *cause = NULL;

	if (prober_null == -1 &&
	    (prober_null = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1) {
		prober_done(p, 0, "/dev/null: cannot open");
		return;
	}
	memset(&req, 0, sizeof(req));
	req.spec = p->in->job->spec;
	req.instance = p->in->index;
	req.run_id = p->in->run.id;
	req.lock_fd = -1;
	/* In the instance's cgroup: what it leaves goes with the run. */
	req.cgroup_fd = p->in->cg_fd > 0 ? p->in->cg_fd : 0;
	req.stdout_fd = req.stderr_fd = prober_null;
	req.argv = p->spec->argv;
	if (spawn_start(&req, &res, &cause) == -1) {
		prober_done(p, 0, cause);
		free(cause);
		return;
	}
	if (res.report_fd != -1)
		close(res.report_fd);
	p->stage = PROBER_CHILD;
	if (res.done && res.cause != NULL)
		prober_done(p, 0, res.cause); /* it exits 127, unwaited */
	else
		child_watch(&p->child, res.pid, CHILD_PROBE, prober_reaped);
	free(res.cause);
}

/* The timer: an attempt is due, or the one going took too long. */
static int
prober_timer_fired(sd_event_source *s, uint64_t usec, void *arg)
{
	struct prober *p = arg;
	char why[64], d[32];

	(void)s;
	(void)usec;
	if (p->stage != PROBER_IDLE) {
		snprintf(why, sizeof(why), "no answer within %s",
		    duration_format(prober_bound(p), d, sizeof(d)));
		prober_done(p, 0, why);
		return (0);
	}
	prober_arm(p, prober_bound(p));
	if (p->spec->kind == PROBE_EXEC)
		prober_exec(p);
	else
		prober_connect(p);
	return (0);
}

/* The child of an exec: probe was reaped: its attempt is over. */
static void
prober_reaped(struct child *c, pid_t pid, int status)
{
	struct prober *p = child_owner(c, struct prober, child);
	char why[64];

	(void)pid;
	if (WIFEXITED(status))
		snprintf(why, sizeof(why), "exited %d", WEXITSTATUS(status));
	else
		snprintf(why, sizeof(why), "killed by signal %s",
		    signame_name(WTERMSIG(status)));
	prober_done(p, WIFEXITED(status) && WEXITSTATUS(status) == 0, why);
}

/* Which probe the instance's phase calls for. */
static enum prober_purpose
prober_wanted(const struct inst *in)
{
	const struct job_spec *spec = in->job->spec;

	if (in->life.phase == LIFE_SPAWNED && spec->ready == CONF_READY_PROBE)
		return (PROBER_READY);
	if (in->life.phase == LIFE_RUNNING && spec->health.kind != PROBE_NONE)
		return (PROBER_HEALTH);
	return (PROBER_NONE);
}

/* After a step of the instance: the probe its phase calls for, only. */
void
prober_sync(struct inst *in)
{
	enum prober_purpose want = prober_wanted(in);
	struct prober *p;

	if (in->probe != NULL && in->probe->purpose == want)
		return;
	prober_forget(in);
	if (want == PROBER_NONE)
		return;
	p = xcalloc(1, sizeof(*p));
	p->in = in;
	p->purpose = want;
	p->fd = -1;
	p->spec = want == PROBER_READY ? &in->job->spec->ready_probe :
	                                 &in->job->spec->health;
	p->step = PROBER_FIRST;
	in->probe = p;
	prober_arm(p,
	    want == PROBER_READY ? PROBER_FIRST :
	                           in->job->spec->health_interval);
}
