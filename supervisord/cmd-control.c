/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * start, stop, restart and signal.  The first three act on every target,
 * then wait for the outcome unless --no-wait: start and restart succeed
 * when the instance is RUNNING and fail when it falls into BACKOFF, FATAL
 * or EXITED; stop succeeds when nothing of the instance is left.
 */

#include "config.h"

#include <sys/types.h>

#include <stdlib.h>
#include <string.h>

#include "signame.h"
#include "vigild.h"

static enum cmd_retval cmd_control_exec(struct cmd_ctx *);
static enum cmd_retval cmd_signal_exec(struct cmd_ctx *);

const struct cmd_entry cmd_start_entry = {
	.name = "start",
	.usage = "[--no-wait] job|all ...",
	.optstring = "W",
	.longopts = "no-wait=W",
	.min_args = 1,
	.max_args = -1,
	.help = "start jobs and wait until they run",
	.exec = cmd_control_exec,
};

const struct cmd_entry cmd_stop_entry = {
	.name = "stop",
	.usage = "[--no-wait] job|all ...",
	.optstring = "W",
	.longopts = "no-wait=W",
	.min_args = 1,
	.max_args = -1,
	.help = "stop jobs and wait until they are gone",
	.exec = cmd_control_exec,
};

const struct cmd_entry cmd_restart_entry = {
	.name = "restart",
	.usage = "[--no-wait] job|all ...",
	.optstring = "W",
	.longopts = "no-wait=W",
	.min_args = 1,
	.max_args = -1,
	.help = "stop then start jobs",
	.exec = cmd_control_exec,
};

const struct cmd_entry cmd_signal_entry = {
	.name = "signal",
	.alias = "kill",
	.usage = "signal job|all ...",
	.optstring = "",
	.min_args = 2,
	.max_args = -1,
	.help = "send a signal to jobs",
	.exec = cmd_signal_exec,
};

static void
cmd_control_one(struct cmd_ctx *ctx, const char *verb, struct inst *in)
{
	long uid = (long)server_client_uid(ctx->client);

	/* restart is a stop, then a start once the stop completed. */
	if (strcmp(verb, "start") != 0)
		supervise_inst_stop(in);
	if (strcmp(verb, "stop") != 0) {
		supervise_inst_start(in);
		in->by_hand = 1;
		state_intent(in, 0, 1, uid);
	} else {
		/* Neither a reload nor a restart of vigild starts it. */
		in->held = 1;
		in->by_hand = 0;
		state_intent(in, 1, 0, uid);
	}
}

static enum cmd_retval
cmd_control_exec(struct cmd_ctx *ctx)
{
	const char *verb = ctx->entry->name;
	enum wait_kind kind;
	struct inst **v;
	size_t n, i;
	int waiting = 0;

	if (cmd_resolve(ctx, ctx->argc, ctx->argv, &v, &n) == -1)
		return (CMD_ERROR);
	for (i = 0; i < n; i++)
		cmd_control_one(ctx, verb, v[i]);
	kind = strcmp(verb, "stop") == 0 ? WAIT_STOP : WAIT_START;
	for (i = 0; i < n && !ctx->opts['W']; i++) {
		if (server_waiter_add(ctx->client, v[i], kind, JOB_RUNNING))
			waiting = 1;
	}
	free(v);
	if (waiting)
		return (CMD_WAIT);
	ctx->code = server_client_wait_code(ctx->client);
	return (ctx->code == 0 ? CMD_OK : CMD_ERROR);
}

static enum cmd_retval
cmd_signal_exec(struct cmd_ctx *ctx)
{
	struct inst **v;
	size_t n, i;
	int sig;

	if ((sig = signame_parse(ctx->argv[0])) <= 0) {
		cmd_error(ctx, "%s: unknown signal", ctx->argv[0]);
		ctx->code = CMD_EXIT_USAGE;
		return (CMD_ERROR);
	}
	if (cmd_resolve(ctx, ctx->argc - 1, ctx->argv + 1, &v, &n) == -1)
		return (CMD_ERROR);
	for (i = 0; i < n; i++) {
		if (v[i]->pid > 0)
			supervise_inst_signal(v[i], sig);
		else {
			cmd_error(ctx, "%s: not running", v[i]->label);
			ctx->code = CMD_EXIT_FAILED;
		}
	}
	free(v);
	return (ctx->code == 0 ? CMD_OK : CMD_ERROR);
}
