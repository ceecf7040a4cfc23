/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The queue verbs, over the queue table of state.db (lib/queue.c):
 * enqueue a message, count a queue's messages or list its dead ones, retry
 * or delete messages by id, purge a queue, and kick a queue job (tell its
 * dispatcher that messages may be waiting, after vigilctl enqueued one
 * itself while vigild was out of reach).  On cluster queues they go to
 * PostgreSQL (cmd-queue-cluster.c, which prints the rows of both).
 */

#include "config.h"

#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "conf.h"
#include "effects.h"
#include "enqueue.h"
#include "jobs-view.h"
#include "json.h"
#include "pgstate.h"
#include "queue.h"
#include "state.h"
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
	{ 'o', CMD_OPT_INT, 1, INT64_MAX },
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
	.usage = "[--dead [-n N | --output ID]] [job ...]",
	.optstring = "Dn:o:",
	.longopts = "dead=D,limit=n,output=o",
	.typed = cmd_queue_opts,
	.min_args = 0,
	.max_args = -1,
	.flags = CMD_READONLY,
	.target = CMD_TARGET_QUEUES,
	.target_flags = CMD_TARGET_DEFAULT_ALL,
	.check = cmd_queue_check,
	.help = "count the messages of queue jobs (-D: list a job's dead "
	        "ones; -o ID: one's kept output)",
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
		if (job_spec_of(j)->kind == CONF_KIND_QUEUE)
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
	if (!dup)
		dispatch_kick(j);
	return (cmd_queue_enqueued(ctx, job_name(j), dup, id,
	    ctx->opts['u'] ? ctx->optarg['u'] : NULL));
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
	if (job_spec_of(j)->cluster)
		return (cmd_cq_enqueue(ctx, j, payload, len,
		    cmd_opt_num(ctx, 'd', 0), cmd_opt_num(ctx, 'p', 0)));
	if ((q = cmd_queue_get(ctx)) == NULL)
		return (CMD_ERROR);
	rc = queue_enqueue(q, job_name(j), payload, len,
	    ctx->opts['u'] ? ctx->optarg['u'] : NULL,
	    (int)cmd_opt_num(ctx, 'p', 0), now + cmd_opt_num(ctx, 'd', 0), now,
	    &id, &existing, &cause);
	if (rc == -1)
		return (cmd_queue_failed(ctx, cause));
	return (cmd_enqueue_report(ctx, j, rc == 1, rc == 1 ? existing : id));
}

static void
cmd_queue_dead_row(const struct queue_msg *m, void *arg)
{
	struct cmd_queue_dead *d = arg;

	cmd_queue_dead_print(d->ctx, m);
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
	cmd_queue_dead_head(ctx, job_name(j));
	if (queue_list_dead(
	        q, job_name(j), (int)n, cmd_queue_dead_row, &d, &cause) == -1 ||
	    queue_counts(q, job_name(j), store_now(), &c, &cause) == -1)
		return (cmd_queue_failed(ctx, cause));
	cmd_queue_dead_tail(ctx, job_name(j), (size_t)d.count, c.dead);
	return (CMD_OK);
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
		if ((int)strlen(job_name(v[i])) > width)
			width = (int)strlen(job_name(v[i]));
	}
	cmd_queue_counts_head(ctx, width, 0);
	for (i = 0; i < n; i++) {
		if (queue_counts(q, job_name(v[i]), now, &c, &cause) == -1)
			return (cmd_queue_failed(ctx, cause));
		cmd_queue_counts_print(ctx, job_name(v[i]), width, &c, NULL);
	}
	cmd_queue_counts_tail(ctx);
	return (CMD_OK);
}

/*
 * queue --dead --output ID job: the end of the output of the last run of
 * dead message ID (what state.db keeps of it, up to 4 KiB), as it was, on
 * standard output; on standard error a line with what the message was.
 * With --json, {"id", "job", "attempts", "last_exit", "error",
 * "payload_bytes", "output"}.
 */
static enum cmd_retval
cmd_queue_output(
    struct cmd_ctx *ctx, struct queue *q, struct job *j, int64_t id)
{
	struct queue_msg m;
	struct json *jw = &ctx->jw;
	void *out = NULL;
	size_t olen = 0;
	char *cause = NULL, ex[32];
	int found = 0;

	memset(&m, 0, sizeof(m));
	if (queue_dead_output(
	        q, job_name(j), id, &m, &out, &olen, &found, &cause) == -1) {
		cmd_error(ctx, "queue: %s", cause);
		free(cause);
		ctx->code = CMD_EXIT_FAILED;
		return (CMD_ERROR);
	}
	if (!found) {
		cmd_error(ctx,
		    "%s: no dead message %lld (vigilctl queue --dead %s lists "
		    "them)",
		    job_name(j), (long long)id, job_name(j));
		ctx->code = CMD_EXIT_FAILED;
		return (CMD_ERROR);
	}
	cmd_format_exit(m.last_exit, m.last_signal, ex, sizeof(ex));
	if (ctx->json) {
		json_object_begin(jw);
		json_key(jw, "id");
		json_int(jw, m.id);
		json_key(jw, "job");
		json_string(jw, job_name(j));
		json_key(jw, "attempts");
		json_int(jw, m.attempts);
		json_key(jw, "last_exit");
		json_string(jw, ex);
		json_key(jw, "error");
		json_string(jw, m.last_error);
		json_key(jw, "payload_bytes");
		json_uint(jw, m.len);
		json_key(jw, "output");
		json_string_len(jw, out != NULL ? out : "", olen);
		json_object_end(jw);
		cmd_json_end(ctx);
	} else {
		cmd_print_err(ctx,
		    "%s: message %lld: %d attempts, last %s%s%s; payload %zu "
		    "bytes; output %zu bytes (the end of its last run's)\n",
		    job_name(j), (long long)m.id, m.attempts, ex,
		    m.last_error != NULL ? ", " : "",
		    m.last_error != NULL ? m.last_error : "", m.len, olen);
		if (olen > 0)
			proto_buf_add(&ctx->out, out, olen);
	}
	free(out);
	queue_msg_clear(&m);
	return (CMD_OK);
}

/* Before the targets: -n and -o go with --dead, which takes one job. */
static enum cmd_retval
cmd_queue_check(struct cmd_ctx *ctx)
{
	if (ctx->opts['n'] && !ctx->opts['D'])
		return (cmd_usage_error(ctx, "-n", "only with --dead"));
	if (ctx->opts['o'] && !ctx->opts['D'])
		return (cmd_usage_error(ctx, "--output", "only with --dead"));
	if (ctx->opts['o'] && ctx->opts['n'])
		return (cmd_usage_error(ctx, "--output", "not with -n"));
	if (ctx->opts['D'] && ctx->argc != 1)
		return (cmd_usage_error(ctx, "--dead", "takes one job"));
	return (CMD_OK);
}

static enum cmd_retval
cmd_queue_exec(struct cmd_ctx *ctx)
{
	struct queue *q;
	size_t i;

	if (ctx->opts['o'] && job_spec_of(ctx->jobs[0])->cluster) {
		cmd_error(ctx,
		    "queue --output: a cluster queue job's output is in its "
		    "database: SELECT convert_from(output, 'UTF8') FROM "
		    "vigil.message WHERE id = %lld",
		    (long long)cmd_opt_num(ctx, 'o', 0));
		ctx->code = CMD_EXIT_FAILED;
		return (CMD_ERROR);
	}
	if (ctx->opts['D'] && job_spec_of(ctx->jobs[0])->cluster)
		return (cmd_cq_dead(ctx, ctx->jobs[0],
		    cmd_opt_num(ctx, 'n', CMD_QUEUE_DEAD_DEFAULT)));
	for (i = 0; i < ctx->njobs && !ctx->opts['D']; i++) {
		if (job_spec_of(ctx->jobs[i])->cluster)
			return (cmd_cq_counts(ctx, state_queue()));
	}
	if ((q = cmd_queue_get(ctx)) == NULL)
		return (CMD_ERROR);
	if (ctx->opts['o'])
		return (cmd_queue_output(
		    ctx, q, ctx->jobs[0], cmd_opt_num(ctx, 'o', 0)));
	if (ctx->opts['D'])
		return (cmd_queue_dead(ctx, q, ctx->jobs[0],
		    cmd_opt_num(ctx, 'n', CMD_QUEUE_DEAD_DEFAULT)));
	return (cmd_queue_counts(ctx, q, ctx->jobs, ctx->njobs));
}

/*
 * The ids of cluster queues (PG_MSG_ID_FIRST and up) to the end of ids,
 * in their order; return how many of state.db's come first.
 */
static size_t
cmd_queue_ids_split(int64_t *ids, size_t n)
{
	int64_t *tmp = xcalloc(n + 1, sizeof(*tmp));
	size_t i, k = 0, nlocal;

	for (i = 0; i < n; i++)
		if (ids[i] < PG_MSG_ID_FIRST)
			tmp[k++] = ids[i];
	nlocal = k;
	for (i = 0; i < n; i++)
		if (ids[i] >= PG_MSG_ID_FIRST)
			tmp[k++] = ids[i];
	memcpy(ids, tmp, n * sizeof(*ids));
	free(tmp);
	return (nlocal);
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
	int i, found, done = 0, nlocal;

	nlocal = (int)cmd_queue_ids_split(ids, (size_t)ctx->argc);
	if (nlocal > 0 && (q = cmd_queue_get(ctx)) == NULL)
		return (CMD_ERROR);
	for (i = 0; i < nlocal && r == CMD_OK; i++) {
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
	if (r == CMD_OK && nlocal < ctx->argc)
		return (cmd_cq_ids(
		    ctx, 1, ids + nlocal, (size_t)(ctx->argc - nlocal)));
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
	int i, found, nlocal;

	nlocal = (int)cmd_queue_ids_split(ids, (size_t)ctx->argc);
	if (nlocal > 0 && (q = cmd_queue_get(ctx)) == NULL)
		return (CMD_ERROR);
	for (i = 0; i < nlocal; i++) {
		if (queue_delete(q, ids[i], &found, &cause) == -1)
			return (cmd_queue_failed(ctx, cause));
		if (!found) {
			cmd_error(
			    ctx, "%lld: no such message", (long long)ids[i]);
			ctx->code = CMD_EXIT_FAILED;
		} else
			dispatch_msg_deleted(ids[i]);
	}
	if (nlocal < ctx->argc)
		return (cmd_cq_ids(
		    ctx, 0, ids + nlocal, (size_t)(ctx->argc - nlocal)));
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

	if (job_spec_of(j)->cluster)
		return (cmd_cq_purge(ctx, j, ctx->opts['D']));
	if ((q = cmd_queue_get(ctx)) == NULL)
		return (CMD_ERROR);
	if (queue_purge(q, job_name(j), ctx->opts['D'], &n, &cause) == -1)
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
	if (job_spec_of(ctx->jobs[0])->cluster)
		return (cmd_cq_kick(ctx, ctx->jobs[0]));
	return (CMD_OK);
}
