/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * history [-n N] JOB|JOB@N: past runs of a job (or of one of its
 * instances) from state.db, oldest first: start, end, duration, exit code
 * or signal, and why it ended.
 */

#include "config.h"

#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "duration.h"
#include "signame.h"
#include "vigild.h"

static enum cmd_retval cmd_history_exec(struct cmd_ctx *);

const struct cmd_entry cmd_history_entry = {
	.name = "history",
	.usage = "[-n N] job[@N]",
	.optstring = "n:",
	.longopts = "lines=n",
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_READONLY,
	.help = "show the past runs of a job or instance",
	.exec = cmd_history_exec,
};

struct cmd_history {
	struct cmd_ctx *ctx;
	int count;
};

static void
cmd_history_json(struct cmd_ctx *ctx, const struct store_run *r)
{
	cmd_print(ctx, "{\"job\":");
	cmd_print_json_string(ctx, r->job);
	cmd_print(ctx, ",\"instance\":%d,\"run_id\":", r->instance);
	cmd_print_json_string(ctx, r->run_id);
	cmd_print(ctx, ",\"pid\":%ld,\"started_us\":%lld", r->pid,
	    (long long)r->started);
	if (r->ready > 0)
		cmd_print(ctx, ",\"ready_us\":%lld", (long long)r->ready);
	else
		cmd_print(ctx, ",\"ready_us\":null");
	if (r->ended > 0)
		cmd_print(ctx, ",\"ended_us\":%lld,\"duration_s\":%.3f",
		    (long long)r->ended, (double)(r->ended - r->started) / 1e6);
	else
		cmd_print(ctx, ",\"ended_us\":null,\"duration_s\":null");
	cmd_print(ctx,
	    r->exit_code >= 0 ? ",\"exit_code\":%d" : ",\"exit_code\":null",
	    r->exit_code);
	if (r->signal > 0) {
		cmd_print(ctx, ",\"signal\":");
		cmd_print_json_string(ctx, signame_name(r->signal));
	} else
		cmd_print(ctx, ",\"signal\":null");
	cmd_print(ctx, ",\"reason\":");
	cmd_print_json_string(ctx, r->reason[0] != '\0' ? r->reason : NULL);
	cmd_print(ctx, "}");
}

static void
cmd_history_row(const struct store_run *r, void *arg)
{
	struct cmd_history *h = arg;
	char start[64], end[64], dur[32], ex[32];

	if (h->ctx->json) {
		cmd_print(h->ctx, "%s", h->count > 0 ? "," : "");
		cmd_history_json(h->ctx, r);
	} else {
		if (r->ended > 0)
			duration_format(
			    (uint64_t)(r->ended - r->started) / 1000 * 1000,
			    dur, sizeof(dur));
		else
			strlcpy(dur, "-", sizeof(dur));
		cmd_print(h->ctx, "%-23s %-23s %9s %-12s %s\n",
		    cmd_format_time(r->started, start, sizeof(start)),
		    cmd_format_time(r->ended, end, sizeof(end)), dur,
		    cmd_format_exit(r->exit_code, r->signal, ex, sizeof(ex)),
		    r->reason[0] != '\0' ? r->reason : "running");
	}
	h->count++;
}

/*
 * The job and instance (-1: every one) that target names, "job" or
 * "job@N".  Return 0, or -1 with the error printed and the exit code set.
 */
static int
cmd_history_target(
    struct cmd_ctx *ctx, char *target, const char **job, int *instance)
{
	struct inst **v;
	size_t nv;

	if (strcmp(target, "all") == 0) {
		cmd_error(ctx, "history: one job at a time");
		ctx->code = CMD_EXIT_USAGE;
		return (-1);
	}
	if (cmd_resolve(ctx, 1, &target, &v, &nv) == -1)
		return (-1);
	*job = v[0]->job->name;
	/* "job@N" names no job of its own: one instance. */
	*instance = supervise_find_job(target) == NULL ? v[0]->index : -1;
	free(v);
	return (0);
}

static enum cmd_retval
cmd_history_exec(struct cmd_ctx *ctx)
{
	struct cmd_history h;
	const char *job;
	char *cause = NULL, *end;
	long n = 20;
	int instance;

	if (ctx->opts['n']) {
		n = strtol(ctx->optarg['n'], &end, 10);
		if (*ctx->optarg['n'] == '\0' || *end != '\0' || n < 1 ||
		    n > 1000000) {
			cmd_error(ctx, "history: -n: not a count: %s",
			    ctx->optarg['n']);
			ctx->code = CMD_EXIT_USAGE;
			return (CMD_ERROR);
		}
	}
	if (cmd_history_target(ctx, ctx->argv[0], &job, &instance) == -1)
		return (CMD_ERROR);
	h.ctx = ctx;
	h.count = 0;
	if (ctx->json)
		cmd_print(ctx, "{\"runs\":[");
	else
		cmd_print(ctx, "%-23s %-23s %9s %-12s %s\n", "START", "END",
		    "DURATION", "EXIT", "REASON");
	if (state_history(job, instance, (int)n, cmd_history_row, &h, &cause) ==
	    -1) {
		cmd_error(ctx, "history: %s", cause);
		free(cause);
		return (CMD_ERROR);
	}
	if (ctx->json)
		cmd_print(ctx, "]}\n");
	return (CMD_OK);
}
