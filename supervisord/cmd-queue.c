/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The queue verbs, over the queue table of state.db (lib/queue.c):
 * enqueue a message, count a queue's messages or list its dead ones, retry
 * or delete messages by id, purge a queue, and kick a queue job (tell its
 * dispatcher that messages may be waiting, after vigilctl enqueued one
 * itself while vigild was out of reach).
 */

#include "config.h"

#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "enqueue.h"
#include "json.h"
#include "signame.h"
#include "timefmt.h"
#include "vigild.h"
#include "xmalloc.h"

/* queue --dead shows this many messages unless -n says otherwise. */
#define CMD_QUEUE_DEAD_DEFAULT 1000
#define CMD_QUEUE_DEAD_MAX 1000000

static enum cmd_retval cmd_enqueue_check(struct cmd_ctx *);
static enum cmd_retval cmd_enqueue_exec(struct cmd_ctx *);
static enum cmd_retval cmd_queue_check(struct cmd_ctx *);
static enum cmd_retval cmd_queue_exec(struct cmd_ctx *);
static enum cmd_retval cmd_retry_exec(struct cmd_ctx *);
static enum cmd_retval cmd_delete_exec(struct cmd_ctx *);
static enum cmd_retval cmd_purge_exec(struct cmd_ctx *);
static enum cmd_retval cmd_kick_exec(struct cmd_ctx *);

static const struct cmd_opt cmd_queue_opts[] = {
	{ 'n', CMD_OPT_INT, 1, CMD_QUEUE_DEAD_MAX },
	{ 0, CMD_OPT_STRING, 0, 0 },
};

const struct cmd_entry cmd_enqueue_entry = {
	.name = "enqueue",
	.usage = "[--delay DURATION] [--unique KEY] [--priority N] job "
	         "[payload | -]",
	.optstring = "d:u:p:",
	.longopts = "delay=d,unique=u,priority=p",
	.min_args = 1,
	.max_args = 2,
	.target = CMD_TARGET_QUEUES,
	.target_n = 1,
	.check = cmd_enqueue_check,
	.help = "add a message to a queue job (- : the payload from stdin)",
	.exec = cmd_enqueue_exec,
};

const struct cmd_entry cmd_queue_entry = {
	.name = "queue",
	.usage = "[--dead [-n N]] [job ...]",
	.optstring = "Dn:",
	.longopts = "dead=D,limit=n",
	.typed = cmd_queue_opts,
	.min_args = 0,
	.max_args = -1,
	.flags = CMD_READONLY,
	.target = CMD_TARGET_QUEUES,
	.target_flags = CMD_TARGET_DEFAULT_ALL,
	.check = cmd_queue_check,
	.help = "count the messages of queue jobs (-D: list a job's dead ones)",
	.exec = cmd_queue_exec,
};

const struct cmd_entry cmd_retry_entry = {
	.name = "retry",
	.usage = "id ...",
	.optstring = "",
	.min_args = 1,
	.max_args = -1,
	.target = CMD_TARGET_IDS,
	.help = "make dead or delayed messages available again, at once",
	.exec = cmd_retry_exec,
};

const struct cmd_entry cmd_delete_entry = {
	.name = "delete",
	.usage = "id ...",
	.optstring = "",
	.min_args = 1,
	.max_args = -1,
	.target = CMD_TARGET_IDS,
	.help = "delete messages from their queue",
	.exec = cmd_delete_exec,
};

const struct cmd_entry cmd_purge_entry = {
	.name = "purge",
	.usage = "[--dead] job",
	.optstring = "D",
	.longopts = "dead=D",
	.min_args = 1,
	.max_args = 1,
	.target = CMD_TARGET_QUEUES,
	.help =
	    "delete a queue job's waiting and dead messages (-D: dead only)",
	.exec = cmd_purge_exec,
};

const struct cmd_entry cmd_kick_entry = {
	.name = "kick",
	.usage = "job",
	.optstring = "",
	.min_args = 1,
	.max_args = 1,
	.target = CMD_TARGET_QUEUES,
	.help = "start work on a queue job's waiting messages",
	.exec = cmd_kick_exec,
};

/* State of a queue --dead listing, for the row callback. */
struct cmd_queue_dead {
	struct cmd_ctx *ctx;
	int count;
};

/* The queue of state.db, or NULL after saying it is not available. */
static struct queue *
cmd_queue_get(struct cmd_ctx *ctx)
{
	struct queue *q;

	if ((q = state_queue()) == NULL) {
		cmd_error(
		    ctx, "%s: state.db is not available", ctx->entry->name);
		ctx->code = CMD_EXIT_FAILED;
	}
	return (q);
}

/* A queue call failed: report its cause, then hand it to state.c. */
static enum cmd_retval
cmd_queue_failed(struct cmd_ctx *ctx, char *cause)
{
	cmd_error(ctx, "%s: %s", ctx->entry->name, cause ? cause : "failed");
	state_queue_failed(cause);
	ctx->code = CMD_EXIT_FAILED;
	return (CMD_ERROR);
}

/* Tell the dispatcher of every queue job that messages may be ready. */
static void
cmd_queue_kick_all(void)
{
	struct job *j;

	RB_FOREACH(j, job_tree, &vigild.jobs) {
		if (j->spec->kind == CONF_KIND_QUEUE)
			dispatch_kick(j);
	}
}

/*
 * The payload: the operand, or with "-" or none the data sent before.
 * Return 0, or -1 with *why set when the two say different things.
 */
static int
cmd_enqueue_payload(
    struct cmd_ctx *ctx, const void **p, size_t *len, const char **why)
{
	const char *arg = ctx->argc > 1 ? ctx->argv[1] : NULL;

	*why = NULL;
	if (arg != NULL && strcmp(arg, "-") != 0 && ctx->data != NULL)
		*why = "given both as an operand and as data";
	else if (arg != NULL && strcmp(arg, "-") == 0 && ctx->data == NULL)
		*why = "- stands for standard input, and none was sent";
	if (*why != NULL)
		return (-1);
	if (arg != NULL && ctx->data == NULL) {
		*p = arg;
		*len = strlen(arg);
	} else if (ctx->data != NULL) {
		*p = ctx->data;
		*len = ctx->datalen;
	} else {
		*p = "";
		*len = 0;
	}
	return (0);
}

/*
 * Before the job: the payload is sound, and the options and its size pass
 * enqueue_check (as for vigilctl enqueue --direct).  The delay and the
 * priority go to ctx->optnum, where exec reads them.
 */
static enum cmd_retval
cmd_enqueue_check(struct cmd_ctx *ctx)
{
	struct enqueue_req req;
	struct enqueue_opts o;
	const void *p;
	const char *why;
	char *cause = NULL;

	if (cmd_enqueue_payload(ctx, &p, &req.len, &why) == -1)
		return (cmd_usage_error(ctx, "payload", why));
	req.delay = ctx->opts['d'] ? ctx->optarg['d'] : NULL;
	req.priority = ctx->opts['p'] ? ctx->optarg['p'] : NULL;
	req.unique = ctx->opts['u'] ? ctx->optarg['u'] : NULL;
	if (enqueue_check(&req, store_now(), &o, &cause) == -1) {
		ctx->code =
		    errno == EMSGSIZE ? CMD_EXIT_FAILED : CMD_EXIT_USAGE;
		cmd_error(ctx, "%s: %s", ctx->entry->name, cause);
		free(cause);
		return (CMD_ERROR);
	}
	ctx->optnum['d'] = (long long)o.delay;
	ctx->optnum['p'] = o.priority;
	return (CMD_OK);
}

/* Print the outcome of an enqueue: the new id, or the duplicate's. */
static enum cmd_retval
cmd_enqueue_report(struct cmd_ctx *ctx, struct job *j, int dup, int64_t id)
{
	if (ctx->json) {
		json_object_begin(&ctx->jw);
		json_key(&ctx->jw, "id");
		json_int(&ctx->jw, id);
		if (dup) {
			json_key(&ctx->jw, "duplicate");
			json_bool(&ctx->jw, 1);
		}
		json_object_end(&ctx->jw);
		cmd_json_end(ctx);
	} else
		cmd_print(ctx, "%lld\n", (long long)id);
	if (!dup) {
		dispatch_kick(j);
		return (CMD_OK);
	}
	cmd_error(ctx, "%s: a message with key %s is already queued: id %lld",
	    j->name, ctx->optarg['u'], (long long)id);
	ctx->code = CMD_EXIT_FAILED;
	return (CMD_ERROR);
}

/*
 * enqueue [-d delay] [-u key] [-p priority] job [payload | -]: queue a
 * message and print its id once it is committed (synchronous FULL).
 */
static enum cmd_retval
cmd_enqueue_exec(struct cmd_ctx *ctx)
{
	struct queue *q;
	struct job *j = ctx->jobs[0];
	const void *payload;
	const char *why;
	size_t len;
	int64_t now = store_now(), id = 0, existing = 0;
	char *cause = NULL;
	int rc;

	if (cmd_enqueue_payload(ctx, &payload, &len, &why) == -1)
		return (cmd_usage_error(ctx, "payload", why));
	if ((q = cmd_queue_get(ctx)) == NULL)
		return (CMD_ERROR);
	rc = queue_enqueue(q, j->name, payload, len,
	    ctx->opts['u'] ? ctx->optarg['u'] : NULL,
	    (int)cmd_opt_num(ctx, 'p', 0), now + cmd_opt_num(ctx, 'd', 0), now,
	    &id, &existing, &cause);
	if (rc == -1)
		return (cmd_queue_failed(ctx, cause));
	return (cmd_enqueue_report(ctx, j, rc == 1, rc == 1 ? existing : id));
}

/* key: an integer, or null below 0 (none). */
static void
cmd_queue_json_opt(struct json *jw, const char *key, int v)
{
	json_key(jw, key);
	if (v >= 0)
		json_int(jw, v);
	else
		json_null(jw);
}

static void
cmd_queue_dead_json(struct cmd_ctx *ctx, const struct queue_msg *m)
{
	struct json *jw = &ctx->jw;
	const char *name = NULL;
	char num[16];

	if (m->last_signal > 0 &&
	    (name = signame_name(m->last_signal)) == NULL) {
		snprintf(num, sizeof(num), "%d", m->last_signal);
		name = num;
	}
	json_object_begin(jw);
	json_key(jw, "id");
	json_int(jw, m->id);
	json_key(jw, "attempts");
	json_int(jw, m->attempts);
	cmd_queue_json_opt(jw, "last_exit", m->last_exit);
	json_key(jw, "last_signal");
	json_string(jw, name);
	json_key(jw, "last_error");
	json_string(jw, m->last_error);
	json_key(jw, "created_us");
	json_int(jw, m->created);
	json_key(jw, "updated_us");
	json_int(jw, m->updated);
	json_key(jw, "priority");
	json_int(jw, m->priority);
	json_key(jw, "bytes");
	json_uint(jw, m->len);
	json_object_end(jw);
}

static void
cmd_queue_dead_row(const struct queue_msg *m, void *arg)
{
	struct cmd_queue_dead *d = arg;
	char ex[32], upd[TIMEFMT_LEN];

	if (d->ctx->json)
		cmd_queue_dead_json(d->ctx, m);
	else
		cmd_print(d->ctx, "%-10lld %8d %-12s %-23s %s\n",
		    (long long)m->id, m->attempts,
		    cmd_format_exit(
		        m->last_exit, m->last_signal, ex, sizeof(ex)),
		    cmd_format_time(m->updated, upd, sizeof(upd)),
		    m->last_error != NULL ? m->last_error : "-");
	d->count++;
}

/* queue -D [-n count] job: the dead messages of one queue job. */
static enum cmd_retval
cmd_queue_dead(struct cmd_ctx *ctx, struct queue *q, struct job *j, long n)
{
	struct cmd_queue_dead d;
	struct queue_counts c;
	char *cause = NULL;

	d.ctx = ctx;
	d.count = 0;
	if (ctx->json) {
		json_object_begin(&ctx->jw);
		json_key(&ctx->jw, "job");
		json_string(&ctx->jw, j->name);
		json_key(&ctx->jw, "messages");
		json_array_begin(&ctx->jw);
	} else
		cmd_print(ctx, "%-10s %8s %-12s %-23s %s\n", "ID", "ATTEMPTS",
		    "LAST-EXIT", "UPDATED", "ERROR");
	if (queue_list_dead(
	        q, j->name, (int)n, cmd_queue_dead_row, &d, &cause) == -1 ||
	    queue_counts(q, j->name, store_now(), &c, &cause) == -1)
		return (cmd_queue_failed(ctx, cause));
	if (ctx->json) {
		json_array_end(&ctx->jw);
		json_key(&ctx->jw, "total");
		json_uint(&ctx->jw, c.dead);
		json_object_end(&ctx->jw);
		cmd_json_end(ctx);
	} else if (c.dead > (size_t)d.count)
		cmd_error(ctx, "%s: %zu more dead messages not shown (-n)",
		    j->name, c.dead - (size_t)d.count);
	return (CMD_OK);
}

/* One row of the queue table, or one object of its JSON. */
static void
cmd_queue_counts_row(struct cmd_ctx *ctx, const struct job *j, int width,
    const struct queue_counts *c)
{
	struct json *jw = &ctx->jw;

	if (!ctx->json) {
		cmd_print(ctx, "%-*s %9zu %7zu %7zu %7zu\n", width, j->name,
		    c->available, c->delayed, c->running, c->dead);
		return;
	}
	json_object_begin(jw);
	json_key(jw, "job");
	json_string(jw, j->name);
	json_key(jw, "available");
	json_uint(jw, c->available);
	json_key(jw, "delayed");
	json_uint(jw, c->delayed);
	json_key(jw, "running");
	json_uint(jw, c->running);
	json_key(jw, "dead");
	json_uint(jw, c->dead);
	json_object_end(jw);
}

/* queue [job ...]: counts of each named queue job, or of every one. */
static enum cmd_retval
cmd_queue_counts(struct cmd_ctx *ctx, struct queue *q, struct job **v, size_t n)
{
	struct queue_counts c;
	int64_t now = store_now();
	char *cause = NULL;
	size_t i;
	int width = 3;

	for (i = 0; i < n; i++) {
		if ((int)strlen(v[i]->name) > width)
			width = (int)strlen(v[i]->name);
	}
	if (ctx->json) {
		json_object_begin(&ctx->jw);
		json_key(&ctx->jw, "queues");
		json_array_begin(&ctx->jw);
	} else
		cmd_print(ctx, "%-*s %9s %7s %7s %7s\n", width, "JOB",
		    "AVAILABLE", "DELAYED", "RUNNING", "DEAD");
	for (i = 0; i < n; i++) {
		if (queue_counts(q, v[i]->name, now, &c, &cause) == -1)
			return (cmd_queue_failed(ctx, cause));
		cmd_queue_counts_row(ctx, v[i], width, &c);
	}
	if (ctx->json) {
		json_array_end(&ctx->jw);
		json_object_end(&ctx->jw);
		cmd_json_end(ctx);
	}
	return (CMD_OK);
}

/* Before the targets: -n goes with --dead, which takes one job. */
static enum cmd_retval
cmd_queue_check(struct cmd_ctx *ctx)
{
	if (ctx->opts['n'] && !ctx->opts['D'])
		return (cmd_usage_error(ctx, "-n", "only with --dead"));
	if (ctx->opts['D'] && ctx->argc != 1)
		return (cmd_usage_error(ctx, "--dead", "takes one job"));
	return (CMD_OK);
}

static enum cmd_retval
cmd_queue_exec(struct cmd_ctx *ctx)
{
	struct queue *q;

	if ((q = cmd_queue_get(ctx)) == NULL)
		return (CMD_ERROR);
	if (ctx->opts['D'])
		return (cmd_queue_dead(ctx, q, ctx->jobs[0],
		    cmd_opt_num(ctx, 'n', CMD_QUEUE_DEAD_DEFAULT)));
	return (cmd_queue_counts(ctx, q, ctx->jobs, ctx->njobs));
}

/*
 * retry id ...: each dead (or delayed) message is made available now with
 * its attempts back to 0.  A running or unknown one is reported, as is a
 * dead one whose unique key a live message of its job holds since.
 */
static enum cmd_retval
cmd_retry_exec(struct cmd_ctx *ctx)
{
	struct queue *q;
	int64_t *ids = ctx->ids, now = store_now();
	enum cmd_retval r = CMD_OK;
	char *cause = NULL;
	int i, found, done = 0;

	if ((q = cmd_queue_get(ctx)) == NULL)
		return (CMD_ERROR);
	for (i = 0; i < ctx->argc && r == CMD_OK; i++) {
		if (queue_retry(q, ids[i], now, &found, &cause) == 0) {
			if (found)
				done++;
			else
				cmd_error(ctx,
				    "%lld: no such message, or it is running",
				    (long long)ids[i]);
			ctx->code = found ? ctx->code : CMD_EXIT_FAILED;
		} else if (cause != NULL &&
		    strstr(cause, "UNIQUE constraint failed") != NULL) {
			/* Not a fault of state.db: the store stays open. */
			free(cause);
			cause = NULL;
			cmd_error(ctx,
			    "%lld: its unique key is taken by a message "
			    "queued since",
			    (long long)ids[i]);
			ctx->code = CMD_EXIT_FAILED;
		} else
			r = cmd_queue_failed(ctx, cause);
	}
	if (done > 0)
		cmd_queue_kick_all();
	return (ctx->code == 0 ? r : CMD_ERROR);
}

/*
 * delete id ...: remove messages whatever their state.  A running one is
 * removed too: its run goes on, and its outcome is not recorded (vigild
 * logs that it was dropped).
 */
static enum cmd_retval
cmd_delete_exec(struct cmd_ctx *ctx)
{
	struct queue *q;
	int64_t *ids = ctx->ids;
	char *cause = NULL;
	int i, found;

	if ((q = cmd_queue_get(ctx)) == NULL)
		return (CMD_ERROR);
	for (i = 0; i < ctx->argc; i++) {
		if (queue_delete(q, ids[i], &found, &cause) == -1)
			return (cmd_queue_failed(ctx, cause));
		if (!found) {
			cmd_error(
			    ctx, "%lld: no such message", (long long)ids[i]);
			ctx->code = CMD_EXIT_FAILED;
		} else
			dispatch_msg_deleted(ids[i]);
	}
	return (ctx->code == 0 ? CMD_OK : CMD_ERROR);
}

/* purge [-D] job: delete the waiting and dead messages, or the dead ones. */
static enum cmd_retval
cmd_purge_exec(struct cmd_ctx *ctx)
{
	struct queue *q;
	struct job *j = ctx->jobs[0];
	char *cause = NULL;
	size_t n = 0;

	if ((q = cmd_queue_get(ctx)) == NULL)
		return (CMD_ERROR);
	if (queue_purge(q, j->name, ctx->opts['D'], &n, &cause) == -1)
		return (cmd_queue_failed(ctx, cause));
	if (ctx->json) {
		json_object_begin(&ctx->jw);
		json_key(&ctx->jw, "removed");
		json_uint(&ctx->jw, n);
		json_object_end(&ctx->jw);
		cmd_json_end(ctx);
	} else
		cmd_print(ctx, "removed: %zu\n", n);
	return (CMD_OK);
}

/* kick job: the dispatcher of a queue job looks for due messages. */
static enum cmd_retval
cmd_kick_exec(struct cmd_ctx *ctx)
{
	dispatch_kick(ctx->jobs[0]);
	return (CMD_OK);
}
