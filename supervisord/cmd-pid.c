/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * pid: vigild's pid; pid JOB: the bare pid of each running instance (for
 * scripts); with several targets or "all", "NAME PID" lines, "-" for an
 * instance without a process.  Exit 3 if one has none.
 */

#include "config.h"

#include <sys/types.h>

#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "jobs-view.h"
#include "json.h"

static enum cmd_retval cmd_pid_exec(struct cmd_ctx *);

const struct cmd_entry cmd_pid_entry = {
	.name = "pid",
	.usage = "[job ... | all]",
	.optstring = "",
	.min_args = 0,
	.max_args = -1,
	.flags = CMD_READONLY,
	.target = CMD_TARGET_INSTANCES,
	.help = "print the pid of vigild or of jobs",
	.exec = cmd_pid_exec,
};

/* pid --json: {"pids":[{"name":..., "pid":N or null}, ...]} */
static void
cmd_pid_json(struct cmd_ctx *ctx)
{
	struct json *jw = &ctx->jw;
	size_t i;

	json_object_begin(jw);
	json_key(jw, "pids");
	json_array_begin(jw);
	for (i = 0; i < ctx->ninsts; i++) {
		json_object_begin(jw);
		json_key(jw, "name");
		json_string(jw, inst_label(ctx->insts[i]));
		json_key(jw, "pid");
		if (inst_pid(ctx->insts[i]) > 0)
			json_int(jw, inst_pid(ctx->insts[i]));
		else
			json_null(jw);
		json_object_end(jw);
	}
	json_array_end(jw);
	json_object_end(jw);
	cmd_json_end(ctx);
}

static enum cmd_retval
cmd_pid_exec(struct cmd_ctx *ctx)
{
	struct inst **v = ctx->insts;
	size_t i;
	int named;

	named = ctx->argc > 1 ||
	    (ctx->argc == 1 && strcmp(ctx->argv[0], "all") == 0);
	if (ctx->argc == 0 && ctx->json) {
		json_object_begin(&ctx->jw);
		json_key(&ctx->jw, "pid");
		json_int(&ctx->jw, getpid());
		json_object_end(&ctx->jw);
		cmd_json_end(ctx);
	} else if (ctx->argc == 0)
		cmd_print(ctx, "%ld\n", (long)getpid());
	for (i = 0; i < ctx->ninsts; i++) {
		if (inst_pid(v[i]) <= 0)
			ctx->code = CMD_EXIT_NOT_RUNNING;
		if (ctx->json)
			continue;
		if (named && inst_pid(v[i]) > 0)
			cmd_print(ctx, "%s %ld\n", inst_label(v[i]),
			    (long)inst_pid(v[i]));
		else if (named)
			cmd_print(ctx, "%s -\n", inst_label(v[i]));
		else if (inst_pid(v[i]) > 0)
			cmd_print(ctx, "%ld\n", (long)inst_pid(v[i]));
	}
	if (ctx->json && ctx->argc > 0)
		cmd_pid_json(ctx);
	return (CMD_OK);
}
