/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Cluster mode, the operator's verbs asked on any node (cluster-int.h).
 * A restart, stop, start or signal of a cluster service whose lease
 * another node holds is written to vigil.request; the holder takes it,
 * acts on its run and answers in the row once it is done (the restarted
 * run RUNNING past min_uptime, the stopped run gone, the signal sent),
 * and the asking node reads the answer and ends its client's wait with
 * the holder's words ("web: restarted on n2").  A node that wins the
 * lease takes what is still open (the holder died before answering; a
 * start that no node ran yet).  Notices ("ask JOB_ID INSTANCE", "answer
 * ID") are only hints to read rows that only vigil's role writes; each
 * renew looks for requests and a timer for answers, in case a notice was
 * lost.  It calls cluster-state.c and nothing of cluster.c or
 * cluster-conn.c.
 */

#include "config.h"

#include <sys/types.h>

#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster-int.h"
#include "duration.h"
#include "evloop.h"
#include "lease.h"
#include "log.h"
#include "monotime.h"
#include "pgstate.h"
#include "signame.h"
#include "xmalloc.h"

#ifdef HAVE_LIBPQ

/* How often the asking node reads the answers if no notice came. */
#define ASK_POLL_USEC (1 * DURATION_USEC_PER_SEC)

/* A client's request, on the asking node. */
struct asked {
	uint64_t token; /* the waiter's handle */
	int64_t id;     /* its row, 0 until written */
	int64_t job_id;
	int instance;
	int done, ok;
	char *reply;
	TAILQ_ENTRY(asked) entry;
};

static TAILQ_HEAD(, asked) asked_list = TAILQ_HEAD_INITIALIZER(asked_list);
static uint64_t asked_next;
static sd_event_source *asked_poll;
static int answering, answer_again;
static int taking, take_again;

static void cluster_answers_poll(void);
static void cluster_taken_check(struct inst *);

/* Is in a cluster service whose lease this node does not hold? */
int
cluster_elsewhere(const struct inst *in)
{
	const struct lease_slot *s = in->lease;

	if (cluster_st.cf == NULL || !in->job->spec->cluster ||
	    in->job->spec->kind != CONF_KIND_SERVICE ||
	    in->job->cluster_id == 0)
		return (0);
	return (s == NULL || (s->st != LEASE_HELD && s->st != LEASE_EXPIRED));
}

static struct asked *
asked_find(uint64_t token)
{
	struct asked *a;

	TAILQ_FOREACH(a, &asked_list, entry)
		if (a->token == token)
			return (a);
	return (NULL);
}

/* The answer came. */
static void
asked_answer(struct asked *a, int ok, const char *reply)
{
	a->done = 1;
	a->ok = ok;
	free(a->reply);
	a->reply = xstrdup(reply != NULL ? reply : "no answer");
}

/* The clients waiting on the instance look at their answers. */
static void
asked_wake(int64_t job_id, int instance)
{
	struct inst *in = cluster_inst_find(job_id, instance);

	if (in != NULL && cluster_waiters != NULL)
		cluster_waiters(in);
}

static void
asked_done(struct asked *a, int ok, const char *reply)
{
	asked_answer(a, ok, reply);
	asked_wake(a->job_id, a->instance);
}

static void
cluster_asked(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	uint64_t token = (uint64_t)(uintptr_t)arg;
	struct asked *a = asked_find(token);
	char *why;

	(void)sent;
	if (a == NULL) /* nobody waits (any more) */
		return;
	if (res == NULL || pgres_ntuples(res) != 1) {
		xasprintf(&why, "not asked: %s",
		    err != NULL ? err : "the job's row is missing");
		asked_done(a, 0, why);
		free(why);
		return;
	}
	a->id = pgres_int(res, 0, 0, 0);
	if (pgres_bool(res, 0, 1)) {
		asked_done(a, pgres_bool(res, 0, 2), pgres_value(res, 0, 3));
		return;
	}
	/* A stop the holder finished before the row was there: at once. */
	cluster_answers_check();
	cluster_answers_poll();
}

/*
 * Ask the node that holds the lease of in to act (verb "restart", "stop",
 * "start" or "signal" with sig); uid asked.  With waited, return the
 * handle the client's wait looks at (cluster_answer); else 0, and the
 * answer is not read.
 */
uint64_t
cluster_request(
    struct inst *in, const char *verb, int sig, long uid, int waited)
{
	const char *p[5];
	char id[32], idx[16], signo[16], *by;
	struct asked *a = NULL;
	uint64_t token = 0;

	if (waited) {
		a = xcalloc(1, sizeof(*a));
		a->token = token = ++asked_next;
		a->job_id = in->job->cluster_id;
		a->instance = in->index;
		TAILQ_INSERT_TAIL(&asked_list, a, entry);
	}
	snprintf(id, sizeof(id), "%" PRId64, in->job->cluster_id);
	snprintf(idx, sizeof(idx), "%d", in->index);
	snprintf(signo, sizeof(signo), "%d", sig);
	xasprintf(&by, "uid %ld on %s", uid, cluster_st.cf->node_name);
	p[0] = id;
	p[1] = idx;
	p[2] = verb;
	p[3] = sig > 0 ? signo : NULL;
	p[4] = by;
	log_info("%s: %s asked of the node that holds it", in->label, verb);
	pgconn_query(cluster_st.lease, 0, pg_request_ask, 5, p, cluster_asked,
	    (void *)(uintptr_t)token);
	free(by);
	return (token);
}

/* Has the request of token been answered?  Then *ok and *reply. */
int
cluster_answer(uint64_t token, int *ok, const char **reply)
{
	struct asked *a = asked_find(token);

	if (a == NULL) {
		*ok = 0;
		*reply = "the request is gone";
		return (1);
	}
	if (!a->done)
		return (0);
	*ok = a->ok;
	*reply = a->reply;
	return (1);
}

/* The client no longer waits for the answer of token. */
void
cluster_request_forget(uint64_t token)
{
	struct asked *a = asked_find(token);

	if (a == NULL)
		return;
	TAILQ_REMOVE(&asked_list, a, entry);
	free(a->reply);
	free(a);
	if (TAILQ_EMPTY(&asked_list))
		asked_poll = sd_event_source_disable_unref(asked_poll);
}

static void
cluster_answers_read(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct asked *a;
	int64_t id, *jobs = NULL;
	int row, n = 0, *insts = NULL, i;

	(void)arg;
	(void)sent;
	answering = 0;
	if (res == NULL)
		log_debug("cluster: reading the answers: %s", err);
	/*
	 * Every answer first, then the waiters: a waiter that ends forgets
	 * its request, and others of the list with it.
	 */
	for (row = 0; res != NULL && row < pgres_ntuples(res); row++) {
		id = pgres_int(res, row, 0, 0);
		TAILQ_FOREACH(a, &asked_list, entry) {
			if (a->id != id || a->done)
				continue;
			asked_answer(a, pgres_bool(res, row, 1),
			    pgres_value(res, row, 2));
			jobs =
			    xreallocarray(jobs, (size_t)n + 1, sizeof(*jobs));
			insts =
			    xreallocarray(insts, (size_t)n + 1, sizeof(*insts));
			jobs[n] = a->job_id;
			insts[n++] = a->instance;
		}
	}
	for (i = 0; i < n; i++)
		asked_wake(jobs[i], insts[i]);
	free(jobs);
	free(insts);
	if (answer_again) {
		answer_again = 0;
		cluster_answers_check();
	}
}

/* Read the answers of the requests still open (a notice, the timer). */
void
cluster_answers_check(void)
{
	struct asked *a;
	int64_t *ids = NULL;
	size_t n = 0;
	char *pa;

	if (answering) {
		answer_again = 1;
		return;
	}
	TAILQ_FOREACH(a, &asked_list, entry) {
		if (a->id == 0 || a->done)
			continue;
		ids = xreallocarray(ids, n + 1, sizeof(*ids));
		ids[n++] = a->id;
	}
	if (n == 0 || !pgconn_is_ready(cluster_st.lease)) {
		free(ids);
		return;
	}
	pa = pg_array_int(ids, n);
	answering = 1;
	pgconn_query(cluster_st.lease, 0, pg_request_answers, 1,
	    (const char *const *)&pa, cluster_answers_read, NULL);
	free(pa);
	free(ids);
}

static int
cluster_answers_tick(sd_event_source *src, uint64_t usec, void *arg)
{
	(void)src;
	(void)usec;
	(void)arg;
	if (TAILQ_EMPTY(&asked_list)) {
		asked_poll = sd_event_source_disable_unref(asked_poll);
		return (0);
	}
	cluster_answers_check();
	return (sd_event_source_set_time_relative(asked_poll, ASK_POLL_USEC));
}

/* While requests are open, read their answers every second. */
static void
cluster_answers_poll(void)
{
	if (asked_poll != NULL)
		return;
	evloop_timer_in(&asked_poll, CLOCK_MONOTONIC, ASK_POLL_USEC, 100000,
	    cluster_answers_tick, NULL);
	(void)sd_event_source_set_enabled(asked_poll, SD_EVENT_ON);
}

/* Answer a request this node took; it is done with. */
static void taken_answer(struct lease_slot *s, struct taken *t, int ok,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
taken_answer(
    struct lease_slot *s, struct taken *t, int ok, const char *fmt, ...)
{
	const char *p[3];
	char id[32], *reply;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&reply, fmt, ap) == -1)
		fatal("vasprintf");
	va_end(ap);
	snprintf(id, sizeof(id), "%" PRId64, t->id);
	p[0] = id;
	p[1] = ok ? "true" : "false";
	p[2] = reply;
	log_info("%s: answered a request from another node: %s", s->in->label,
	    reply);
	pgconn_query(cluster_st.lease, 0, pg_request_done, 3, p, NULL, NULL);
	free(reply);
	TAILQ_REMOVE(&s->taken, t, entry);
	free(t);
}

static int
taken_stable(sd_event_source *src, uint64_t usec, void *arg)
{
	struct lease_slot *s = arg;

	(void)src;
	(void)usec;
	s->taken_timer = sd_event_source_disable_unref(s->taken_timer);
	cluster_taken_check(s->in);
	return (0);
}

/* Is the run of in RUNNING past min_uptime?  If not yet, look again then. */
static int
taken_is_stable(struct lease_slot *s)
{
	struct inst *in = s->in;
	uint64_t at = in->run.started + in->job->spec->min_uptime;

	if (monotime_now() >= at)
		return (1);
	if (s->taken_timer == NULL) {
		evloop_timer_at(&s->taken_timer, CLOCK_MONOTONIC, at, 1000,
		    taken_stable, s);
	}
	return (0);
}

/*
 * An instance changed: answer the requests taken for it that it settles.
 * A stop is done once the run is gone; a start or restart once the run
 * is RUNNING past min_uptime, and failed once it fell into BACKOFF,
 * FATAL, EXITED or STOPPED.  A node that lost the lease answers nothing:
 * the next holder takes the request.
 */
static void
cluster_taken_check(struct inst *in)
{
	struct lease_slot *s = in->lease;
	struct taken *t, *tmp;
	const char *node;
	enum job_state st = in->state;

	if (s == NULL || TAILQ_EMPTY(&s->taken))
		return;
	node = cluster_st.cf->node_name;
	if (s->st != LEASE_HELD && s->st != LEASE_EXPIRED &&
	    job_state_is_active(st)) {
		/* Handed over or lost: the next holder answers. */
		while ((t = TAILQ_FIRST(&s->taken)) != NULL) {
			TAILQ_REMOVE(&s->taken, t, entry);
			free(t);
		}
		return;
	}
	TAILQ_FOREACH_SAFE(t, &s->taken, entry, tmp) {
		if (t->verb == 'S') {
			if (!job_state_is_active(st))
				taken_answer(s, t, 1, "stopped on %s", node);
			continue;
		}
		if (st == JOB_RUNNING && taken_is_stable(s))
			taken_answer(s, t, 1, "%s on %s (pid %ld)",
			    t->verb == 'r' ? "restarted" : "started", node,
			    (long)in->run.pid);
		else if (st == JOB_BACKOFF || st == JOB_FATAL ||
		    st == JOB_EXITED || st == JOB_STOPPED)
			taken_answer(s, t, 0, "%s on %s%s%s",
			    job_state_name(st), node,
			    in->reason != NULL ? ": " : "",
			    in->reason != NULL ? in->reason : "");
	}
}

/* Act on one request taken: the verb's effect on this node's run. */
static void
taken_act(struct lease_slot *s, struct taken *t, int sig, int64_t age_ms)
{
	struct inst *in = s->in;
	uint64_t asked = monotime_now() - (uint64_t)age_ms * 1000;

	switch (t->verb) {
	case 'k':
		if (in->run.pid > 0) {
			inst_signal(in, sig);
			taken_answer(s, t, 1, "signalled %s on %s (pid %ld)",
			    signame_name(sig), cluster_st.cf->node_name,
			    (long)in->run.pid);
		} else
			taken_answer(s, t, 0, "not running on %s (%s)",
			    cluster_st.cf->node_name,
			    job_state_name(in->state));
		return;
	case 'r':
		/* A run that began after the request is already the restart. */
		if (in->run.pid > 0 && in->run.started < asked) {
			inst_stop(in);
			inst_start(in);
		} else if (in->state == JOB_BACKOFF)
			inst_start(in); /* now, not after the delay */
		break;
	case 'S':
		/* The stop's hold is on its way: look at the row now. */
		cluster_hold_hint(in->job->cluster_id, in->index);
		break;
	default:
		break;
	}
	cluster_taken_check(in);
}

static int
taken_find(const struct lease_slot *s, int64_t id)
{
	const struct taken *t;

	TAILQ_FOREACH(t, &s->taken, entry)
		if (t->id == id)
			return (1);
	return (0);
}

static void
cluster_took(void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct lease_slot *s;
	struct taken *t;
	const char *verb;
	int row;

	(void)arg;
	(void)sent;
	taking = 0;
	if (res == NULL)
		log_debug("cluster: taking requests: %s", err);
	for (row = 0; res != NULL && row < pgres_ntuples(res); row++) {
		s = cluster_find(
		    pgres_int(res, row, 1, 0), (int)pgres_int(res, row, 2, -1));
		verb = pgres_value(res, row, 3);
		if (s == NULL || verb == NULL || s->msg != 0 ||
		    taken_find(s, pgres_int(res, row, 0, 0)))
			continue; /* the next holder takes it; taken already */
		t = xcalloc(1, sizeof(*t));
		t->id = pgres_int(res, row, 0, 0);
		t->verb = strcmp(verb, "restart") == 0 ? 'r' :
		    strcmp(verb, "stop") == 0          ? 'S' :
		    strcmp(verb, "signal") == 0        ? 'k' :
		                                         's';
		TAILQ_INSERT_TAIL(&s->taken, t, entry);
		log_info("%s: %s asked by another node", s->in->label, verb);
		taken_act(s, t, (int)pgres_int(res, row, 4, SIGTERM),
		    pgres_int(res, row, 5, 0));
	}
	if (take_again) {
		take_again = 0;
		cluster_requests_take();
	}
}

/*
 * Take the requests of the instances whose lease this node holds (a
 * notice came, a lease was won, a renew passed): one query at a time.
 */
void
cluster_requests_take(void)
{
	const char *p[1];

	if (taking) {
		take_again = 1;
		return;
	}
	if (!pgconn_is_ready(cluster_st.lease))
		return;
	taking = 1;
	p[0] = cluster_st.cf->node_name;
	pgconn_query(
	    cluster_st.lease, 0, pg_request_take, 1, p, cluster_took, NULL);
}

/* How often a wait on a standby reads whether the holder runs it. */
#define WAIT_LOOK_USEC (250 * 1000)

/*
 * Does another node run in, as the database said at the last look for a
 * wait?  A wait for RUNNING on any node is settled by the holder's run.
 */
int
cluster_runs_elsewhere(const struct inst *in)
{
	return (in->lease != NULL && in->lease->st != LEASE_HELD &&
	    in->lease->elsewhere > 0);
}

static int cluster_wait_look(sd_event_source *, uint64_t, void *);

/* The next look at the holders' runs, after usec. */
static void
cluster_wait_look_in(uint64_t usec)
{
	evloop_timer_in(&cluster_st.wait_look, CLOCK_MONOTONIC, usec, 10000,
	    cluster_wait_look, NULL);
}

/* The holders' runs (pg_status_view's rows): the waits they settle. */
static void
cluster_wait_looked(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct lease_slot *s;
	const char *holder;
	int row;

	(void)arg;
	(void)err;
	(void)sent;
	cluster_st.wait_looking = 0;
	for (row = 0; res != NULL && row < pgres_ntuples(res); row++) {
		s = cluster_find(
		    pgres_int(res, row, 0, 0), (int)pgres_int(res, row, 1, -1));
		if (s == NULL || s->st == LEASE_HELD)
			continue;
		holder = pgres_value(res, row, 2);
		s->elsewhere = holder != NULL &&
		        strcmp(holder, cluster_st.cf->node_name) != 0 ?
		    (long)pgres_int(res, row, 3, 0) :
		    0;
		if (s->elsewhere > 0 && cluster_waiters != NULL)
			cluster_waiters(s->in);
	}
	cluster_wait_look_in(WAIT_LOOK_USEC);
}

/*
 * Look at the runs of the instances that clients wait on and that this
 * node does not hold; with none, stop looking (and forget what was
 * seen: it is read afresh for the next wait).
 */
static int
cluster_wait_look(sd_event_source *src, uint64_t usec, void *arg)
{
	struct lease_slot *s;
	int64_t *ids = NULL, *idx = NULL;
	size_t n = 0, cap = 0;
	const char *p[2];
	char *pa[2];

	(void)src;
	(void)usec;
	(void)arg;
	LIST_FOREACH(s, &cluster_st.slots, entry) {
		if (s->st == LEASE_HELD || s->in->job->cluster_id == 0 ||
		    TAILQ_EMPTY(&s->in->waiters)) {
			s->elsewhere = 0;
			continue;
		}
		if (n == cap) {
			cap = cap == 0 ? 16 : cap * 2;
			ids = xreallocarray(ids, cap, sizeof(*ids));
			idx = xreallocarray(idx, cap, sizeof(*idx));
		}
		ids[n] = s->in->job->cluster_id;
		idx[n++] = s->in->index;
	}
	if (n > 0 && !pgconn_is_ready(cluster_st.work))
		cluster_wait_look_in(WAIT_LOOK_USEC);
	else if (n > 0) {
		pa[0] = pg_array_int(ids, n);
		pa[1] = pg_array_int(idx, n);
		p[0] = pa[0];
		p[1] = pa[1];
		cluster_st.wait_looking = 1;
		pgconn_query(cluster_st.work, 0, pg_status_view, 2, p,
		    cluster_wait_looked, NULL);
		free(pa[0]);
		free(pa[1]);
	}
	free(ids);
	free(idx);
	return (0);
}

/* A client waits for an instance to run: look at the holders' runs. */
void
cluster_wait_watch(void)
{
	if (cluster_st.cf == NULL || cluster_st.wait_looking)
		return;
	if (cluster_st.wait_look == NULL ||
	    sd_event_source_get_enabled(cluster_st.wait_look, NULL) == 0)
		cluster_wait_look_in(0);
}

/* Cluster mode ends: the requests still open are forgotten. */
void
cluster_requests_close(void)
{
	struct asked *a;

	while ((a = TAILQ_FIRST(&asked_list)) != NULL) {
		TAILQ_REMOVE(&asked_list, a, entry);
		free(a->reply);
		free(a);
	}
	asked_poll = sd_event_source_disable_unref(asked_poll);
	cluster_st.wait_look =
	    sd_event_source_disable_unref(cluster_st.wait_look);
}

static void
cluster_taken_changed(struct inst *in, enum job_state was)
{
	(void)was;
	cluster_taken_check(in);
}

const struct inst_observer cluster_taken_observer = {
	.changed = cluster_taken_changed,
};

#endif /* HAVE_LIBPQ */
