/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Queue jobs with cluster = true: their messages live in PostgreSQL
 * (vigil.message) and every node works them, each with its own
 * `concurrency` slots and all together under `cluster_concurrency`.
 *
 * - A claim takes at most the job's free slots here in one statement
 *   (FOR UPDATE SKIP LOCKED), committed before any run starts; (id,
 *   attempts) is the claim's token, and every outcome is conditional on
 *   it.  The dispatcher (dispatch.c) asks, and binds each message to a
 *   slot (cluster_queue_bind).
 * - A running message is held like a lease: the node's one renew
 *   statement renews it (cluster-conn.c), the fence of cluster.c stops
 *   and kills its run once the renews stop answering, and the keeper
 *   kills it if vigild cannot.  A message missing from a renew's answer
 *   while still trusted was deleted (vigilctl delete): its run goes on,
 *   its outcome is dropped, as in local mode.
 * - Outcomes (done, failed, given back) go to an outbox, reported in
 *   batches on the work connection, kept while the database is out of
 *   reach, and reported once it is back; the database drops a stale one
 *   (the message was rescued elsewhere meanwhile), and the log says so.
 * - Rescue: each renew tick, one node (whichever takes an advisory
 *   lock) makes the messages of nodes that stopped renewing available
 *   again, their attempt counted.
 * - Wake-ups: NOTIFY "q JOB_ID" (an enqueue, a retry, a message given
 *   back) kicks the job's dispatcher; every job is kicked once the work
 *   connection is (back) up, for what was missed meanwhile.
 *
 * The outcomes reach this file through state_cluster, the second struct
 * state_ops (state.c picks it for these jobs); the slots hold their local
 * lock through claim_cluster_msg.
 */

#include "config.h"

#include <sys/types.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster-int.h"
#include "evloop.h"
#include "lease.h"
#include "log.h"
#include "pgstate.h"
#include "state.h"
#include "store.h"
#include "vigild.h"
#include "xmalloc.h"

#ifdef HAVE_LIBPQ

/* Outcomes in one statement at most. */
#define CQ_BATCH 256

/* ---- the outbox ---- */

static void
cq_outcome_free(struct outcome *o)
{
	free(o->error);
	free(o->tail);
	free(o);
}

static void cq_flush(void);

/* The batch of outcomes sent in one statement. */
struct flush_arg {
	size_t n;
	struct outcome **v;
};

/* Is the outbox empty (the shutdown's wait for it is over)? */
static void
cq_shutdown_check(void)
{
	void (*done)(void) = cluster_st.queue_shutdown;

	if (done == NULL || !TAILQ_EMPTY(&cluster_st.outbox) ||
	    cluster_st.claims > 0 || cluster_st.holds > 0)
		return;
	cluster_st.queue_shutdown = NULL;
	cluster_st.holds_settled = NULL;
	cluster_st.queue_shutdown_timer =
	    sd_event_source_disable_unref(cluster_st.queue_shutdown_timer);
	cluster_shutdown(done);
}

static void
cq_flushed(void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct flush_arg *a = arg;
	char *applied;
	int row, nrows;
	size_t i;
	int64_t id;

	cluster_st.flushing = 0;
	if (res == NULL) {
		if (cluster_st.outbox_fails++ == 0)
			log_warnx("cluster: reporting %zu message outcomes: "
			          "%s; kept until the database answers",
			    a->n, err);
		for (i = 0; i < a->n; i++)
			a->v[i]->sent = 0;
		goto out;
	}
	cluster_st.outbox_fails = 0;
	applied = xcalloc(a->n + 1, 1);
	nrows = pgres_ntuples(res);
	for (row = 0; row < nrows; row++) {
		id = pgres_int(res, row, 0, 0);
		for (i = 0; i < a->n; i++)
			if (a->v[i]->id == id)
				applied[i] = 1;
	}
	for (i = 0; i < a->n; i++) {
		if (!applied[i])
			log_info("cluster: message %" PRId64 " attempt %d: "
			         "its outcome is dropped: the message was "
			         "rescued or deleted meanwhile",
			    a->v[i]->id, a->v[i]->attempts);
		TAILQ_REMOVE(&cluster_st.outbox, a->v[i], entry);
		cq_outcome_free(a->v[i]);
	}
	free(applied);
	log_debug("cluster: %zu message outcomes reported in %" PRIu64 " us",
	    a->n, pgconn_now() - sent);
	cq_flush();
out:
	free(a->v);
	free(a);
	cq_shutdown_check();
}

/* Report what the outbox holds, in one statement (one on the wire). */
static void
cq_flush(void)
{
	struct flush_arg *a;
	struct outcome *o;
	const char **ops, **errs, **tails, **wake, *p[11];
	int64_t *ids, *att, *delay, *maxa, *ex, *sig;
	char *arr[10], opc[CQ_BATCH][2];
	size_t n = 0, i;

	if (cluster_st.flushing || cluster_st.lease == NULL ||
	    !pgconn_is_ready(cluster_st.lease))
		return;
	TAILQ_FOREACH(o, &cluster_st.outbox, entry)
		n += !o->sent;
	if (n == 0)
		return;
	if (n > CQ_BATCH)
		n = CQ_BATCH;
	a = xcalloc(1, sizeof(*a));
	a->v = xcalloc(n, sizeof(*a->v));
	ids = xcalloc(n, sizeof(*ids));
	att = xcalloc(n, sizeof(*att));
	delay = xcalloc(n, sizeof(*delay));
	maxa = xcalloc(n, sizeof(*maxa));
	ex = xcalloc(n, sizeof(*ex));
	sig = xcalloc(n, sizeof(*sig));
	ops = xcalloc(n, sizeof(*ops));
	errs = xcalloc(n, sizeof(*errs));
	tails = xcalloc(n, sizeof(*tails));
	wake = xcalloc(n, sizeof(*wake));
	TAILQ_FOREACH(o, &cluster_st.outbox, entry) {
		if (o->sent)
			continue;
		if (a->n == n)
			break;
		i = a->n++;
		a->v[i] = o;
		o->sent = 1;
		ids[i] = o->id;
		att[i] = o->attempts;
		opc[i][0] = o->op;
		opc[i][1] = '\0';
		ops[i] = opc[i];
		delay[i] = o->delay_ms;
		maxa[i] = o->max_attempts;
		ex[i] = o->code;
		sig[i] = o->sig;
		errs[i] = o->error != NULL ? o->error : "";
		tails[i] = o->tail != NULL ? o->tail : "\\x";
		wake[i] = o->wake ? "t" : "f";
	}
	arr[0] = pg_array_int(ids, n);
	arr[1] = pg_array_int(att, n);
	arr[2] = pg_array_text(ops, n);
	arr[3] = pg_array_int(delay, n);
	arr[4] = pg_array_int(maxa, n);
	arr[5] = pg_array_int(ex, n);
	arr[6] = pg_array_int(sig, n);
	arr[7] = pg_array_text(errs, n);
	arr[8] = pg_array_text(tails, n);
	arr[9] = pg_array_text(wake, n);
	p[0] = cluster_st.cf->node_name;
	for (i = 0; i < 10; i++)
		p[i + 1] = arr[i];
	cluster_st.flushing = 1;
	pgconn_query(cluster_st.lease, 0, pg_q_outcomes, 11, p, cq_flushed, a);
	for (i = 0; i < 10; i++)
		free(arr[i]);
	free(ids);
	free(att);
	free(delay);
	free(maxa);
	free(ex);
	free(sig);
	free(ops);
	free(errs);
	free(tails);
	free(wake);
}

/* The message of slot in is no longer held here: no fence, no renew. */
static void
cq_unbind(struct lease_slot *s)
{
	if (s == NULL || s->msg == 0)
		return;
	s->msg = 0;
	s->st = LEASE_NONE;
	cluster_timers_off(s);
	if (s->pgid > 1)
		keeper_del(s->key);
	s->pgid = 0;
}

/* An outcome of message id (attempt attempts) into the outbox. */
static struct outcome *
cq_outcome(int64_t id, int attempts, char op, int wake)
{
	struct outcome *o = xcalloc(1, sizeof(*o));

	o->id = id;
	o->attempts = attempts;
	o->op = op;
	o->wake = wake;
	o->code = -1;
	o->sig = -1;
	TAILQ_INSERT_TAIL(&cluster_st.outbox, o, entry);
	return (o);
}

/* A message claimed for no slot (it stopped meanwhile): given back. */
void
cluster_queue_giveback(struct queue_msg *m)
{
	(void)cq_outcome(m->id, m->attempts, 'r', 0);
	queue_msg_clear(m);
	cq_flush();
}

/* ---- claims ---- */

struct claim_arg {
	char *job;
	int64_t job_id;
	cluster_claimed_fn got;
};

static void
cq_claimed(void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct claim_arg *a = arg;
	struct job *j = job_find(a->job), *same = j;
	struct queue_msg *msgs;
	int row, nrows = res != NULL ? pgres_ntuples(res) : 0, n = 0;
	int64_t due = 0;
	size_t len;
	void *p;

	cluster_st.claims--;
	if (j != NULL &&
	    (j->cluster_id != a->job_id || j->spec->kind != CONF_KIND_QUEUE))
		j = NULL;
	if (res == NULL)
		log_warnx("%s: claiming messages: %s", a->job, err);
	msgs = xcalloc((size_t)nrows + 1, sizeof(*msgs));
	for (row = 0; row < nrows; row++) {
		if (pgres_value(res, row, 0) == NULL) {
			/* Fewer than asked: when the next one is due. */
			if (pgres_value(res, row, 3) != NULL)
				due = store_now() +
				    pgres_int(res, row, 3, 0) * 1000;
			continue;
		}
		if ((p = pg_bytea_decode(pgres_value(res, row, 2), &len)) ==
		    NULL) {
			p = xstrdup("");
			len = 0;
		}
		msgs[n].id = pgres_int(res, row, 0, 0);
		msgs[n].attempts = (int)pgres_int(res, row, 1, 0);
		msgs[n].payload = p;
		msgs[n].len = len;
		msgs[n].last_exit = -1;
		msgs[n].last_signal = -1;
		n++;
	}
	if (j == NULL) {
		/* The job went or changed meanwhile: the messages go back. */
		for (row = 0; row < n; row++)
			cluster_queue_giveback(&msgs[row]);
		if (same != NULL)
			same->claiming = 0; /* its next claim may go */
	} else
		a->got(j, msgs, n, sent, res == NULL ? -1 : due);
	for (row = 0; row < n; row++)
		queue_msg_clear(&msgs[row]);
	free(msgs);
	free(a->job);
	free(a);
	cq_shutdown_check(); /* what it gave back is in the outbox */
}

/*
 * Claim at most nfree messages of queue job j for this node; got is
 * called with them (it takes each message it binds, and gives back the
 * others) once the claim is committed.  0, or -1 when no claim can be
 * sent now (the work connection is not ready, the job not registered):
 * the connection's return kicks every job.
 */
int
cluster_queue_claim(struct job *j, int nfree, cluster_claimed_fn got)
{
	struct claim_arg *a;
	const char *p[5];
	char id[32], nf[16], cap[16];

	/* A drained node takes no message (undrained, every job kicks). */
	if (cluster_st.cf == NULL || j->cluster_id == 0 ||
	    !pgconn_is_ready(cluster_st.work) || cluster_st.drained ||
	    !cluster_placed(j->spec))
		return (-1);
	snprintf(id, sizeof(id), "%" PRId64, j->cluster_id);
	snprintf(nf, sizeof(nf), "%d", nfree);
	snprintf(cap, sizeof(cap), "%d", j->spec->cluster_concurrency);
	p[0] = id;
	p[1] = nf;
	p[2] = cluster_st.cf->node_name;
	p[3] = cluster_st.ttl_ms;
	p[4] = cap;
	a = xcalloc(1, sizeof(*a));
	a->job = xstrdup(j->name);
	a->job_id = j->cluster_id;
	a->got = got;
	cluster_st.claims++;
	pgconn_query(cluster_st.work, 0, pg_q_claim, 5, p, cq_claimed, a);
	return (0);
}

/*
 * The message in in->q.msg, claimed at sent, is slot in's: trusted as a
 * lease answered at sent, renewed with the node's leases, fenced with
 * them.
 */
void
cluster_queue_bind(struct inst *in, uint64_t sent)
{
	struct lease_slot *s = cluster_slot(in);

	s->msg = in->q.msg.id;
	s->epoch = in->q.msg.attempts;
	s->st = LEASE_HELD;
	s->want = 0;
	cluster_trust(s, sent);
}

/*
 * A renew at sent answered for the messages of ids (attempts att), n of
 * them; seen[i] says which came back.  One missing while still trusted
 * was deleted: its run goes on, its outcome is dropped.
 */
void
cluster_queue_renewed(const int64_t *ids, const int64_t *att, const char *seen,
    size_t n, uint64_t sent)
{
	struct lease_slot *s;
	size_t i;

	LIST_FOREACH(s, &cluster_st.slots, entry) {
		if (s->msg == 0 || s->st != LEASE_HELD)
			continue;
		for (i = 0; i < n; i++)
			if (ids[i] == s->msg && att[i] == s->epoch)
				break;
		if (i == n)
			continue; /* claimed after the renew went */
		if (seen[i]) {
			cluster_trust(s, sent);
			continue;
		}
		log_info("%s: message %" PRId64 " was deleted while it ran; "
		         "its outcome will be dropped",
		    s->in->label, s->msg);
		s->in->q.deleted = 1;
		cq_unbind(s);
	}
}

/* ---- rescue and wake-ups ---- */

static void
cq_rescued(void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct job *j;
	int row, nrows;
	int64_t job_id;

	cluster_st.rescuing = 0;
	if (res == NULL) {
		log_debug("cluster: rescue: %s", err);
		return;
	}
	nrows = pgres_ntuples(res);
	for (row = 0; row < nrows; row++) {
		job_id = pgres_int(res, row, 0, 0);
		j = NULL;
		RB_FOREACH(j, job_tree, &vigild.jobs)
			if (j->cluster_id == job_id && j->spec->cluster)
				break;
		log_warnx("%s: message %lld rescued: its node stopped "
		          "renewing; %s",
		    j != NULL ? j->name : "cluster", pgres_int(res, row, 1, 0),
		    pgres_int(res, row, 2, 0) == QUEUE_DEAD ?
		        "dead: out of attempts" :
		        "available again");
	}
}

/* Has this node a cluster queue job? */
static int
cq_any(void)
{
	struct job *j;

	RB_FOREACH(j, job_tree, &vigild.jobs)
		if (j->spec->cluster && j->spec->kind == CONF_KIND_QUEUE)
			return (1);
	return (0);
}

/* Each renew tick: the outbox, the rescue. */
void
cluster_queue_tick(void)
{
	const char *p[1];

	if (cluster_st.cf == NULL)
		return;
	cq_flush();
	if (cluster_st.rescuing || !cq_any() ||
	    !pgconn_is_ready(cluster_st.work))
		return;
	p[0] = "0";
	cluster_st.rescuing = 1;
	pgconn_query(cluster_st.work, 0, pg_q_rescue, 1, p, cq_rescued, NULL);
}

/* Kick the dispatcher of cluster queue job job_id (0: every one). */
void
cluster_queue_kick(int64_t job_id)
{
	struct job *j;

	RB_FOREACH(j, job_tree, &vigild.jobs) {
		if (!j->spec->cluster || j->spec->kind != CONF_KIND_QUEUE ||
		    (job_id != 0 && j->cluster_id != job_id) ||
		    j->kind == NULL || j->kind->kick == NULL)
			continue;
		j->kind->kick(j);
	}
}

/* The work connection is (back) up: every queue claims. */
void
cluster_queue_ready(void)
{
	cluster_queue_kick(0);
}

/* The lease connection is (back) up: the outbox goes. */
void
cluster_queue_flush(void)
{
	cluster_st.flushing = 0;
	cq_flush();
}

static int
cq_shutdown_timeout(sd_event_source *src, uint64_t usec, void *arg)
{
	void (*done)(void) = cluster_st.queue_shutdown;
	size_t n = 0;
	struct outcome *o;

	TAILQ_FOREACH(o, &cluster_st.outbox, entry)
		n++;
	if (n > 0)
		log_warnx("cluster: %zu message outcomes not reported in time "
		          "(the messages are rescued once their claims "
		          "expire)",
		    n);
	if (cluster_st.holds > 0)
		log_warnx("cluster: %d cluster-wide stops or starts not "
		          "recorded in time: they hold on this node only",
		    cluster_st.holds);
	cluster_st.queue_shutdown = NULL;
	cluster_st.holds_settled = NULL;
	if (done != NULL)
		cluster_shutdown(done);
	return (0);
}

/*
 * At the end of the shutdown (every run gone): wait for the claims on
 * their way (what they took goes back), the operator's stops and starts
 * on their way, and report the outbox, for at most one query timeout,
 * then give the leases back (cluster_shutdown), then done.
 */
void
cluster_queue_shutdown(void (*done)(void))
{
	if (cluster_st.cf == NULL ||
	    (TAILQ_EMPTY(&cluster_st.outbox) && cluster_st.claims == 0 &&
	        cluster_st.holds == 0)) {
		cluster_shutdown(done);
		return;
	}
	cluster_st.queue_shutdown = done;
	cluster_st.holds_settled = cq_shutdown_check;
	if (cluster_st.queue_shutdown_timer == NULL)
		evloop_timer_in(&cluster_st.queue_shutdown_timer,
		    CLOCK_BOOTTIME, cluster_st.t.query_timeout, 1000,
		    cq_shutdown_timeout, NULL);
	cq_flush();
}

/* At exit, after the connections: what the outbox still holds goes. */
void
cluster_queue_close(void)
{
	struct outcome *o;

	while ((o = TAILQ_FIRST(&cluster_st.outbox)) != NULL) {
		TAILQ_REMOVE(&cluster_st.outbox, o, entry);
		cq_outcome_free(o);
	}
	cluster_st.queue_shutdown_timer =
	    sd_event_source_disable_unref(cluster_st.queue_shutdown_timer);
	cluster_st.queue_shutdown = NULL;
	cluster_st.holds_settled = NULL;
}

/* ---- the state backend: outcomes of runs ---- */

static void
cq_run_started(struct inst *in)
{
	state_sqlite.run_started(in);
}

static void
cq_run_ready(struct inst *in)
{
	state_sqlite.run_ready(in);
}

static void
cq_run_ended(struct inst *in, int status, const char *reason)
{
	state_sqlite.run_ended(in, status, reason);
}

static void
cq_run_skipped(struct inst *in, int64_t at)
{
	state_sqlite.run_skipped(in, at);
}

static int64_t
cq_last_start(const char *job)
{
	return (state_sqlite.last_start(job));
}

static int
cq_history(const char *job, int instance, int n, store_run_cb cb, void *arg,
    char **cause)
{
	return (state_sqlite.history(job, instance, n, cb, arg, cause));
}

static void
cq_intent(struct inst *in, int held, int started, long uid)
{
	state_sqlite.intent(in, held, started, uid);
}

static void
cq_nothing(void)
{
}

/* The outcomes of a loop turn go together: one statement. */
static void
cq_batch_end(void)
{
	cq_flush();
}

static struct queue *
cq_queue(void)
{
	return (state_sqlite.queue());
}

static void
cq_queue_failed(char *cause)
{
	state_sqlite.queue_failed(cause);
}

static void
cq_queue_done(const struct inst *in, int64_t id)
{
	cq_unbind(in->lease);
	(void)cq_outcome(id, in->q.msg.attempts, 'd',
	    in->job->spec->cluster_concurrency > 0);
	cq_flush();
}

static void
cq_queue_release(const struct inst *in, int64_t id)
{
	cq_unbind(in->lease);
	(void)cq_outcome(id, in->q.msg.attempts, 'r', 0);
	cq_flush();
}

static void
cq_queue_fail(const struct inst *in, int64_t id, int max_attempts,
    int64_t retry_at, int code, int sig, const char *what, const char *tail,
    size_t len)
{
	struct outcome *o;
	int64_t now = store_now();

	cq_unbind(in->lease);
	o = cq_outcome(id, in->q.msg.attempts, 'f', 0);
	o->max_attempts = max_attempts;
	o->delay_ms = retry_at > now ? (retry_at - now) / 1000 : 0;
	o->code = code;
	o->sig = sig;
	/* "" for none: the report's statement stores it as NULL. */
	o->error = xstrdup(what != NULL ? what : "");
	o->tail = pg_bytea(tail, len);
	cq_flush();
}

const struct state_ops state_cluster = {
	.name = "cluster",
	.open = cq_nothing,
	.close = cq_nothing,
	.batch_begin = cq_nothing,
	.batch_end = cq_batch_end,
	.run_started = cq_run_started,
	.run_ready = cq_run_ready,
	.run_ended = cq_run_ended,
	.run_skipped = cq_run_skipped,
	.last_start = cq_last_start,
	.history = cq_history,
	.intent = cq_intent,
	.intents_load = cq_nothing,
	.queue = cq_queue,
	.queue_failed = cq_queue_failed,
	.queue_done = cq_queue_done,
	.queue_release = cq_queue_release,
	.queue_fail = cq_queue_fail,
};

/* ---- the slots' claim: the local lock; a run only on a trusted claim ---- */

static enum claim_status
claim_msg_acquire(struct inst *in, struct claim_result *r)
{
	return (claim_local.acquire(in, r));
}

/* A run of a message started: the keeper knows its group. */
static void
claim_msg_renew(struct inst *in, const struct lock_holder *h)
{
	struct lease_slot *s = in->lease;

	claim_local.renew(in, h);
	if (s == NULL || s->msg == 0 || s->st != LEASE_HELD)
		return;
	s->pgid = h->pgid > 1 ? h->pgid : h->pid;
	cluster_keeper_update(s); /* the cgroup came with the announcement */
}

/* A run of a message is about to be spawned: its child tells the keeper. */
static void
claim_msg_announce(struct inst *in, int cg_fd, struct spawn_announce *a)
{
	struct lease_slot *s = in->lease;

	if (s != NULL && s->msg != 0 && s->st == LEASE_HELD)
		cluster_keeper_announce(s, cg_fd, a);
}

static void
claim_msg_release(struct inst *in)
{
	claim_local.release(in);
	if (in->lease != NULL && in->lease->pgid > 1) {
		keeper_del(in->lease->key);
		in->lease->pgid = 0;
	}
}

static pid_t
claim_msg_holder(struct inst *in, int fd)
{
	return (claim_local.holder(in, fd));
}

static int
claim_msg_held_elsewhere(const struct job *j)
{
	return (claim_local.held_elsewhere(j));
}

/* A message runs only on a claim trusted for a whole stop time. */
static int
claim_msg_trusted(struct inst *in, char **cause)
{
	if (cluster_trusted(in->lease))
		return (1);
	*cause = xstrdup("the message's cluster claim is no longer trusted");
	return (0);
}

const struct claim_ops claim_cluster_msg = {
	.name = "cluster-queue",
	.acquire = claim_msg_acquire,
	.renew = claim_msg_renew,
	.release = claim_msg_release,
	.holder = claim_msg_holder,
	.held_elsewhere = claim_msg_held_elsewhere,
	.trusted = claim_msg_trusted,
	.announce = claim_msg_announce,
};

#endif /* HAVE_LIBPQ */
