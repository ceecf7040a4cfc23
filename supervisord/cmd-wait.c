/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * wait JOB... [--state STATE] [--timeout DUR]: block until every target
 * instance is in STATE (default RUNNING).  Exit 0 then, 1 on timeout.
 */

#include "config.h"

#include <sys/types.h>

#include <stdint.h>

#include "cmd.h"

static enum cmd_retval cmd_wait_exec(struct cmd_ctx *);

static const struct cmd_opt cmd_wait_opts[] = {
	{ 's', CMD_OPT_STATE, 0, 0 },
	{ 't', CMD_OPT_DURATION, 0, 0 },
	{ 0, CMD_OPT_STRING, 0, 0 },
};

const struct cmd_entry cmd_wait_entry = {
	.name = "wait",
	.usage = "[--state STATE] [--timeout DURATION] job ...",
	.optstring = "s:t:",
	.longopts = "state=s,timeout=t",
	.typed = cmd_wait_opts,
	.min_args = 1,
	.max_args = -1,
	.flags = CMD_READONLY,
	.target = CMD_TARGET_INSTANCES,
	.help = "wait until jobs reach a state (default RUNNING)",
	.exec = cmd_wait_exec,
};

static enum cmd_retval
cmd_wait_exec(struct cmd_ctx *ctx)
{
	enum job_state target;
	size_t i;
	int waiting = 0;

	target = (enum job_state)cmd_opt_num(ctx, 's', JOB_RUNNING);
	for (i = 0; i < ctx->ninsts; i++) {
		if (waiters_add(ctx->client, ctx->insts[i], WAIT_STATE, target))
			waiting = 1;
	}
	if (!waiting) {
		ctx->code = waiters_code(ctx->client);
		return (CMD_OK);
	}
	if (ctx->opts['t'])
		waiters_timeout(
		    ctx->client, (uint64_t)cmd_opt_num(ctx, 't', 0));
	return (CMD_WAIT);
}
