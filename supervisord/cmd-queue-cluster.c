/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The queue verbs on cluster queue jobs, whose messages are in
 * PostgreSQL: the same verbs and output as for state.db's queue (the
 * rows are printed by cmd-queue-print.c for both), answered once the
 * database has answered (the handlers return CMD_WAIT; a reply comes in
 * a cmd_later context).  Any node answers for every node: queue also shows which
 * nodes run the messages.  Ids of cluster messages start at
 * PG_MSG_ID_FIRST, so retry and delete tell them from state.db's.
 */

#include "config.h"

#include <sys/types.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "cluster.h"
#include "cmd.h"
#include "conf.h"
#include "jobs-view.h"
#include "json.h"
#include "pgstate.h"
#include "queue.h"
#include "state.h"
#include "store.h"
#include "xmalloc.h"

/* ---- requests to the database ---- */

/* A request under way: its reply, what its answers need. */
struct cq_req {
	struct cmd_ctx *l; /* the reply (cmd_later) */
	int pending;       /* statements not answered yet */
	int failed;
	/* enqueue */
	char *name;
	char *key;
	/* queue: every job named, local or not, in order */
	size_t njobs;
	char **names;
	int64_t *ids; /* cluster id, 0: a local queue */
	struct queue_counts *counts;
	char **nodes;
	int width;
	/* queue --dead */
	size_t shown;
};

static void
cq_req_free(struct cq_req *r)
{
	size_t i;

	for (i = 0; i < r->njobs; i++) {
		free(r->names[i]);
		free(r->nodes[i]);
	}
	free(r->names);
	free(r->ids);
	free(r->counts);
	free(r->nodes);
	free(r->name);
	free(r->key);
	free(r);
}

/* One answer came; the last one ends the reply. */
static void
cq_answered(struct cq_req *r)
{
	if (--r->pending > 0)
		return;
	if (r->failed && r->l->code == 0)
		r->l->code = EX_UNAVAILABLE;
	cmd_later_end(r->l);
	cq_req_free(r);
}

/* A statement failed: say so once; the reply ends with EX_UNAVAILABLE. */
static int
cq_failed(struct cq_req *r, const struct pgres *res, const char *err)
{
	if (res != NULL)
		return (0);
	if (!r->failed) {
		proto_buf_clear(&r->l->out);
		cmd_error(r->l, "%s: %s", r->l->entry->name, err);
	}
	r->failed = 1;
	return (1);
}

/* Send a statement for request r (a later context made at the first). */
static int
cq_ask(struct cmd_ctx *ctx, struct cq_req *r, const char *sql, int n,
    const char *const *p, pgconn_done_fn done)
{
	char *cause = NULL;

	if (cluster_ask(sql, n, p, done, r, &cause) == -1) {
		cmd_error(ctx, "%s: %s", ctx->entry->name, cause);
		free(cause);
		ctx->code = EX_UNAVAILABLE;
		return (-1);
	}
	if (r->l == NULL)
		r->l = cmd_later(ctx);
	r->pending++;
	return (0);
}

/* The request could not be sent at all: nothing waits. */
static enum cmd_retval
cq_not_sent(struct cq_req *r)
{
	if (r->pending == 0) {
		cq_req_free(r);
		return (CMD_ERROR);
	}
	return (CMD_WAIT);
}

/* ---- enqueue ---- */

static void
cq_enqueue_done(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct cq_req *r = arg;
	const char *created;

	if (!cq_failed(r, res, err)) {
		created = pgres_value(res, 0, 1);
		(void)cmd_queue_enqueued(r->l, r->name,
		    created == NULL || strcmp(created, "t") != 0,
		    pgres_int(res, 0, 0, 0), r->key);
	}
	cq_answered(r);
}

/*
 * enqueue on a cluster queue: the id once PostgreSQL has committed it
 * (synchronous_commit on); every node is told by NOTIFY.  delay_us and
 * priority as cmd_enqueue_check read them.
 */
enum cmd_retval
cmd_cq_enqueue(struct cmd_ctx *ctx, struct job *j, const void *payload,
    size_t len, long long delay_us, long long priority)
{
	struct cq_req *r = xcalloc(1, sizeof(*r));
	const char *p[5];
	char delay[32], prio[32], *hex;
	int rc;

	r->name = xstrdup(job_name(j));
	r->key = ctx->opts['u'] ? xstrdup(ctx->optarg['u']) : NULL;
	hex = pg_bytea(payload, len);
	snprintf(delay, sizeof(delay), "%lld milliseconds", delay_us / 1000);
	snprintf(prio, sizeof(prio), "%lld", priority);
	p[0] = job_name(j);
	p[1] = hex;
	p[2] = delay;
	p[3] = r->key;
	p[4] = prio;
	rc = cq_ask(ctx, r, pg_q_enqueue, 5, p, cq_enqueue_done);
	free(hex);
	return (rc == -1 ? cq_not_sent(r) : CMD_WAIT);
}

/* ---- queue ---- */

/* Every count is in: the table in the order the jobs were named. */
static void
cq_counts_print(struct cq_req *r)
{
	size_t i;
	int nodes = 0;

	for (i = 0; i < r->njobs; i++)
		nodes |= r->ids[i] != 0;
	cmd_queue_counts_head(r->l, r->width, nodes);
	for (i = 0; i < r->njobs; i++)
		cmd_queue_counts_print(r->l, r->names[i], r->width,
		    &r->counts[i],
		    r->ids[i] == 0          ? NULL :
		        r->nodes[i] != NULL ? r->nodes[i] :
		                              "");
	cmd_queue_counts_tail(r->l);
}

static void
cq_counts_done(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct cq_req *r = arg;
	int row, nrows;
	size_t i;
	int64_t id;

	if (!cq_failed(r, res, err)) {
		nrows = pgres_ntuples(res);
		for (row = 0; row < nrows; row++) {
			id = pgres_int(res, row, 0, 0);
			for (i = 0; i < r->njobs; i++) {
				if (r->ids[i] != id)
					continue;
				r->counts[i].available =
				    (size_t)pgres_int(res, row, 1, 0);
				r->counts[i].delayed =
				    (size_t)pgres_int(res, row, 2, 0);
				r->counts[i].running =
				    (size_t)pgres_int(res, row, 3, 0);
				r->counts[i].dead =
				    (size_t)pgres_int(res, row, 4, 0);
				if (pgres_value(res, row, 5) != NULL)
					r->nodes[i] =
					    xstrdup(pgres_value(res, row, 5));
			}
		}
		cq_counts_print(r);
	}
	cq_answered(r);
}

/*
 * queue [job ...] where some are cluster queues: the local counts now,
 * the cluster ones in one statement, the table once it answers.
 */
enum cmd_retval
cmd_cq_counts(struct cmd_ctx *ctx, struct queue *q)
{
	struct cq_req *r = xcalloc(1, sizeof(*r));
	int64_t now = store_now();
	int64_t *cids;
	const char *p[1];
	char *cause = NULL, *arr;
	size_t i, n = 0;
	int rc;

	r->njobs = ctx->njobs;
	r->names = xcalloc(r->njobs + 1, sizeof(*r->names));
	r->ids = xcalloc(r->njobs + 1, sizeof(*r->ids));
	r->counts = xcalloc(r->njobs + 1, sizeof(*r->counts));
	r->nodes = xcalloc(r->njobs + 1, sizeof(*r->nodes));
	cids = xcalloc(r->njobs + 1, sizeof(*cids));
	r->width = 3;
	for (i = 0; i < r->njobs; i++) {
		r->names[i] = xstrdup(job_name(ctx->jobs[i]));
		if ((int)strlen(r->names[i]) > r->width)
			r->width = (int)strlen(r->names[i]);
		if (job_spec_of(ctx->jobs[i])->cluster) {
			/* Not yet registered: an id no row has. */
			r->ids[i] = job_cluster_id(ctx->jobs[i]) != 0 ?
			    job_cluster_id(ctx->jobs[i]) :
			    -1;
			cids[n++] = r->ids[i];
			continue;
		}
		if (q == NULL) {
			cmd_error(ctx, "queue: state.db is not available");
			ctx->code = CMD_EXIT_FAILED;
			free(cids);
			cq_req_free(r);
			return (CMD_ERROR);
		}
		if (queue_counts(q, r->names[i], now, &r->counts[i], &cause) ==
		    -1) {
			cmd_error(ctx, "queue: %s", cause);
			state_queue_failed(cause);
			ctx->code = CMD_EXIT_FAILED;
			free(cids);
			cq_req_free(r);
			return (CMD_ERROR);
		}
	}
	arr = pg_array_int(cids, n);
	p[0] = arr;
	rc = cq_ask(ctx, r, pg_q_counts, 1, p, cq_counts_done);
	free(arr);
	free(cids);
	return (rc == -1 ? cq_not_sent(r) : CMD_WAIT);
}

/* ---- queue --dead ---- */

static void
cq_dead_done(void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct cq_req *r = arg;
	struct queue_msg m;
	int row, nrows;

	if (!cq_failed(r, res, err)) {
		cmd_queue_dead_head(r->l, r->name);
		nrows = pgres_ntuples(res);
		for (row = 0; row < nrows; row++) {
			memset(&m, 0, sizeof(m));
			m.id = pgres_int(res, row, 0, 0);
			m.attempts = (int)pgres_int(res, row, 1, 0);
			m.last_exit = (int)pgres_int(res, row, 2, -1);
			m.last_signal = (int)pgres_int(res, row, 3, -1);
			m.last_error =
			    (char *)(uintptr_t)pgres_value(res, row, 4);
			m.created = pgres_int(res, row, 5, 0);
			m.updated = pgres_int(res, row, 6, 0);
			m.priority = (int)pgres_int(res, row, 7, 0);
			m.len = (size_t)pgres_int(res, row, 8, 0);
			m.state = QUEUE_DEAD;
			cmd_queue_dead_print(r->l, &m);
		}
		r->shown = (size_t)nrows;
	}
	cq_answered(r);
}

static void
cq_dead_total(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct cq_req *r = arg;

	if (!cq_failed(r, res, err))
		cmd_queue_dead_tail(
		    r->l, r->name, r->shown, (size_t)pgres_int(res, 0, 4, 0));
	cq_answered(r);
}

/* queue --dead [-n n] job, a cluster queue: the listing, then the total. */
enum cmd_retval
cmd_cq_dead(struct cmd_ctx *ctx, struct job *j, long n)
{
	struct cq_req *r = xcalloc(1, sizeof(*r));
	const char *p[2];
	char id[32], lim[32], arr[48];

	r->name = xstrdup(job_name(j));
	snprintf(id, sizeof(id), "%" PRId64,
	    job_cluster_id(j) != 0 ? job_cluster_id(j) : -1);
	snprintf(lim, sizeof(lim), "%ld", n);
	snprintf(arr, sizeof(arr), "{%s}", id);
	p[0] = id;
	p[1] = lim;
	if (cq_ask(ctx, r, pg_q_dead, 2, p, cq_dead_done) == -1)
		return (cq_not_sent(r));
	p[0] = arr;
	(void)cq_ask(ctx, r, pg_q_counts, 1, p, cq_dead_total);
	return (CMD_WAIT);
}

/* ---- retry, delete ---- */

struct cq_id {
	struct cq_req *r;
	int64_t id;
};

static void
cq_retried(void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct cq_id *a = arg;
	struct cq_req *r = a->r;

	if (res == NULL && err != NULL &&
	    strstr(err, "message_unique") != NULL) {
		/* Not the database's fault: its key is taken since. */
		cmd_error(r->l,
		    "%lld: its unique key is taken by a message queued since",
		    (long long)a->id);
		r->l->code = CMD_EXIT_FAILED;
	} else if (!cq_failed(r, res, err) && pgres_ntuples(res) == 0) {
		cmd_error(r->l, "%lld: no such message, or it is running",
		    (long long)a->id);
		r->l->code = CMD_EXIT_FAILED;
	}
	free(a);
	cq_answered(r);
}

static void
cq_deleted(void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct cq_id *a = arg;
	struct cq_req *r = a->r;

	if (!cq_failed(r, res, err) && pgres_ntuples(res) == 0) {
		cmd_error(r->l, "%lld: no such message", (long long)a->id);
		r->l->code = CMD_EXIT_FAILED;
	}
	free(a);
	cq_answered(r);
}

/*
 * retry (retry) or delete ids[0..n) of cluster queues, one statement
 * each: a retried message wakes every node (NOTIFY); the node that runs
 * a deleted one finds out at its next renew (its run goes on, its
 * outcome is dropped).  The reply ends once all have answered, with
 * ctx->code as the caller left it (state.db's ids) unless one fails.
 */
enum cmd_retval
cmd_cq_ids(struct cmd_ctx *ctx, int retry, const int64_t *ids, size_t n)
{
	struct cq_req *r = xcalloc(1, sizeof(*r));
	struct cq_id *a;
	const char *p[1];
	char id[32], *cause = NULL;
	size_t i;

	for (i = 0; i < n; i++) {
		a = xcalloc(1, sizeof(*a));
		a->r = r;
		a->id = ids[i];
		snprintf(id, sizeof(id), "%" PRId64, ids[i]);
		p[0] = id;
		if (cluster_ask(retry ? pg_q_retry : pg_q_delete, 1, p,
		        retry ? cq_retried : cq_deleted, a, &cause) == -1) {
			/* Out of reach (at the first: they all wait in
			 * the same queue once one is sent). */
			cmd_error(r->l != NULL ? r->l : ctx, "%s: %s",
			    ctx->entry->name, cause);
			free(cause);
			free(a);
			if (r->l == NULL) {
				ctx->code = EX_UNAVAILABLE;
				cq_req_free(r);
				return (CMD_ERROR);
			}
			r->l->code = EX_UNAVAILABLE;
			break;
		}
		if (r->l == NULL) {
			r->l = cmd_later(ctx);
			r->l->code = ctx->code;
		}
		r->pending++;
	}
	return (CMD_WAIT);
}

/* ---- purge, kick ---- */

static void
cq_purged(void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct cq_req *r = arg;
	size_t n;

	if (!cq_failed(r, res, err)) {
		n = (size_t)pgres_int(res, 0, 0, 0);
		if (r->l->json) {
			json_object_begin(&r->l->jw);
			json_key(&r->l->jw, "removed");
			json_uint(&r->l->jw, n);
			json_object_end(&r->l->jw);
			cmd_json_end(r->l);
		} else
			cmd_print(r->l, "removed: %zu\n", n);
	}
	cq_answered(r);
}

/* purge [--dead] job, a cluster queue (its running messages stay). */
enum cmd_retval
cmd_cq_purge(struct cmd_ctx *ctx, struct job *j, int dead_only)
{
	struct cq_req *r = xcalloc(1, sizeof(*r));
	const char *p[2];
	char id[32];

	snprintf(id, sizeof(id), "%" PRId64,
	    job_cluster_id(j) != 0 ? job_cluster_id(j) : -1);
	p[0] = id;
	p[1] = dead_only ? "true" : "false";
	if (cq_ask(ctx, r, pg_q_purge, 2, p, cq_purged) == -1)
		return (cq_not_sent(r));
	return (CMD_WAIT);
}

static void
cq_kicked(void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct cq_req *r = arg;

	(void)cq_failed(r, res, err);
	cq_answered(r);
}

/* kick job, a cluster queue: every node's dispatcher (NOTIFY). */
enum cmd_retval
cmd_cq_kick(struct cmd_ctx *ctx, struct job *j)
{
	struct cq_req *r = xcalloc(1, sizeof(*r));
	const char *p[1];
	char id[32];

	snprintf(id, sizeof(id), "%" PRId64,
	    job_cluster_id(j) != 0 ? job_cluster_id(j) : -1);
	p[0] = id;
	if (cq_ask(ctx, r, pg_q_kick, 1, p, cq_kicked) == -1)
		return (cq_not_sent(r));
	return (CMD_WAIT);
}
