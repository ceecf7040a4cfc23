/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * status and pid: read-only views of the in-memory state (never a database
 * query), as an aligned table or as JSON.
 */

#include "config.h"

#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "duration.h"
#include "vigild.h"
#include "xmalloc.h"

static enum cmd_retval cmd_status_exec(struct cmd_ctx *);
static enum cmd_retval cmd_pid_exec(struct cmd_ctx *);

const struct cmd_entry cmd_status_entry = {
	.name = "status",
	.alias = "st",
	.usage = "[job ...]",
	.optstring = "",
	.min_args = 0,
	.max_args = -1,
	.flags = CMD_READONLY,
	.help = "show the state of jobs",
	.exec = cmd_status_exec,
};

const struct cmd_entry cmd_pid_entry = {
	.name = "pid",
	.usage = "[job ... | all]",
	.optstring = "",
	.min_args = 0,
	.max_args = -1,
	.flags = CMD_READONLY,
	.help = "print the pid of vigild or of jobs",
	.exec = cmd_pid_exec,
};

static uint64_t
cmd_status_uptime(const struct inst *in, uint64_t now)
{
	if (in->pid == 0 || now < in->started)
		return (0);
	return (now - in->started);
}

/* A duration for the table: whole seconds, or whole ms below a second. */
static char *
cmd_status_duration(uint64_t usec, char *buf, size_t len)
{
	if (usec >= DURATION_USEC_PER_SEC)
		usec -= usec % DURATION_USEC_PER_SEC;
	else
		usec -= usec % DURATION_USEC_PER_MSEC;
	return (duration_format(usec, buf, len));
}

static const char *
cmd_status_kind(const struct inst *in)
{
	switch (in->job->spec->kind) {
	case CONF_KIND_PERIODIC:
		return ("periodic");
	case CONF_KIND_QUEUE:
		return ("queue");
	default:
		return ("service");
	}
}

static void
cmd_status_json_one(struct cmd_ctx *ctx, const struct inst *in, uint64_t now)
{
	const struct broken_job *b;
	char buf[64];

	cmd_print(ctx, "{\"name\":");
	cmd_print_json_string(ctx, in->label);
	cmd_print(ctx, ",\"job\":");
	cmd_print_json_string(ctx, in->job->name);
	cmd_print(ctx, ",\"instance\":%d,\"state\":\"%s\"", in->index,
	    job_state_name(in->state));
	if (in->pid > 0)
		cmd_print(ctx, ",\"pid\":%ld,\"uptime_s\":%.3f", (long)in->pid,
		    (double)cmd_status_uptime(in, now) / 1e6);
	else
		cmd_print(ctx, ",\"pid\":null,\"uptime_s\":null");
	cmd_print(ctx, ",\"restarts\":%u,\"failures\":%u", in->restarts,
	    in->failures);
	cmd_print(ctx, ",\"last_exit\":");
	cmd_print_json_string(ctx,
	    in->has_exit ?
	        job_exit_describe(in->last_status, buf, sizeof(buf)) :
	        NULL);
	cmd_print(ctx, ",\"kind\":\"%s\"", cmd_status_kind(in));
	if (in->slot != NULL)
		cmd_print(ctx, ",\"next_run_us\":%lld,\"skipped\":%u",
		    (long long)in->slot_wall, in->skipped);
	if (in->state == JOB_BACKOFF)
		cmd_print(ctx, ",\"delay_s\":%.3f,\"next_start_s\":%.3f",
		    (double)in->delay / 1e6,
		    in->next_start > now ?
		        (double)(in->next_start - now) / 1e6 :
		        0.0);
	cmd_print(ctx, ",\"reason\":");
	cmd_print_json_string(ctx, in->reason);
	cmd_print(ctx, ",\"status\":");
	cmd_print_json_string(ctx, in->status);
	if (in->notify_errno != 0)
		cmd_print(ctx, ",\"errno\":%d", in->notify_errno);
	else
		cmd_print(ctx, ",\"errno\":null");
	/* The file broke after the job loaded: it runs the old config. */
	if ((b = reload_broken_find(in->job->name)) != NULL) {
		cmd_print(ctx, ",\"config_error\":");
		cmd_print_json_string(ctx, b->reason);
	}
	cmd_print(ctx, "}");
}

static void
cmd_status_row(
    struct cmd_ctx *ctx, const struct inst *in, uint64_t now, int width)
{
	char pid[16], up[32], ex[64], next[64];

	if (in->pid > 0) {
		snprintf(pid, sizeof(pid), "%ld", (long)in->pid);
		cmd_status_duration(cmd_status_uptime(in, now), up, sizeof(up));
	} else {
		strlcpy(pid, "-", sizeof(pid));
		strlcpy(up, "-", sizeof(up));
	}
	if (in->has_exit)
		job_exit_describe(in->last_status, ex, sizeof(ex));
	else
		strlcpy(ex, "-", sizeof(ex));
	if (in->slot != NULL)
		periodic_format_time(in->slot_wall, next, sizeof(next));
	cmd_print(ctx, "%-*s %-8s %7s %8s %8u  %s%s%s\n", width, in->label,
	    job_state_name(in->state), pid, up, in->restarts, ex,
	    in->slot != NULL ? ", next run " : "",
	    in->slot != NULL ? next : "");
}

/* An ISO 8601 UTC time for wall-clock microseconds. */
static char *
cmd_status_time(int64_t usec, char *buf, size_t len)
{
	struct tm tm;
	time_t t = (time_t)(usec / 1000000);

	if (usec <= 0 || gmtime_r(&t, &tm) == NULL)
		strlcpy(buf, "-", len);
	else
		strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return (buf);
}

/* The detail lines of status for one named instance. */
static void
cmd_status_detail(struct cmd_ctx *ctx, const struct inst *in, uint64_t now)
{
	char next[32], delay[32], when[64];
	uint64_t left = in->next_start > now ? in->next_start - now : 0;

	if (in->state == JOB_BACKOFF)
		cmd_print(ctx,
		    "  next start in %s (delay %s, %u failed starts in a row)\n",
		    cmd_status_duration(left, next, sizeof(next)),
		    cmd_status_duration(in->delay, delay, sizeof(delay)),
		    in->failures);
	if (in->slot != NULL)
		cmd_print(ctx, "  next run at %s (%u slots skipped so far)\n",
		    periodic_format_time(in->slot_wall, when, sizeof(when)),
		    in->skipped);
	if (in->reason != NULL)
		cmd_print(ctx, "  reason: %s\n", in->reason);
	if (in->held || in->by_hand)
		cmd_print(ctx, "  %s by uid %ld at %s\n",
		    in->held ? "stopped" : "started", in->intent_uid,
		    cmd_status_time(in->intent_at, when, sizeof(when)));
	if (in->status != NULL)
		cmd_print(ctx, "  status: %s\n", in->status);
	if (in->notify_errno != 0)
		cmd_print(ctx, "  errno: %d (%s)\n", in->notify_errno,
		    strerror(in->notify_errno));
}

/*
 * A job file that did not load: state BROKEN, its first error as the
 * reason (in the LAST-EXIT column of the table).
 */
static void
cmd_status_broken(
    struct cmd_ctx *ctx, const struct broken_job *b, int width, int first)
{
	if (!ctx->json) {
		cmd_print(ctx, "%-*s %-8s %7s %8s %8u  %s\n", width, b->name,
		    "BROKEN", "-", "-", 0U, b->reason);
		return;
	}
	cmd_print(ctx, "%s{\"name\":", first ? "" : ",");
	cmd_print_json_string(ctx, b->name);
	cmd_print(ctx, ",\"job\":");
	cmd_print_json_string(ctx, b->name);
	cmd_print(ctx,
	    ",\"instance\":0,\"state\":\"BROKEN\",\"pid\":null,"
	    "\"uptime_s\":null,\"restarts\":0,\"failures\":0,"
	    "\"last_exit\":null,\"kind\":null,\"reason\":");
	cmd_print_json_string(ctx, b->reason);
	cmd_print(ctx, ",\"status\":null,\"errno\":null}");
}

/* One instance; with detail, a named one: its detail lines too. */
static void
cmd_status_one(struct cmd_ctx *ctx, const struct inst *in, uint64_t now,
    int width, int first, int detail)
{
	const struct broken_job *b = reload_broken_find(in->job->name);

	if (ctx->json) {
		if (!first)
			cmd_print(ctx, ",");
		cmd_status_json_one(ctx, in, now);
		return;
	}
	cmd_status_row(ctx, in, now, width);
	if (detail)
		cmd_status_detail(ctx, in, now);
	if (detail && b != NULL)
		cmd_print(ctx,
		    "  config error: %s (runs its previous config until a "
		    "reload loads the file)\n",
		    b->reason);
}

/*
 * Print instances v (n of them) and broken job files bv (nb of them):
 * merged by name for the overview; named ones (detail) in that order.
 */
static void
cmd_status_print(struct cmd_ctx *ctx, struct inst **v, size_t n,
    const struct broken_job **bv, size_t nb, int width, int detail)
{
	uint64_t now = supervise_now();
	size_t i = 0, k = 0, shown = 0;

	if (ctx->json)
		cmd_print(ctx, "{\"jobs\":[");
	else
		cmd_print(ctx, "%-*s %-8s %7s %8s %8s  %s\n", width, "JOB",
		    "STATE", "PID", "UPTIME", "RESTARTS", "LAST-EXIT");
	while (i < n || k < nb) {
		if (k < nb &&
		    (i == n ||
		        (!detail && strcmp(bv[k]->name, v[i]->job->name) < 0)))
			cmd_status_broken(ctx, bv[k++], width, shown++ == 0);
		else
			cmd_status_one(
			    ctx, v[i++], now, width, shown++ == 0, detail);
	}
	if (ctx->json)
		cmd_print(ctx, "]}\n");
}

/*
 * Take the operands that name a broken job file (and no job) out of
 * ctx->argv into *bv; return how many.  No operand: every broken file.
 */
static size_t
cmd_status_take_broken(struct cmd_ctx *ctx, const struct broken_job ***bv)
{
	const struct broken_job *b;
	size_t nb = 0;
	int i, keep = 0;

	*bv = xcalloc(vigild.nbroken + (size_t)ctx->argc + 1, sizeof(**bv));
	if (ctx->argc == 0) {
		for (nb = 0; nb < vigild.nbroken; nb++)
			(*bv)[nb] = &vigild.broken[nb];
		return (nb);
	}
	for (i = 0; i < ctx->argc; i++) {
		if (supervise_find_job(ctx->argv[i]) == NULL &&
		    !cmd_is_instance(ctx->argv[i]) &&
		    (b = reload_broken_find(ctx->argv[i])) != NULL)
			(*bv)[nb++] = b;
		else
			ctx->argv[keep++] = ctx->argv[i];
	}
	ctx->argc = keep;
	return (nb);
}

static enum cmd_retval
cmd_status_exec(struct cmd_ctx *ctx)
{
	static char *all[] = { "all" };
	const struct broken_job **bv;
	struct inst **v = NULL;
	size_t n = 0, nb, i;
	int width = 3, len, notrunning = 0, named = ctx->argc > 0;

	nb = cmd_status_take_broken(ctx, &bv);
	/* No operand: every instance, as "all". */
	if ((ctx->argc > 0 || !named) &&
	    cmd_resolve(ctx, ctx->argc > 0 ? ctx->argc : 1,
	        ctx->argc > 0 ? ctx->argv : all, &v, &n) == -1) {
		free(bv);
		return (CMD_ERROR);
	}
	for (i = 0; i < n; i++) {
		if ((len = (int)strlen(v[i]->label)) > width)
			width = len;
		/* WAITING is a periodic job's healthy rest. */
		if (v[i]->state != JOB_RUNNING && v[i]->state != JOB_WAITING)
			notrunning = 1;
	}
	for (i = 0; i < nb; i++) {
		if ((len = (int)strlen(bv[i]->name)) > width)
			width = len;
	}
	cmd_status_print(ctx, v, n, bv, nb, width, named);
	free(v);
	free(bv);
	/* A named broken file fails the command (1), before not running. */
	if (named && nb > 0)
		ctx->code = CMD_EXIT_FAILED;
	else if (named && notrunning)
		ctx->code = CMD_EXIT_NOT_RUNNING;
	return (CMD_OK);
}

/*
 * pid: vigild's pid; pid JOB: the bare pid of each running instance (for
 * scripts); with several targets or "all", "NAME PID" lines, "-" for an
 * instance without a process.  Exit 3 if one has none.
 */
static enum cmd_retval
cmd_pid_exec(struct cmd_ctx *ctx)
{
	struct inst **v;
	size_t n, i;
	int named;

	named = ctx->argc > 1 ||
	    (ctx->argc == 1 && strcmp(ctx->argv[0], "all") == 0);
	if (ctx->argc == 0) {
		cmd_print(ctx, ctx->json ? "{\"pid\":%ld}\n" : "%ld\n",
		    (long)getpid());
		return (CMD_OK);
	}
	if (cmd_resolve(ctx, ctx->argc, ctx->argv, &v, &n) == -1)
		return (CMD_ERROR);
	if (ctx->json)
		cmd_print(ctx, "{\"pids\":[");
	for (i = 0; i < n; i++) {
		if (v[i]->pid <= 0)
			ctx->code = CMD_EXIT_NOT_RUNNING;
		if (ctx->json) {
			cmd_print(ctx, "%s{\"name\":", i > 0 ? "," : "");
			cmd_print_json_string(ctx, v[i]->label);
			cmd_print(ctx,
			    v[i]->pid > 0 ? ",\"pid\":%ld}" : ",\"pid\":null}",
			    (long)v[i]->pid);
		} else if (named && v[i]->pid > 0)
			cmd_print(
			    ctx, "%s %ld\n", v[i]->label, (long)v[i]->pid);
		else if (named)
			cmd_print(ctx, "%s -\n", v[i]->label);
		else if (v[i]->pid > 0)
			cmd_print(ctx, "%ld\n", (long)v[i]->pid);
	}
	if (ctx->json)
		cmd_print(ctx, "]}\n");
	free(v);
	return (CMD_OK);
}
