/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * wait JOB... [--state STATE] [--timeout DUR]: block until every target
 * instance is in STATE (default RUNNING).  Exit 0 then, 1 on timeout.
 */

#include "config.h"

#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>

#include "duration.h"
#include "vigild.h"

static enum cmd_retval cmd_wait_exec(struct cmd_ctx *);

const struct cmd_entry cmd_wait_entry = {
	.name = "wait",
	.usage = "[--state STATE] [--timeout DURATION] job ...",
	.optstring = "s:t:",
	.longopts = "state=s,timeout=t",
	.min_args = 1,
	.max_args = -1,
	.flags = CMD_READONLY,
	.help = "wait until jobs reach a state (default RUNNING)",
	.exec = cmd_wait_exec,
};

static enum cmd_retval
cmd_wait_exec(struct cmd_ctx *ctx)
{
	enum job_state target = JOB_RUNNING;
	uint64_t timeout = 0;
	struct inst **v;
	char *cause = NULL;
	size_t n, i;
	int st, waiting = 0;

	if (ctx->opts['s']) {
		if ((st = job_state_parse(ctx->optarg['s'])) == -1) {
			cmd_error(
			    ctx, "wait: unknown state %s", ctx->optarg['s']);
			ctx->code = CMD_EXIT_USAGE;
			return (CMD_ERROR);
		}
		target = (enum job_state)st;
	}
	if (ctx->opts['t'] &&
	    duration_parse(ctx->optarg['t'], &timeout, &cause) == -1) {
		cmd_error(ctx, "wait: --timeout: %s", cause);
		free(cause);
		ctx->code = CMD_EXIT_USAGE;
		return (CMD_ERROR);
	}
	if (cmd_resolve(ctx, ctx->argc, ctx->argv, &v, &n) == -1)
		return (CMD_ERROR);
	for (i = 0; i < n; i++) {
		if (server_waiter_add(ctx->client, v[i], WAIT_STATE, target))
			waiting = 1;
	}
	free(v);
	if (!waiting)
		return (CMD_OK);
	if (ctx->opts['t'])
		server_client_timeout(ctx->client, timeout);
	return (CMD_WAIT);
}
