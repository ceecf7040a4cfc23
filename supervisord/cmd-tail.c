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

#include "vigild.h"
#include "xmalloc.h"

/* The most lines and bytes the first part of a tail shows. */
#define CMD_TAIL_MAX_LINES 100000
#define CMD_TAIL_MAX_BYTES (4 * 1024 * 1024)

static enum cmd_retval cmd_tail_exec(struct cmd_ctx *);
static enum cmd_retval cmd_logrotate_exec(struct cmd_ctx *);

const struct cmd_entry cmd_tail_entry = {
	.name = "tail",
	.usage = "[-f] [-n N] job",
	.optstring = "fn:",
	.longopts = "follow=f,lines=n",
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_READONLY,
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
cmd_tail_json(struct cmd_ctx *ctx, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len, *nl;
	char *line;
	int first = 1;

	cmd_print(ctx, "\"lines\":[");
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		line = xstrndup(p, (size_t)(nl - p));
		cmd_print(ctx, "%s", first ? "" : ",");
		cmd_print_json_string(ctx, line);
		free(line);
		first = 0;
		p = nl + 1;
	}
	cmd_print(ctx, "]");
}

static enum cmd_retval
cmd_tail_exec(struct cmd_ctx *ctx)
{
	const char *path, *why;
	struct inst **v;
	struct job *j;
	char *buf = NULL, *cause = NULL, *end;
	size_t len, nv;
	long n = 10;

	if (ctx->opts['n']) {
		n = strtol(ctx->optarg['n'], &end, 10);
		if (*ctx->optarg['n'] == '\0' || *end != '\0' || n < 0 ||
		    n > CMD_TAIL_MAX_LINES) {
			cmd_error(ctx, "tail: -n: not a count from 0 to %d: %s",
			    CMD_TAIL_MAX_LINES, ctx->optarg['n']);
			ctx->code = CMD_EXIT_USAGE;
			return (CMD_ERROR);
		}
	}
	if (ctx->json && ctx->opts['f']) {
		cmd_error(ctx, "tail: --json cannot follow (-f)");
		ctx->code = CMD_EXIT_USAGE;
		return (CMD_ERROR);
	}
	/* "job" or "job@N": either way, the job's one file. */
	if (strcmp(ctx->argv[0], "all") == 0) {
		cmd_error(ctx, "tail: one job at a time");
		ctx->code = CMD_EXIT_USAGE;
		return (CMD_ERROR);
	}
	if (cmd_resolve(ctx, 1, ctx->argv, &v, &nv) == -1)
		return (CMD_ERROR);
	j = v[0]->job;
	free(v);
	/* Job output is as private as the log files (mode 0640). */
	if (!cmd_peer_may_act(ctx->client)) {
		cmd_error(ctx,
		    "tail: permission denied (uid %ld may not read "
		    "job output)",
		    (long)server_client_uid(ctx->client));
		return (CMD_ERROR);
	}
	if ((path = output_job_path(j, &why)) == NULL) {
		if (strcmp(why, "journal") == 0)
			cmd_error(ctx,
			    "%s: output goes to the journal: "
			    "journalctl -t %s%s",
			    j->name, j->name, ctx->opts['f'] ? " -f" : "");
		else
			cmd_error(ctx,
			    "%s: output is not captured "
			    "(stdout and stderr are null or inherit)",
			    j->name);
		return (CMD_ERROR);
	}
	if (output_job_tail(
	        j, (size_t)n, CMD_TAIL_MAX_BYTES, &buf, &len, &cause) == -1) {
		cmd_error(ctx, "tail: %s", cause);
		free(cause);
		return (CMD_ERROR);
	}
	if (ctx->json) {
		cmd_print(ctx, "{\"job\":");
		cmd_print_json_string(ctx, j->name);
		cmd_print(ctx, ",\"file\":");
		cmd_print_json_string(ctx, path);
		cmd_print(ctx, ",");
		cmd_tail_json(ctx, buf, len);
		cmd_print(ctx, "}\n");
	} else if (len > 0)
		proto_buf_add(&ctx->out, buf, len);
	free(buf);
	if (!ctx->opts['f'])
		return (CMD_OK);
	output_follow(j, ctx->client);
	return (CMD_WAIT);
}

static enum cmd_retval
cmd_logrotate_exec(struct cmd_ctx *ctx)
{
	size_t n;

	n = output_reopen_all();
	cmd_print(ctx, "reopened %zu log file%s\n", n, n == 1 ? "" : "s");
	return (CMD_OK);
}
