/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * history [-n N] JOB|JOB@N: past runs of a job (or of one of its
 * instances) from state.db, oldest first: start, end, duration, exit code
 * or signal, the message of a queue job's run, and why it ended.  A
 * cluster job's runs are those of every node, from the database
 * (vigil.run), each with its node and fencing token; with the database
 * out of reach, this node's own, and a warning says so.
 */

#include "config.h"

#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "cluster.h"
#include "cmd.h"
#include "conf.h"
#include "duration.h"
#include "jobs-view.h"
#include "json.h"
#include "pgstate.h"
#include "signame.h"
#include "state.h"
#include "timefmt.h"
#include "xmalloc.h"

static enum cmd_retval cmd_history_exec(struct cmd_ctx *);

/* The rows history shows unless -n says otherwise, and the most. */
#define CMD_HISTORY_DEFAULT 20
#define CMD_HISTORY_MAX 1000000

static const struct cmd_opt cmd_history_opts[] = {
	{ 'n', CMD_OPT_INT, 1, CMD_HISTORY_MAX },
	{ 0, CMD_OPT_STRING, 0, 0 },
};

const struct cmd_entry cmd_history_entry = {
	.name = "history",
	.usage = "[-n N] job[@N]",
	.optstring = "n:",
	.longopts = "lines=n",
	.typed = cmd_history_opts,
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_READONLY,
	.target = CMD_TARGET_ONE_JOB,
	.help = "show the past runs of a job or instance",
	.exec = cmd_history_exec,
};

struct cmd_history {
	struct cmd_ctx *ctx;
	int count;
	int queue;        /* a queue job: a MESSAGE column */
	int cluster;      /* from the database: a NODE column */
	const char *node; /* ... the row's */
	int64_t token;    /* ... its fencing token */
};

/* key: a time in usec, or null for none (0). */
static void
cmd_history_json_time(struct json *jw, const char *key, int64_t usec)
{
	json_key(jw, key);
	if (usec > 0)
		json_int(jw, usec);
	else
		json_null(jw);
}

static void
cmd_history_json(const struct cmd_history *h, const struct store_run *r)
{
	struct json *jw = &h->ctx->jw;

	json_object_begin(jw);
	json_key(jw, "job");
	json_string(jw, r->job);
	json_key(jw, "instance");
	json_int(jw, r->instance);
	json_key(jw, "run_id");
	json_string(jw, r->run_id);
	json_key(jw, "pid");
	json_int(jw, r->pid);
	json_key(jw, "started_us");
	json_int(jw, r->started);
	cmd_history_json_time(jw, "ready_us", r->ready);
	cmd_history_json_time(jw, "ended_us", r->ended);
	json_key(jw, "duration_s");
	if (r->ended > 0)
		json_fixed(jw, (double)(r->ended - r->started) / 1e6, 3);
	else
		json_null(jw);
	json_key(jw, "exit_code");
	if (r->exit_code >= 0)
		json_int(jw, r->exit_code);
	else
		json_null(jw);
	json_key(jw, "signal");
	json_string(jw, r->signal > 0 ? signame_name(r->signal) : NULL);
	json_key(jw, "reason");
	json_string(jw, r->reason[0] != '\0' ? r->reason : NULL);
	json_key(jw, "message");
	if (r->message > 0)
		json_int(jw, r->message);
	else
		json_null(jw);
	if (h->cluster) {
		json_key(jw, "node");
		json_string(jw, h->node);
		json_key(jw, "fencing_token");
		if (h->token > 0)
			json_int(jw, h->token);
		else
			json_null(jw);
	}
	json_object_end(jw);
}

static void
cmd_history_row(const struct store_run *r, void *arg)
{
	struct cmd_history *h = arg;
	char start[TIMEFMT_LEN], end[TIMEFMT_LEN], dur[32], ex[32], msg[32];

	if (h->ctx->json)
		cmd_history_json(h, r);
	else {
		if (r->ended > 0)
			duration_format(
			    (uint64_t)(r->ended - r->started) / 1000 * 1000,
			    dur, sizeof(dur));
		else
			strlcpy(dur, "-", sizeof(dur));
		if (h->queue && r->message > 0)
			snprintf(
			    msg, sizeof(msg), "%lld ", (long long)r->message);
		else
			strlcpy(msg, h->queue ? "- " : "", sizeof(msg));
		cmd_print(h->ctx, "%-29s %-29s %9s %-12s %*s%*s%s%s\n",
		    cmd_format_time(r->started, start, sizeof(start)),
		    cmd_format_time(r->ended, end, sizeof(end)), dur,
		    cmd_format_exit(r->exit_code, r->signal, ex, sizeof(ex)),
		    h->queue ? -14 : 0, msg, h->cluster ? -12 : 0,
		    h->cluster ? h->node : "", h->cluster ? " " : "",
		    r->reason[0] != '\0' ? r->reason : "running");
	}
	h->count++;
}

/* The head of the table, or of the JSON object. */
static void
cmd_history_head(const struct cmd_history *h)
{
	struct cmd_ctx *ctx = h->ctx;

	if (ctx->json) {
		json_object_begin(&ctx->jw);
		json_key(&ctx->jw, "runs");
		json_array_begin(&ctx->jw);
		return;
	}
	cmd_print(ctx, "%-29s %-29s %9s %-12s %*s%*s%s%s\n", "START", "END",
	    "DURATION", "EXIT", h->queue ? -14 : 0, h->queue ? "MESSAGE " : "",
	    h->cluster ? -12 : 0, h->cluster ? "NODE" : "",
	    h->cluster ? " " : "", "REASON");
}

static void
cmd_history_tail(struct cmd_ctx *ctx)
{
	if (ctx->json) {
		json_array_end(&ctx->jw);
		json_object_end(&ctx->jw);
		cmd_json_end(ctx);
	}
}

/* What a cluster history was asked for, until the database answers. */
struct cmd_history_later {
	struct cmd_ctx *l; /* the reply (cmd_later) */
	char job[65];
	int queue;
};

/* The runs of every node (pg_run_history's rows), or the error. */
static void
cmd_history_cluster_done(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct cmd_history_later *hl = arg;
	struct cmd_history h;
	struct store_run r;
	const char *v;
	int row;

	(void)sent;
	memset(&h, 0, sizeof(h));
	h.ctx = hl->l;
	h.queue = hl->queue;
	h.cluster = 1;
	if (res == NULL) {
		cmd_error(h.ctx, "history: the database: %s", err);
		h.ctx->code = EX_UNAVAILABLE;
		cmd_later_end(hl->l);
		free(hl);
		return;
	}
	cmd_history_head(&h);
	for (row = 0; row < pgres_ntuples(res); row++) {
		memset(&r, 0, sizeof(r));
		strlcpy(r.job, hl->job, sizeof(r.job));
		r.instance = (int)pgres_int(res, row, 0, 0);
		snprintf(r.run_id, sizeof(r.run_id), "%lld",
		    pgres_int(res, row, 1, 0));
		h.node = pgres_value(res, row, 2);
		h.token = pgres_int(res, row, 3, 0);
		r.pid = (long)pgres_int(res, row, 4, 0);
		r.started = pgres_int(res, row, 5, 0);
		r.ended = pgres_int(res, row, 6, 0);
		r.exit_code = (int)pgres_int(res, row, 7, -1);
		r.signal = (int)pgres_int(res, row, 8, -1);
		if ((v = pgres_value(res, row, 9)) != NULL)
			strlcpy(r.reason, v, sizeof(r.reason));
		r.message = pgres_int(res, row, 10, 0);
		cmd_history_row(&r, &h);
	}
	cmd_history_tail(h.ctx);
	cmd_later_end(hl->l);
	free(hl);
}

/*
 * A cluster job: ask the database for the runs of every node.  0 when
 * asked (the reply comes later), -1 when it is out of reach (warned).
 */
static int
cmd_history_cluster(struct cmd_ctx *ctx, const struct inst *in, int instance)
{
	const struct job *j = inst_job(in);
	struct cmd_history_later *hl;
	const char *p[3];
	char id[32], idx[16], n[16], *cause = NULL;

	if (!cluster_enabled() || !job_spec_of(j)->cluster ||
	    job_cluster_id(j) == 0)
		return (-1);
	snprintf(id, sizeof(id), "%lld", (long long)job_cluster_id(j));
	snprintf(idx, sizeof(idx), "%d", instance);
	snprintf(n, sizeof(n), "%lld",
	    (long long)cmd_opt_num(ctx, 'n', CMD_HISTORY_DEFAULT));
	p[0] = id;
	p[1] = idx;
	p[2] = n;
	hl = xcalloc(1, sizeof(*hl));
	strlcpy(hl->job, job_name(j), sizeof(hl->job));
	hl->queue = job_spec_of(j)->kind == CONF_KIND_QUEUE;
	if (cluster_ask(pg_run_history, 3, p, cmd_history_cluster_done, hl,
	        &cause) == -1) {
		cmd_error(ctx, "warning: %s: this node's runs only: %s",
		    job_name(j), cause);
		free(cause);
		free(hl);
		return (-1);
	}
	hl->l = cmd_later(ctx);
	return (0);
}

static enum cmd_retval
cmd_history_exec(struct cmd_ctx *ctx)
{
	struct cmd_history h;
	struct inst *in = ctx->insts[0];
	const struct job *j = inst_job(in);
	char *cause = NULL;
	int instance;

	/* "job@N" names no job of its own: one instance. */
	instance = job_find(ctx->argv[0]) == NULL ? inst_index(in) : -1;
	if (cmd_history_cluster(ctx, in, instance) == 0)
		return (CMD_WAIT);
	memset(&h, 0, sizeof(h));
	h.ctx = ctx;
	h.queue = job_spec_of(j)->kind == CONF_KIND_QUEUE;
	cmd_history_head(&h);
	if (state_history(job_name(j), instance,
	        (int)cmd_opt_num(ctx, 'n', CMD_HISTORY_DEFAULT),
	        cmd_history_row, &h, &cause) == -1) {
		cmd_error(ctx, "history: %s", cause);
		free(cause);
		return (CMD_ERROR);
	}
	cmd_history_tail(ctx);
	return (CMD_OK);
}
