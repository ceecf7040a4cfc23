/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The rows of the queue verbs, the same for state.db's queues
 * (cmd-queue.c) and the cluster's (cmd-queue-cluster.c): the dead list
 * and the counts per job, as text or JSON, and enqueue's answer.
 */

#include "config.h"

#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "json.h"
#include "queue.h"
#include "signame.h"
#include "timefmt.h"

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

/* queue --dead: the head of the listing of job name. */
void
cmd_queue_dead_head(struct cmd_ctx *ctx, const char *name)
{
	if (ctx->json) {
		json_object_begin(&ctx->jw);
		json_key(&ctx->jw, "job");
		json_string(&ctx->jw, name);
		json_key(&ctx->jw, "messages");
		json_array_begin(&ctx->jw);
	} else
		cmd_print(ctx, "%-10s %8s %-12s %-29s %s\n", "ID", "ATTEMPTS",
		    "LAST-EXIT", "UPDATED", "ERROR");
}

/* queue --dead: one dead message. */
void
cmd_queue_dead_print(struct cmd_ctx *ctx, const struct queue_msg *m)
{
	char ex[32], upd[TIMEFMT_LEN];

	if (ctx->json)
		cmd_queue_dead_json(ctx, m);
	else
		cmd_print(ctx, "%-10lld %8d %-12s %-29s %s\n", (long long)m->id,
		    m->attempts,
		    cmd_format_exit(
		        m->last_exit, m->last_signal, ex, sizeof(ex)),
		    cmd_format_time(m->updated, upd, sizeof(upd)),
		    m->last_error != NULL ? m->last_error : "-");
}

/* queue --dead: the end, count of them shown, total dead. */
void
cmd_queue_dead_tail(
    struct cmd_ctx *ctx, const char *name, size_t count, size_t total)
{
	if (ctx->json) {
		json_array_end(&ctx->jw);
		json_key(&ctx->jw, "total");
		json_uint(&ctx->jw, total);
		json_object_end(&ctx->jw);
		cmd_json_end(ctx);
	} else if (total > count)
		cmd_error(ctx, "%s: %zu more dead messages not shown (-n)",
		    name, total - count);
}

/* queue: the head of the table (nodes: a cluster queue is listed). */
void
cmd_queue_counts_head(struct cmd_ctx *ctx, int width, int nodes)
{
	if (ctx->json) {
		json_object_begin(&ctx->jw);
		json_key(&ctx->jw, "queues");
		json_array_begin(&ctx->jw);
	} else
		cmd_print(ctx, "%-*s %9s %7s %7s %7s%s\n", width, "JOB",
		    "AVAILABLE", "DELAYED", "RUNNING", "DEAD",
		    nodes ? "  NODES" : "");
}

/*
 * queue: one row.  nodes: "n1=3,n2=1", where a cluster queue's messages
 * run ("" for none), or NULL for a local queue.
 */
void
cmd_queue_counts_print(struct cmd_ctx *ctx, const char *name, int width,
    const struct queue_counts *c, const char *nodes)
{
	struct json *jw = &ctx->jw;
	const char *p, *eq, *comma;
	char node[160];

	if (!ctx->json) {
		cmd_print(ctx, "%-*s %9zu %7zu %7zu %7zu%s%s\n", width, name,
		    c->available, c->delayed, c->running, c->dead,
		    nodes != NULL ? "  " : "",
		    nodes == NULL        ? "" :
		        nodes[0] != '\0' ? nodes :
		                           "-");
		return;
	}
	json_object_begin(jw);
	json_key(jw, "job");
	json_string(jw, name);
	json_key(jw, "available");
	json_uint(jw, c->available);
	json_key(jw, "delayed");
	json_uint(jw, c->delayed);
	json_key(jw, "running");
	json_uint(jw, c->running);
	json_key(jw, "dead");
	json_uint(jw, c->dead);
	if (nodes != NULL) {
		/* Where they run: {"n1": 3, ...}. */
		json_key(jw, "nodes");
		json_object_begin(jw);
		for (p = nodes; *p != '\0';
		     p = *comma != '\0' ? comma + 1 : comma) {
			comma = p + strcspn(p, ",");
			if ((eq = memchr(p, '=', (size_t)(comma - p))) ==
			        NULL ||
			    (size_t)(eq - p) >= sizeof(node))
				continue;
			memcpy(node, p, (size_t)(eq - p));
			node[eq - p] = '\0';
			json_key(jw, node);
			json_int(jw, strtoll(eq + 1, NULL, 10));
		}
		json_object_end(jw);
	}
	json_object_end(jw);
}

/* queue: the end of the table. */
void
cmd_queue_counts_tail(struct cmd_ctx *ctx)
{
	if (ctx->json) {
		json_array_end(&ctx->jw);
		json_object_end(&ctx->jw);
		cmd_json_end(ctx);
	}
}

/*
 * enqueue: the new id, or the id of the live message that holds the key
 * (dup, an error).
 */
enum cmd_retval
cmd_queue_enqueued(
    struct cmd_ctx *ctx, const char *name, int dup, int64_t id, const char *key)
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
	if (!dup)
		return (CMD_OK);
	cmd_error(ctx, "%s: a message with key %s is already queued: id %lld",
	    name, key, (long long)id);
	ctx->code = CMD_EXIT_FAILED;
	return (CMD_ERROR);
}
