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

#include "cmd.h"
#include "daemon.h"
#include "json.h"

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

/* "key":[names...] */
static void
cmd_reload_json_list(struct json *jw, const char *key, char *const *v, size_t n)
{
	size_t i;

	json_key(jw, key);
	json_array_begin(jw);
	for (i = 0; i < n; i++)
		json_string(jw, v[i]);
	json_array_end(jw);
}

/* key: names... */
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
cmd_reload_json(struct cmd_ctx *ctx, const struct reload_report *r, int dry_run)
{
	struct json *jw = &ctx->jw;

	json_object_begin(jw);
	json_key(jw, "applied");
	json_bool(jw, !dry_run);
	cmd_reload_json_list(jw, "added", r->added.names, r->added.n);
	cmd_reload_json_list(jw, "changed", r->changed.names, r->changed.n);
	cmd_reload_json_list(jw, "removed", r->removed.names, r->removed.n);
	json_key(jw, "unchanged");
	json_uint(jw, r->unchanged);
	json_object_end(jw);
	cmd_json_end(ctx);
}

static void
cmd_reload_print(
    struct cmd_ctx *ctx, const struct reload_report *r, int dry_run)
{
	if (ctx->json) {
		cmd_reload_json(ctx, r, dry_run);
		return;
	}
	if (dry_run)
		cmd_print(ctx, "dry run: nothing applied\n");
	cmd_reload_text_list(ctx, "added", r->added.names, r->added.n);
	cmd_reload_text_list(ctx, "changed", r->changed.names, r->changed.n);
	cmd_reload_text_list(ctx, "removed", r->removed.names, r->removed.n);
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
			json_object_begin(&ctx->jw);
			json_key(&ctx->jw, "applied");
			json_bool(&ctx->jw, 0);
			cmd_reload_json_list(
			    &ctx->jw, "errors", r.errors.msgs, r.errors.n);
			json_object_end(&ctx->jw);
			cmd_json_end(ctx);
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
