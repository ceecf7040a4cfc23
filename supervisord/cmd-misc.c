/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/* ping, version, shutdown and list-commands. */

#include "config.h"

#include <sys/types.h>

#include <unistd.h>

#include "cmd.h"
#include "daemon.h"
#include "json.h"
#include "log.h"
#include "server.h"

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
	if (ctx->json) {
		json_object_begin(&ctx->jw);
		json_key(&ctx->jw, "pong");
		json_bool(&ctx->jw, 1);
		json_key(&ctx->jw, "pid");
		json_int(&ctx->jw, getpid());
		json_object_end(&ctx->jw);
		cmd_json_end(ctx);
	} else
		cmd_print(ctx, "pong\n");
	return (CMD_OK);
}

static enum cmd_retval
cmd_version_exec(struct cmd_ctx *ctx)
{
	if (ctx->json) {
		json_object_begin(&ctx->jw);
		json_key(&ctx->jw, "version");
		json_string(&ctx->jw, PACKAGE_VERSION);
		json_object_end(&ctx->jw);
		cmd_json_end(ctx);
	} else
		cmd_print(ctx, "vigild %s\n", PACKAGE_VERSION);
	return (CMD_OK);
}

static enum cmd_retval
cmd_shutdown_exec(struct cmd_ctx *ctx)
{
	log_info("shutdown requested");
	/* The reply ends when vigild exits. */
	server_client_hold(ctx->client);
	registry_shutdown();
	return (CMD_WAIT);
}

/* list-commands --json: name, usage and help of each command. */
static void
cmd_list_commands_json(struct cmd_ctx *ctx)
{
	const struct cmd_entry *const *e;
	struct json *jw = &ctx->jw;

	json_object_begin(jw);
	json_key(jw, "commands");
	json_array_begin(jw);
	for (e = cmd_table; *e != NULL; e++) {
		json_object_begin(jw);
		json_key(jw, "name");
		json_string(jw, (*e)->name);
		json_key(jw, "usage");
		json_string(jw, (*e)->usage);
		json_key(jw, "help");
		json_string(jw, (*e)->help);
		json_object_end(jw);
	}
	json_array_end(jw);
	json_object_end(jw);
	cmd_json_end(ctx);
}

static enum cmd_retval
cmd_list_commands_exec(struct cmd_ctx *ctx)
{
	const struct cmd_entry *const *e;

	if (ctx->json) {
		cmd_list_commands_json(ctx);
		return (CMD_OK);
	}
	for (e = cmd_table; *e != NULL; e++)
		cmd_print(ctx, "%s%s%s%s%s%s\n", (*e)->name,
		    (*e)->alias ? " (" : "", (*e)->alias ? (*e)->alias : "",
		    (*e)->alias ? ")" : "", *(*e)->usage != '\0' ? " " : "",
		    (*e)->usage);
	return (CMD_OK);
}
