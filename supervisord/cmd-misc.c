/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/* ping, version, shutdown and list-commands. */

#include "config.h"

#include <sys/types.h>

#include <unistd.h>

#include "log.h"
#include "vigild.h"

static enum cmd_retval cmd_ping_exec(struct cmd_ctx *);
static enum cmd_retval cmd_version_exec(struct cmd_ctx *);
static enum cmd_retval cmd_shutdown_exec(struct cmd_ctx *);
static enum cmd_retval cmd_list_commands_exec(struct cmd_ctx *);

const struct cmd_entry cmd_ping_entry = {
	.name = "ping",
	.usage = "",
	.optstring = "",
	.min_args = 0,
	.max_args = 0,
	.flags = CMD_READONLY,
	.help = "check that vigild answers",
	.exec = cmd_ping_exec,
};

const struct cmd_entry cmd_version_entry = {
	.name = "version",
	.usage = "",
	.optstring = "",
	.min_args = 0,
	.max_args = 0,
	.flags = CMD_READONLY,
	.help = "print the version of vigild",
	.exec = cmd_version_exec,
};

const struct cmd_entry cmd_shutdown_entry = {
	.name = "shutdown",
	.usage = "",
	.optstring = "",
	.min_args = 0,
	.max_args = 0,
	.help = "stop every job, then make vigild exit",
	.exec = cmd_shutdown_exec,
};

const struct cmd_entry cmd_list_commands_entry = {
	.name = "list-commands",
	.alias = "help",
	.usage = "",
	.optstring = "",
	.min_args = 0,
	.max_args = 0,
	.flags = CMD_READONLY,
	.help = "list the commands vigild understands",
	.exec = cmd_list_commands_exec,
};

static enum cmd_retval
cmd_ping_exec(struct cmd_ctx *ctx)
{
	if (ctx->json)
		cmd_print(ctx, "{\"pong\":true,\"pid\":%ld}\n", (long)getpid());
	else
		cmd_print(ctx, "pong\n");
	return (CMD_OK);
}

static enum cmd_retval
cmd_version_exec(struct cmd_ctx *ctx)
{
	if (ctx->json)
		cmd_print(ctx, "{\"version\":\"%s\"}\n", PACKAGE_VERSION);
	else
		cmd_print(ctx, "vigild %s\n", PACKAGE_VERSION);
	return (CMD_OK);
}

static enum cmd_retval
cmd_shutdown_exec(struct cmd_ctx *ctx)
{
	log_info("shutdown requested");
	/* The reply ends when vigild exits. */
	server_client_hold(ctx->client);
	supervise_shutdown();
	return (CMD_WAIT);
}

static enum cmd_retval
cmd_list_commands_exec(struct cmd_ctx *ctx)
{
	const struct cmd_entry *const *e;

	for (e = cmd_table; *e != NULL; e++) {
		if (ctx->json)
			continue;
		cmd_print(ctx, "%s%s%s%s%s%s\n", (*e)->name,
		    (*e)->alias ? " (" : "", (*e)->alias ? (*e)->alias : "",
		    (*e)->alias ? ")" : "", *(*e)->usage != '\0' ? " " : "",
		    (*e)->usage);
	}
	if (ctx->json) {
		cmd_print(ctx, "{\"commands\":[");
		for (e = cmd_table; *e != NULL; e++) {
			cmd_print(
			    ctx, "%s{\"name\":", e == cmd_table ? "" : ",");
			cmd_print_json_string(ctx, (*e)->name);
			cmd_print(ctx, ",\"usage\":");
			cmd_print_json_string(ctx, (*e)->usage);
			cmd_print(ctx, ",\"help\":");
			cmd_print_json_string(ctx, (*e)->help);
			cmd_print(ctx, "}");
		}
		cmd_print(ctx, "]}\n");
	}
	return (CMD_OK);
}
