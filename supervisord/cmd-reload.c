/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * reload [--dry-run]: re-read jobs.d and apply the difference (or only
 * print it).  A configuration with errors changes nothing; the errors go
 * back to the caller as FILE:LINE: message.
 */

#include "config.h"

#include <sys/types.h>

#include <stdlib.h>

#include "vigild.h"

static enum cmd_retval cmd_reload_exec(struct cmd_ctx *);

const struct cmd_entry cmd_reload_entry = {
	.name = "reload",
	.usage = "[--dry-run]",
	.optstring = "n",
	.longopts = "dry-run=n",
	.min_args = 0,
	.max_args = 0,
	.help = "re-read jobs.d: start new jobs, stop removed ones, restart "
	        "changed ones",
	.exec = cmd_reload_exec,
};

static void
cmd_reload_json_list(
    struct cmd_ctx *ctx, const char *key, char *const *v, size_t n)
{
	size_t i;

	cmd_print(ctx, "\"%s\":[", key);
	for (i = 0; i < n; i++) {
		if (i > 0)
			cmd_print(ctx, ",");
		cmd_print_json_string(ctx, v[i]);
	}
	cmd_print(ctx, "]");
}

static void
cmd_reload_text_list(
    struct cmd_ctx *ctx, const char *key, char *const *v, size_t n)
{
	size_t i;

	cmd_print(ctx, "%s:", key);
	for (i = 0; i < n; i++)
		cmd_print(ctx, " %s", v[i]);
	cmd_print(ctx, "\n");
}

static void
cmd_reload_print(
    struct cmd_ctx *ctx, const struct reload_report *r, int dry_run)
{
	void (*list)(struct cmd_ctx *, const char *, char *const *, size_t);

	list = ctx->json ? cmd_reload_json_list : cmd_reload_text_list;
	if (ctx->json)
		cmd_print(ctx, "{\"applied\":%s,", dry_run ? "false" : "true");
	else if (dry_run)
		cmd_print(ctx, "dry run: nothing applied\n");
	list(ctx, "added", r->added.names, r->added.n);
	if (ctx->json)
		cmd_print(ctx, ",");
	list(ctx, "changed", r->changed.names, r->changed.n);
	if (ctx->json)
		cmd_print(ctx, ",");
	list(ctx, "removed", r->removed.names, r->removed.n);
	if (ctx->json)
		cmd_print(ctx, ",\"unchanged\":%zu}\n", r->unchanged);
	else
		cmd_print(ctx, "unchanged: %zu\n", r->unchanged);
}

static enum cmd_retval
cmd_reload_exec(struct cmd_ctx *ctx)
{
	struct reload_report r;
	int dry_run = ctx->opts['n'] != 0;
	size_t i;

	if (reload_run(dry_run, &r) == -1) {
		if (ctx->json) {
			cmd_print(ctx, "{\"applied\":false,");
			cmd_reload_json_list(
			    ctx, "errors", r.errors.msgs, r.errors.n);
			cmd_print(ctx, "}\n");
		}
		for (i = 0; i < r.errors.n; i++)
			cmd_error(ctx, "%s", r.errors.msgs[i]);
		cmd_error(ctx, "reload: %zu error%s, nothing changed",
		    r.errors.n, r.errors.n == 1 ? "" : "s");
		reload_report_clear(&r);
		return (CMD_ERROR);
	}
	cmd_reload_print(ctx, &r, dry_run);
	reload_report_clear(&r);
	return (CMD_OK);
}
