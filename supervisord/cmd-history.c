/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * history [-n N] JOB|JOB@N: past runs of a job (or of one of its
 * instances) from state.db, oldest first: start, end, duration, exit code
 * or signal, the message of a queue job's run, and why it ended.
 */

#include "config.h"

#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "json.h"
#include "signame.h"
#include "timefmt.h"
#include "vigild.h"

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
	int queue; /* a queue job: a MESSAGE column */
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
cmd_history_json(struct cmd_ctx *ctx, const struct store_run *r)
{
	struct json *jw = &ctx->jw;

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
	json_object_end(jw);
}

static void
cmd_history_row(const struct store_run *r, void *arg)
{
	struct cmd_history *h = arg;
	char start[TIMEFMT_LEN], end[TIMEFMT_LEN], dur[32], ex[32], msg[32];

	if (h->ctx->json)
		cmd_history_json(h->ctx, r);
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
		cmd_print(h->ctx, "%-29s %-29s %9s %-12s %*s%s\n",
		    cmd_format_time(r->started, start, sizeof(start)),
		    cmd_format_time(r->ended, end, sizeof(end)), dur,
		    cmd_format_exit(r->exit_code, r->signal, ex, sizeof(ex)),
		    h->queue ? -14 : 0, msg,
		    r->reason[0] != '\0' ? r->reason : "running");
	}
	h->count++;
}

static enum cmd_retval
cmd_history_exec(struct cmd_ctx *ctx)
{
	struct cmd_history h;
	struct inst *in = ctx->insts[0];
	char *cause = NULL;
	int instance;

	/* "job@N" names no job of its own: one instance. */
	instance = job_find(ctx->argv[0]) == NULL ? in->index : -1;
	h.ctx = ctx;
	h.count = 0;
	h.queue = in->job->spec->kind == CONF_KIND_QUEUE;
	if (ctx->json) {
		json_object_begin(&ctx->jw);
		json_key(&ctx->jw, "runs");
		json_array_begin(&ctx->jw);
	} else if (h.queue)
		cmd_print(ctx, "%-29s %-29s %9s %-12s %-13s %s\n", "START",
		    "END", "DURATION", "EXIT", "MESSAGE", "REASON");
	else
		cmd_print(ctx, "%-29s %-29s %9s %-12s %s\n", "START", "END",
		    "DURATION", "EXIT", "REASON");
	if (state_history(in->job->name, instance,
	        (int)cmd_opt_num(ctx, 'n', CMD_HISTORY_DEFAULT),
	        cmd_history_row, &h, &cause) == -1) {
		cmd_error(ctx, "history: %s", cause);
		free(cause);
		return (CMD_ERROR);
	}
	if (ctx->json) {
		json_array_end(&ctx->jw);
		json_object_end(&ctx->jw);
		cmd_json_end(ctx);
	}
	return (CMD_OK);
}
