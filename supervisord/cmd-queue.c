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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "duration.h"
#include "signame.h"
#include "vigild.h"
#include "xmalloc.h"

/* queue --dead shows this many messages unless -n says otherwise. */
#define CMD_QUEUE_DEAD_DEFAULT 1000
#define CMD_QUEUE_DEAD_MAX 1000000

static enum cmd_retval cmd_enqueue_exec(struct cmd_ctx *);
static enum cmd_retval cmd_queue_exec(struct cmd_ctx *);
static enum cmd_retval cmd_retry_exec(struct cmd_ctx *);
static enum cmd_retval cmd_delete_exec(struct cmd_ctx *);
static enum cmd_retval cmd_purge_exec(struct cmd_ctx *);
static enum cmd_retval cmd_kick_exec(struct cmd_ctx *);

const struct cmd_entry cmd_enqueue_entry = {
	.name = "enqueue",
	.usage = "[--delay DURATION] [--unique KEY] [--priority N] job "
	         "[payload | -]",
	.optstring = "d:u:p:",
	.longopts = "delay=d,unique=u,priority=p",
	.min_args = 1,
	.max_args = 2,
	.help = "add a message to a queue job (- : the payload from stdin)",
	.exec = cmd_enqueue_exec,
};

const struct cmd_entry cmd_queue_entry = {
	.name = "queue",
	.usage = "[--dead [-n N]] [job ...]",
	.optstring = "Dn:",
	.longopts = "dead=D,limit=n",
	.min_args = 0,
	.max_args = -1,
	.flags = CMD_READONLY,
	.help = "count the messages of queue jobs (-D: list a job's dead ones)",
	.exec = cmd_queue_exec,
};

const struct cmd_entry cmd_retry_entry = {
	.name = "retry",
	.usage = "id ...",
	.optstring = "",
	.min_args = 1,
	.max_args = -1,
	.help = "make dead or delayed messages available again, at once",
	.exec = cmd_retry_exec,
};

const struct cmd_entry cmd_delete_entry = {
	.name = "delete",
	.usage = "id ...",
	.optstring = "",
	.min_args = 1,
	.max_args = -1,
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
	.help = "start work on a queue job's waiting messages",
	.exec = cmd_kick_exec,
};

/* State of a queue --dead listing, for the row callback. */
struct cmd_queue_dead {
	struct cmd_ctx *ctx;
	int count;
};

/*
 * Find the queue job called name.  Otherwise print why and set the exit
 * code: 4 for no such job, 1 for a job of another kind.
 */
static struct job *
cmd_queue_job(struct cmd_ctx *ctx, const char *name)
{
	struct job *j;

	if ((j = supervise_find_job(name)) == NULL) {
		cmd_error(ctx, "%s: no such job", name);
		ctx->code = CMD_EXIT_NO_JOB;
		return (NULL);
	}
	if (j->spec->kind != CONF_KIND_QUEUE) {
		cmd_error(ctx, "%s is not a queue job", name);
		ctx->code = CMD_EXIT_FAILED;
		return (NULL);
	}
	return (j);
}

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

/* A usage error of option or operand what: print it, exit code 2. */
static enum cmd_retval
cmd_queue_usage(struct cmd_ctx *ctx, const char *what, const char *why)
{
	cmd_error(ctx, "%s: %s: %s", ctx->entry->name, what, why);
	ctx->code = CMD_EXIT_USAGE;
	return (CMD_ERROR);
}

/* Parse a message id: a positive decimal integer.  Return 0 or -1. */
static int
cmd_queue_id(const char *s, int64_t *id)
{
	char *end;
	long long v;

	if (*s < '0' || *s > '9')
		return (-1);
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v <= 0)
		return (-1);
	*id = v;
	return (0);
}

/* Parse every operand as an id into the owned *ids, or print a usage error. */
static int
cmd_queue_ids(struct cmd_ctx *ctx, int64_t **ids)
{
	int i;

	*ids = xreallocarray(NULL, (size_t)ctx->argc, sizeof(**ids));
	for (i = 0; i < ctx->argc; i++) {
		if (cmd_queue_id(ctx->argv[i], &(*ids)[i]) == -1) {
			cmd_queue_usage(ctx, "not a message id", ctx->argv[i]);
			free(*ids);
			*ids = NULL;
			return (-1);
		}
	}
	return (0);
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

/* The options of enqueue: the due time and priority. */
static enum cmd_retval
cmd_enqueue_options(
    struct cmd_ctx *ctx, int64_t now, int64_t *due, int *priority)
{
	uint64_t delay = 0;
	char *cause = NULL, *end;
	long v;

	if (ctx->opts['d'] &&
	    duration_parse(ctx->optarg['d'], &delay, &cause) == -1) {
		cmd_queue_usage(ctx, "--delay", cause);
		free(cause);
		return (CMD_ERROR);
	}
	if (delay > (uint64_t)(INT64_MAX - now))
		return (cmd_queue_usage(ctx, "--delay", "too large"));
	*due = now + (int64_t)delay;
	*priority = 0;
	if (ctx->opts['p']) {
		errno = 0;
		v = strtol(ctx->optarg['p'], &end, 10);
		if (*ctx->optarg['p'] == '\0' || *end != '\0' || errno != 0 ||
		    v < INT_MIN || v > INT_MAX)
			return (cmd_queue_usage(
			    ctx, "--priority", "not an integer"));
		*priority = (int)v;
	}
	if (ctx->opts['u'] && *ctx->optarg['u'] == '\0')
		return (cmd_queue_usage(ctx, "--unique", "empty key"));
	return (CMD_OK);
}

/* The payload: the operand, or with "-" or none the data sent before. */
static enum cmd_retval
cmd_enqueue_payload(struct cmd_ctx *ctx, const void **p, size_t *len)
{
	const char *arg = ctx->argc > 1 ? ctx->argv[1] : NULL;

	if (arg != NULL && strcmp(arg, "-") != 0 && ctx->data != NULL)
		return (cmd_queue_usage(
		    ctx, "payload", "given both as an operand and as data"));
	if (arg != NULL && strcmp(arg, "-") == 0 && ctx->data == NULL)
		return (cmd_queue_usage(ctx, "payload",
		    "- stands for standard input, and none was sent"));
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
	if (*len > QUEUE_PAYLOAD_MAX) {
		cmd_error(ctx, "enqueue: payload larger than 1 MiB (%d bytes)",
		    QUEUE_PAYLOAD_MAX);
		ctx->code = CMD_EXIT_FAILED;
		return (CMD_ERROR);
	}
	return (CMD_OK);
}

/* Print the outcome of an enqueue: the new id, or the duplicate's. */
static enum cmd_retval
cmd_enqueue_report(struct cmd_ctx *ctx, struct job *j, int dup, int64_t id)
{
	if (ctx->json)
		cmd_print(ctx, "{\"id\":%lld%s}\n", (long long)id,
		    dup ? ",\"duplicate\":true" : "");
	else
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
	struct job *j;
	const void *payload;
	size_t len;
	int64_t now = store_now(), due, id = 0, existing = 0;
	char *cause = NULL;
	int priority, rc;

	if (cmd_enqueue_options(ctx, now, &due, &priority) != CMD_OK ||
	    cmd_enqueue_payload(ctx, &payload, &len) != CMD_OK)
		return (CMD_ERROR);
	if ((j = cmd_queue_job(ctx, ctx->argv[0])) == NULL ||
	    (q = cmd_queue_get(ctx)) == NULL)
		return (CMD_ERROR);
	rc = queue_enqueue(q, j->name, payload, len,
	    ctx->opts['u'] ? ctx->optarg['u'] : NULL, priority, due, now, &id,
	    &existing, &cause);
	if (rc == -1)
		return (cmd_queue_failed(ctx, cause));
	return (cmd_enqueue_report(ctx, j, rc == 1, rc == 1 ? existing : id));
}

static void
cmd_queue_dead_json(struct cmd_ctx *ctx, const struct queue_msg *m)
{
	const char *name;
	char num[16];

	cmd_print(
	    ctx, "{\"id\":%lld,\"attempts\":%d", (long long)m->id, m->attempts);
	if (m->last_exit >= 0)
		cmd_print(ctx, ",\"last_exit\":%d", m->last_exit);
	else
		cmd_print(ctx, ",\"last_exit\":null");
	cmd_print(ctx, ",\"last_signal\":");
	if (m->last_signal > 0) {
		if ((name = signame_name(m->last_signal)) == NULL) {
			snprintf(num, sizeof(num), "%d", m->last_signal);
			name = num;
		}
		cmd_print_json_string(ctx, name);
	} else
		cmd_print(ctx, "null");
	cmd_print(ctx, ",\"last_error\":");
	cmd_print_json_string(ctx, m->last_error);
	cmd_print(ctx,
	    ",\"created_us\":%lld,\"updated_us\":%lld,\"priority\":%d,"
	    "\"bytes\":%zu}",
	    (long long)m->created, (long long)m->updated, m->priority, m->len);
}

static void
cmd_queue_dead_row(const struct queue_msg *m, void *arg)
{
	struct cmd_queue_dead *d = arg;
	char ex[32], upd[64];

	if (d->ctx->json) {
		cmd_print(d->ctx, "%s", d->count > 0 ? "," : "");
		cmd_queue_dead_json(d->ctx, m);
	} else
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
		cmd_print(ctx, "{\"job\":");
		cmd_print_json_string(ctx, j->name);
		cmd_print(ctx, ",\"messages\":[");
	} else
		cmd_print(ctx, "%-10s %8s %-12s %-23s %s\n", "ID", "ATTEMPTS",
		    "LAST-EXIT", "UPDATED", "ERROR");
	if (queue_list_dead(
	        q, j->name, (int)n, cmd_queue_dead_row, &d, &cause) == -1 ||
	    queue_counts(q, j->name, store_now(), &c, &cause) == -1)
		return (cmd_queue_failed(ctx, cause));
	if (ctx->json)
		cmd_print(ctx, "],\"total\":%zu}\n", c.dead);
	else if (c.dead > (size_t)d.count)
		cmd_error(ctx, "%s: %zu more dead messages not shown (-n)",
		    j->name, c.dead - (size_t)d.count);
	return (CMD_OK);
}

/* One row of the queue table, or one object of its JSON. */
static void
cmd_queue_counts_row(struct cmd_ctx *ctx, const struct job *j, int width,
    const struct queue_counts *c, int first)
{
	if (ctx->json) {
		cmd_print(ctx, "%s{\"job\":", first ? "" : ",");
		cmd_print_json_string(ctx, j->name);
		cmd_print(ctx,
		    ",\"available\":%zu,\"delayed\":%zu,\"running\":%zu,"
		    "\"dead\":%zu}",
		    c->available, c->delayed, c->running, c->dead);
	} else
		cmd_print(ctx, "%-*s %9zu %7zu %7zu %7zu\n", width, j->name,
		    c->available, c->delayed, c->running, c->dead);
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
	if (ctx->json)
		cmd_print(ctx, "{\"queues\":[");
	else
		cmd_print(ctx, "%-*s %9s %7s %7s %7s\n", width, "JOB",
		    "AVAILABLE", "DELAYED", "RUNNING", "DEAD");
	for (i = 0; i < n; i++) {
		if (queue_counts(q, v[i]->name, now, &c, &cause) == -1)
			return (cmd_queue_failed(ctx, cause));
		cmd_queue_counts_row(ctx, v[i], width, &c, i == 0);
	}
	if (ctx->json)
		cmd_print(ctx, "]}\n");
	return (CMD_OK);
}

/* The jobs queue names, or every queue job; NULL after an error. */
static struct job **
cmd_queue_targets(struct cmd_ctx *ctx, size_t *n)
{
	struct job **v, *j;
	int i;

	*n = 0;
	v = xreallocarray(
	    NULL, vigild.njobs + (size_t)ctx->argc + 1, sizeof(*v));
	if (ctx->argc == 0) {
		RB_FOREACH(j, job_tree, &vigild.jobs) {
			if (j->spec->kind == CONF_KIND_QUEUE)
				v[(*n)++] = j;
		}
		return (v);
	}
	for (i = 0; i < ctx->argc; i++) {
		if ((v[*n] = cmd_queue_job(ctx, ctx->argv[i])) == NULL) {
			free(v);
			return (NULL);
		}
		(*n)++;
	}
	return (v);
}

static enum cmd_retval
cmd_queue_exec(struct cmd_ctx *ctx)
{
	struct job **v;
	struct queue *q;
	enum cmd_retval r;
	char *end;
	long n = CMD_QUEUE_DEAD_DEFAULT;
	size_t nv;

	if (ctx->opts['n'] && !ctx->opts['D'])
		return (cmd_queue_usage(ctx, "-n", "only with --dead"));
	if (ctx->opts['n']) {
		n = strtol(ctx->optarg['n'], &end, 10);
		if (*ctx->optarg['n'] == '\0' || *end != '\0' || n < 1 ||
		    n > CMD_QUEUE_DEAD_MAX)
			return (cmd_queue_usage(ctx, "-n", "not a count"));
	}
	if (ctx->opts['D'] && ctx->argc != 1)
		return (cmd_queue_usage(ctx, "--dead", "takes one job"));
	if ((v = cmd_queue_targets(ctx, &nv)) == NULL)
		return (CMD_ERROR);
	if ((q = cmd_queue_get(ctx)) == NULL)
		r = CMD_ERROR;
	else if (ctx->opts['D'])
		r = cmd_queue_dead(ctx, q, v[0], n);
	else
		r = cmd_queue_counts(ctx, q, v, nv);
	free(v);
	return (r);
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
	int64_t *ids, now = store_now();
	enum cmd_retval r = CMD_OK;
	char *cause = NULL;
	int i, found, done = 0;

	if (cmd_queue_ids(ctx, &ids) == -1)
		return (CMD_ERROR);
	if ((q = cmd_queue_get(ctx)) == NULL) {
		free(ids);
		return (CMD_ERROR);
	}
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
	free(ids);
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
	int64_t *ids;
	char *cause = NULL;
	int i, found;

	if (cmd_queue_ids(ctx, &ids) == -1)
		return (CMD_ERROR);
	if ((q = cmd_queue_get(ctx)) == NULL) {
		free(ids);
		return (CMD_ERROR);
	}
	for (i = 0; i < ctx->argc; i++) {
		if (queue_delete(q, ids[i], &found, &cause) == -1) {
			free(ids);
			return (cmd_queue_failed(ctx, cause));
		}
		if (!found) {
			cmd_error(
			    ctx, "%lld: no such message", (long long)ids[i]);
			ctx->code = CMD_EXIT_FAILED;
		} else
			dispatch_msg_deleted(ids[i]);
	}
	free(ids);
	return (ctx->code == 0 ? CMD_OK : CMD_ERROR);
}

/* purge [-D] job: delete the waiting and dead messages, or the dead ones. */
static enum cmd_retval
cmd_purge_exec(struct cmd_ctx *ctx)
{
	struct queue *q;
	struct job *j;
	char *cause = NULL;
	size_t n = 0;

	if ((j = cmd_queue_job(ctx, ctx->argv[0])) == NULL ||
	    (q = cmd_queue_get(ctx)) == NULL)
		return (CMD_ERROR);
	if (queue_purge(q, j->name, ctx->opts['D'], &n, &cause) == -1)
		return (cmd_queue_failed(ctx, cause));
	if (ctx->json)
		cmd_print(ctx, "{\"removed\":%zu}\n", n);
	else
		cmd_print(ctx, "removed: %zu\n", n);
	return (CMD_OK);
}

/* kick job: the dispatcher of a queue job looks for due messages. */
static enum cmd_retval
cmd_kick_exec(struct cmd_ctx *ctx)
{
	struct job *j;

	if ((j = cmd_queue_job(ctx, ctx->argv[0])) == NULL)
		return (CMD_ERROR);
	dispatch_kick(j);
	return (CMD_OK);
}
