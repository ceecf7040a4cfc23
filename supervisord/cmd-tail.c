/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * tail [-f] [-n N] JOB: the last lines of a job's log file, then with -f
 * every new line until the client goes away.  logrotate: reopen every log
 * file after an external rotation (as SIGUSR2 does).
 */

#include "config.h"

#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "effects.h"
#include "jobs-view.h"
#include "json.h"
#include "server.h"

/* The most lines and bytes the first part of a tail shows. */
#define CMD_TAIL_MAX_LINES 100000
#define CMD_TAIL_MAX_BYTES (4 * 1024 * 1024)

static enum cmd_retval cmd_tail_check(struct cmd_ctx *);
static enum cmd_retval cmd_tail_exec(struct cmd_ctx *);
static enum cmd_retval cmd_logrotate_exec(struct cmd_ctx *);

static const struct cmd_opt cmd_tail_opts[] = {
	{ 'n', CMD_OPT_INT, 0, CMD_TAIL_MAX_LINES },
	{ 0, CMD_OPT_STRING, 0, 0 },
};

const struct cmd_entry cmd_tail_entry = {
	.name = "tail",
	.usage = "[-f] [-n N] job",
	.optstring = "fn:",
	.longopts = "follow=f,lines=n",
	.typed = cmd_tail_opts,
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_READONLY,
	.target = CMD_TARGET_ONE_JOB,
	.check = cmd_tail_check,
	.help = "print the last lines of a job's output (-f: and follow it)",
	.exec = cmd_tail_exec,
};

const struct cmd_entry cmd_logrotate_entry = {
	.name = "logrotate",
	.usage = "",
	.optstring = "",
	.min_args = 0,
	.max_args = 0,
	.help = "reopen the jobs' log files (after an external logrotate)",
	.exec = cmd_logrotate_exec,
};

/* Print the lines of buf as a JSON array. */
static void
cmd_tail_json_lines(struct json *jw, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len, *nl;

	json_key(jw, "lines");
	json_array_begin(jw);
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		json_string_len(jw, p, (size_t)(nl - p));
		p = nl + 1;
	}
	json_array_end(jw);
}

/* tail --json: {"job":..., "file":..., "lines":[...]} */
static void
cmd_tail_json(struct cmd_ctx *ctx, const struct job *j, const char *path,
    const char *buf, size_t len)
{
	json_object_begin(&ctx->jw);
	json_key(&ctx->jw, "job");
	json_string(&ctx->jw, job_name(j));
	json_key(&ctx->jw, "file");
	json_string(&ctx->jw, path);
	cmd_tail_json_lines(&ctx->jw, buf, len);
	json_object_end(&ctx->jw);
	cmd_json_end(ctx);
}

/* JSON is one reply: it cannot follow. */
static enum cmd_retval
cmd_tail_check(struct cmd_ctx *ctx)
{
	if (ctx->json && ctx->opts['f']) {
		cmd_error(ctx, "tail: --json cannot follow (-f)");
		ctx->code = CMD_EXIT_USAGE;
		return (CMD_ERROR);
	}
	return (CMD_OK);
}

/* Why the job's output cannot be read back: say it. */
static enum cmd_retval
cmd_tail_nofile(struct cmd_ctx *ctx, const struct job *j, const char *why)
{
	if (strcmp(why, "journal") == 0)
		cmd_error(ctx,
		    "%s: output goes to the journal: journalctl -t %s%s",
		    job_name(j), job_name(j), ctx->opts['f'] ? " -f" : "");
	else
		cmd_error(ctx,
		    "%s: output is not captured "
		    "(stdout and stderr are null or inherit)",
		    job_name(j));
	return (CMD_ERROR);
}

static enum cmd_retval
cmd_tail_exec(struct cmd_ctx *ctx)
{
	/* "job" or "job@N": either way, the job's one file. */
	struct job *j = inst_job(ctx->insts[0]);
	const char *path, *why;
	char *buf = NULL, *cause = NULL;
	size_t len;

	/* Job output is as private as the log files (mode 0640). */
	if (!server_client_may_act(ctx->client)) {
		cmd_error(ctx,
		    "tail: permission denied (%s may not read job output)",
		    server_client_who(ctx->client));
		return (CMD_ERROR);
	}
	if ((path = joblog_job_path(j, &why)) == NULL)
		return (cmd_tail_nofile(ctx, j, why));
	if (joblog_job_tail(j, (size_t)cmd_opt_num(ctx, 'n', 10),
	        CMD_TAIL_MAX_BYTES, &buf, &len, &cause) == -1) {
		cmd_error(ctx, "tail: %s", cause);
		free(cause);
		return (CMD_ERROR);
	}
	if (ctx->json)
		cmd_tail_json(ctx, j, path, buf, len);
	else if (len > 0)
		proto_buf_add(&ctx->out, buf, len);
	free(buf);
	if (!ctx->opts['f'])
		return (CMD_OK);
	joblog_follow(j, ctx->client);
	return (CMD_WAIT);
}

static enum cmd_retval
cmd_logrotate_exec(struct cmd_ctx *ctx)
{
	size_t n;

	n = joblog_reopen_all();
	cmd_print(ctx, "reopened %zu log file%s\n", n, n == 1 ? "" : "s");
	return (CMD_OK);
}
