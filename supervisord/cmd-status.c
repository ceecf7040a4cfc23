/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * status: a read-only view of the in-memory state, as an aligned table
 * or as JSON.  In cluster mode, status of cluster instances first
 * asks the database what every node sees (one query, pg_status_view):
 * the holder's run is shown on every node, this node's own state as
 * detail; without an answer, this node's view, said on stderr.
 */

#include "config.h"

#include <sys/types.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "cluster.h"
#include "cmd.h"
#include "daemon.h"
#include "duration.h"
#include "effects.h"
#include "jobs.h"
#include "json.h"
#include "monotime.h"
#include "pgstate.h"
#include "signame.h"
#include "state.h"
#include "store.h"
#include "timefmt.h"
#include "xmalloc.h"

/* How long status shows what happened to state.db: a day. */
#define CMD_STATUS_STATE_DB_SHOWN (24 * 3600 * 1000000LL)

static enum cmd_retval cmd_status_exec(struct cmd_ctx *);
static void cmd_status_state_db_json(struct cmd_ctx *);
static void cmd_status_limits_json(struct json *, const struct inst *);

/*
 * What the database says of one cluster instance (a row of
 * pg_status_view): the holder's open run, and the last run that ended,
 * on any node.
 */
struct cmd_status_cv {
	int64_t job_id;
	int instance;
	char holder[65]; /* "": no live lease */
	long pid;        /* of the holder's open run, or 0 */
	int64_t up;      /* usec since that run began */
	long restarts;   /* runs the holder began since it took the lease,
	                    less that one */
	char node[65];   /* where the last run ended; "": none did */
	int exit_code;   /* -1: none */
	int sig;         /* -1: none */
	char reason[256];
};

/* The database's view while status prints (NULL: this node's only). */
static const struct cmd_status_cv *cmd_status_cvs;
static size_t cmd_status_ncvs, cmd_status_cvi;

const struct cmd_entry cmd_status_entry = {
	.name = "status",
	.alias = "st",
	.usage = "[job ...]",
	.optstring = "",
	.min_args = 0,
	.max_args = -1,
	.flags = CMD_READONLY,
	.target = CMD_TARGET_INSTANCES,
	.target_flags = CMD_TARGET_DEFAULT_ALL | CMD_TARGET_BROKEN,
	.help = "show the state of jobs",
	.exec = cmd_status_exec,
};

static uint64_t
cmd_status_uptime(const struct inst *in, uint64_t now)
{
	if (in->run.pid == 0 || now < in->run.started)
		return (0);
	return (now - in->run.started);
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

/* The numbers of a periodic or backing-off instance, in JSON. */
static void
cmd_status_json_timing(struct json *jw, const struct inst *in, uint64_t now)
{
	if (in->per.src != NULL) {
		json_key(jw, "next_run_us");
		json_int(jw, in->per.wall);
		json_key(jw, "skipped");
		json_uint(jw, in->per.skipped);
	}
	if (in->state == JOB_BACKOFF) {
		json_key(jw, "delay_s");
		json_fixed(jw, (double)in->life.delay / 1e6, 3);
		json_key(jw, "next_start_s");
		json_fixed(jw,
		    in->next_start > now ?
		        (double)(in->next_start - now) / 1e6 :
		        0.0,
		    3);
	}
}

/* "  cpu 1.234s, memory 12.3M, 3 tasks" for a run in a cgroup. */
static void
cmd_status_usage_line(struct cmd_ctx *ctx, const struct inst *in)
{
	struct cgroup_usage u;

	if (in->run.pid <= 0 || track_usage(in, &u) == -1 ||
	    u.cpu_usec == UINT64_MAX)
		return;
	cmd_print(ctx, "  cpu %.3fs, memory %.1fM, %llu tasks\n",
	    (double)u.cpu_usec / 1e6, (double)u.memory_bytes / 1048576.0,
	    (unsigned long long)u.tasks);
}

/*
 * What the instance's run uses, from its cgroup: "cpu_usec",
 * "memory_bytes", "tasks" (each null when not known).
 */
static void
cmd_status_json_usage(struct json *jw, const struct inst *in)
{
	struct cgroup_usage u;
	const char *keys[] = { "cpu_usec", "memory_bytes", "tasks" };
	uint64_t v[3];
	size_t i;

	if (in->run.pid <= 0 || track_usage(in, &u) == -1)
		u.cpu_usec = u.memory_bytes = u.tasks = UINT64_MAX;
	v[0] = u.cpu_usec;
	v[1] = u.memory_bytes;
	v[2] = u.tasks;
	for (i = 0; i < 3; i++) {
		json_key(jw, keys[i]);
		if (v[i] != UINT64_MAX)
			json_uint(jw, v[i]);
		else
			json_null(jw);
	}
}

/* The database's view of in, or NULL (not asked, or no answer). */
static const struct cmd_status_cv *
cmd_status_cv(const struct inst *in)
{
	size_t i, k;

	for (i = 0; i < cmd_status_ncvs; i++) {
		/* The rows come in the order of the instances. */
		k = (cmd_status_cvi + i) % cmd_status_ncvs;
		if (cmd_status_cvs[k].job_id == in->job->cluster_id &&
		    cmd_status_cvs[k].instance == in->index) {
			cmd_status_cvi = k + 1;
			return (&cmd_status_cvs[k]);
		}
	}
	return (NULL);
}

/* Does another node run it?  Then its run is shown, not this node's. */
static int
cmd_status_elsewhere(const struct cmd_status_cv *cv)
{
	const char *me = cluster_node_name();

	return (cv != NULL && cv->pid > 0 && cv->holder[0] != '\0' &&
	    (me == NULL || strcmp(cv->holder, me) != 0));
}

/*
 * The last end on any node, for LAST-EXIT: "exit 3 (n2)", "lost (n1)",
 * "skipped (n3)" (a periodic slot).
 */
static char *
cmd_status_cv_exit(const struct cmd_status_cv *cv, char *buf, size_t len)
{
	char ex[40];

	if (strncmp(cv->reason, "lost", 4) == 0)
		strlcpy(ex, "lost", sizeof(ex));
	else if (strncmp(cv->reason, "skipped", 7) == 0)
		strlcpy(ex, "skipped", sizeof(ex));
	else
		cmd_format_exit(cv->exit_code, cv->sig, ex, sizeof(ex));
	snprintf(buf, len, "%s (%s)", ex, cv->node);
	return (buf);
}

/* The same on every node: status --json's "cluster" of an instance. */
static void
cmd_status_cv_json(struct json *jw, const struct cmd_status_cv *cv)
{
	if (cv == NULL) {
		json_null(jw);
		return;
	}
	json_object_begin(jw);
	json_key(jw, "holder");
	json_string(jw, cv->holder[0] != '\0' ? cv->holder : NULL);
	json_key(jw, "state");
	json_string(jw, cv->pid > 0 ? "RUNNING" : NULL);
	json_key(jw, "pid");
	if (cv->pid > 0)
		json_int(jw, cv->pid);
	else
		json_null(jw);
	json_key(jw, "uptime_s");
	if (cv->pid > 0)
		json_fixed(jw, (double)cv->up / 1e6, 3);
	else
		json_null(jw);
	json_key(jw, "restarts");
	if (cv->pid > 0)
		json_int(jw, cv->restarts);
	else
		json_null(jw);
	json_key(jw, "last_end");
	if (cv->node[0] == '\0') {
		json_null(jw);
		json_object_end(jw);
		return;
	}
	json_object_begin(jw);
	json_key(jw, "node");
	json_string(jw, cv->node);
	json_key(jw, "exit_code");
	if (cv->exit_code >= 0)
		json_int(jw, cv->exit_code);
	else
		json_null(jw);
	json_key(jw, "signal");
	json_string(jw, cv->sig > 0 ? signame_name(cv->sig) : NULL);
	json_key(jw, "reason");
	json_string(jw, cv->reason[0] != '\0' ? cv->reason : NULL);
	json_object_end(jw);
	json_object_end(jw);
}

/* One instance as a JSON object. */
static void
cmd_status_json_one(struct cmd_ctx *ctx, const struct inst *in, uint64_t now)
{
	struct json *jw = &ctx->jw;
	const struct broken_job *b;
	struct cluster_view cv;
	char buf[64], why[256];

	json_object_begin(jw);
	json_key(jw, "name");
	json_string(jw, in->label);
	json_key(jw, "job");
	json_string(jw, in->job->name);
	json_key(jw, "instance");
	json_int(jw, in->index);
	json_key(jw, "state");
	json_string(jw, job_state_name(in->state));
	json_key(jw, "pid");
	if (in->run.pid > 0)
		json_int(jw, in->run.pid);
	else
		json_null(jw);
	json_key(jw, "uptime_s");
	if (in->run.pid > 0)
		json_fixed(jw, (double)cmd_status_uptime(in, now) / 1e6, 3);
	else
		json_null(jw);
	json_key(jw, "restarts");
	json_uint(jw, in->life.restarts);
	json_key(jw, "failures");
	json_uint(jw, in->life.failures);
	json_key(jw, "last_exit");
	json_string(jw,
	    in->last.known ?
	        job_exit_describe(in->last.status, buf, sizeof(buf)) :
	        NULL);
	json_key(jw, "last_end");
	json_string(jw, in->last.what);
	json_key(jw, "kind");
	json_string(jw, cmd_status_kind(in));
	json_key(jw, "alert");
	if (in->alert.state == ALERT_OK)
		json_null(jw);
	else
		json_string(jw,
		    in->alert.state == ALERT_CRASHLOOP ? "crash-loop" :
		                                         "failing");
	cmd_status_limits_json(jw, in);
	if (cluster_view(in, &cv) == 0) {
		json_key(jw, "node");
		json_string(jw, cv.node);
		json_key(jw, "fencing_token");
		if (cv.epoch > 0)
			json_int(jw, cv.epoch);
		else
			json_null(jw);
		json_key(jw, "lease_expires_in_s");
		if (cv.expires_ms >= 0)
			json_fixed(jw, (double)cv.expires_ms / 1e3, 3);
		else
			json_null(jw);
		if (in->job->spec->kind != CONF_KIND_QUEUE) {
			json_key(jw, "cluster");
			cmd_status_cv_json(jw, cmd_status_cv(in));
		}
	}
	cmd_status_json_timing(jw, in, now);
	json_key(jw, "reason");
	json_string(jw, cluster_reason(in, why, sizeof(why)));
	json_key(jw, "status");
	json_string(jw, in->run.status);
	json_key(jw, "errno");
	if (in->run.notify_errno != 0)
		json_int(jw, in->run.notify_errno);
	else
		json_null(jw);
	cmd_status_json_usage(jw, in);
	/* The file broke after the job loaded: it runs the old config. */
	if ((b = reload_broken_find(in->job->name)) != NULL) {
		json_key(jw, "config_error");
		json_string(jw, b->reason);
	}
	json_object_end(jw);
}

static void
cmd_status_row(
    struct cmd_ctx *ctx, const struct inst *in, uint64_t now, int width)
{
	char pid[16], up[32], ex[112], next[64], tag[48] = "";
	const struct cmd_status_cv *rv = cmd_status_cv(in);
	const char *state = job_state_name(in->state), *node = "-";
	int away = cmd_status_elsewhere(rv);
	struct cluster_view cv;

	if (cluster_enabled()) {
		if (cluster_view(in, &cv) == -1)
			strlcpy(tag, "  (local)", sizeof(tag));
		else if (away)
			snprintf(
			    tag, sizeof(tag), "  (cluster; here %s)", state);
		else if (cv.epoch > 0)
			snprintf(tag, sizeof(tag),
			    "  (cluster, epoch %" PRId64 ")", cv.epoch);
		else
			strlcpy(tag, "  (cluster)", sizeof(tag));
		if (away)
			node = rv->holder;
		else if (cv.node != NULL)
			node = cv.node;
		cmd_print(ctx, "%-*s %-6s ", width, in->label, node);
	} else
		cmd_print(ctx, "%-*s ", width, in->label);
	if (away) {
		state = job_state_name(JOB_RUNNING);
		snprintf(pid, sizeof(pid), "%ld", rv->pid);
		cmd_status_duration((uint64_t)rv->up, up, sizeof(up));
	} else if (in->run.pid > 0) {
		snprintf(pid, sizeof(pid), "%ld", (long)in->run.pid);
		cmd_status_duration(cmd_status_uptime(in, now), up, sizeof(up));
	} else {
		strlcpy(pid, "-", sizeof(pid));
		strlcpy(up, "-", sizeof(up));
	}
	if (rv != NULL && rv->node[0] != '\0')
		cmd_status_cv_exit(rv, ex, sizeof(ex));
	else if (in->last.known)
		job_exit_describe(in->last.status, ex, sizeof(ex));
	else
		strlcpy(ex, "-", sizeof(ex));
	if (in->per.src != NULL)
		cmd_format_time(in->per.wall, next, sizeof(next));
	cmd_print(ctx, "%-8s %7s %8s %8u  %s%s%s%s\n", state, pid, up,
	    away ? (unsigned int)rv->restarts : in->life.restarts, ex,
	    in->per.src != NULL ? ", next run " : "",
	    in->per.src != NULL ? next : "", tag);
}

/* The detail lines of status for one named instance. */
/* The job's cgroup limits that are not enforced here, and why. */
static void
cmd_status_limits_line(struct cmd_ctx *ctx, const struct inst *in)
{
	char why[PATH_MAX + 64];
	unsigned int mask;

	if ((mask = track_limits_missing(in->job->spec, why, sizeof(why))) == 0)
		return;
	cmd_print(ctx, "  limits not enforced: %s (%s)\n",
	    track_limit_list(mask), why);
}

/* The same for --json: "limits_not_enforced": [option, ...]. */
static void
cmd_status_limits_json(struct json *jw, const struct inst *in)
{
	unsigned int mask, b;

	mask = track_limits_missing(in->job->spec, NULL, 0);
	json_key(jw, "limits_not_enforced");
	json_array_begin(jw);
	for (b = 0; track_limit_name(b) != NULL; b++) {
		if (mask & (1U << b))
			json_string(jw, track_limit_name(b));
	}
	json_array_end(jw);
}

static void
cmd_status_detail(struct cmd_ctx *ctx, const struct inst *in, uint64_t now)
{
	char next[32], delay[32], when[64], why[256];
	uint64_t left = in->next_start > now ? in->next_start - now : 0;
	const struct cmd_status_cv *rv;

	if (in->state == JOB_BACKOFF)
		cmd_print(ctx,
		    "  next start in %s (delay %s, %u failed starts in a row)\n",
		    cmd_status_duration(left, next, sizeof(next)),
		    cmd_status_duration(in->life.delay, delay, sizeof(delay)),
		    in->life.failures);
	if (in->per.src != NULL)
		cmd_print(ctx, "  next run at %s (%u slots skipped so far)\n",
		    cmd_format_time(in->per.wall, when, sizeof(when)),
		    in->per.skipped);
	if (in->reason != NULL)
		cmd_print(ctx, "  reason: %s\n",
		    cluster_reason(in, why, sizeof(why)));
	if ((rv = cmd_status_cv(in)) != NULL && rv->reason[0] != '\0')
		cmd_print(
		    ctx, "  last run ended on %s: %s\n", rv->node, rv->reason);
	if (in->alert.state != ALERT_OK)
		cmd_print(ctx, "  %s since %s: %u failed runs\n",
		    in->alert.state == ALERT_CRASHLOOP ? "in a crash loop" :
		                                         "failing",
		    cmd_format_time(in->alert.since, when, sizeof(when)),
		    in->alert.failures);
	if (in->life.intent != LIFE_INTENT_NONE)
		cmd_print(ctx, "  %s by uid %ld at %s\n",
		    in->life.intent == LIFE_INTENT_DOWN ? "stopped" : "started",
		    in->intent_uid,
		    cmd_format_time(in->intent_at, when, sizeof(when)));
	if (in->run.status != NULL)
		cmd_print(ctx, "  status: %s\n", in->run.status);
	cmd_status_usage_line(ctx, in);
	cmd_status_limits_line(ctx, in);
	if (in->run.notify_errno != 0)
		cmd_print(ctx, "  errno: %d (%s)\n", in->run.notify_errno,
		    strerror(in->run.notify_errno));
}

/*
 * A job file that did not load: state BROKEN, its first error as the
 * reason (in the LAST-EXIT column of the table).
 */
static void
cmd_status_broken(struct cmd_ctx *ctx, const struct broken_job *b, int width)
{
	struct json *jw = &ctx->jw;
	static const char *const nulls[] = { "pid", "uptime_s" };
	size_t i;

	if (!ctx->json) {
		cmd_print(ctx, "%-*s ", width, b->name);
		if (cluster_enabled())
			cmd_print(ctx, "%-6s ", "-");
		cmd_print(ctx, "%-8s %7s %8s %8u  %s\n", "BROKEN", "-", "-", 0U,
		    b->reason);
		return;
	}
	json_object_begin(jw);
	json_key(jw, "name");
	json_string(jw, b->name);
	json_key(jw, "job");
	json_string(jw, b->name);
	json_key(jw, "instance");
	json_int(jw, 0);
	json_key(jw, "state");
	json_string(jw, "BROKEN");
	for (i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++) {
		json_key(jw, nulls[i]);
		json_null(jw);
	}
	json_key(jw, "restarts");
	json_int(jw, 0);
	json_key(jw, "failures");
	json_int(jw, 0);
	json_key(jw, "last_exit");
	json_null(jw);
	json_key(jw, "kind");
	json_null(jw);
	json_key(jw, "reason");
	json_string(jw, b->reason);
	json_key(jw, "status");
	json_null(jw);
	json_key(jw, "errno");
	json_null(jw);
	json_object_end(jw);
}

/* One instance; with detail, a named one: its detail lines too. */
static void
cmd_status_one(struct cmd_ctx *ctx, const struct inst *in, uint64_t now,
    int width, int detail)
{
	const struct broken_job *b = reload_broken_find(in->job->name);

	if (ctx->json) {
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
	uint64_t now = monotime_now();
	size_t i = 0, k = 0;

	if (ctx->json) {
		json_object_begin(&ctx->jw);
		json_key(&ctx->jw, "jobs");
		json_array_begin(&ctx->jw);
	} else if (cluster_enabled())
		cmd_print(ctx, "%-*s %-6s %-8s %7s %8s %8s  %s\n", width, "JOB",
		    "NODE", "STATE", "PID", "UPTIME", "RESTARTS", "LAST-EXIT");
	else
		cmd_print(ctx, "%-*s %-8s %7s %8s %8s  %s\n", width, "JOB",
		    "STATE", "PID", "UPTIME", "RESTARTS", "LAST-EXIT");
	while (i < n || k < nb) {
		if (k < nb &&
		    (i == n ||
		        (!detail && strcmp(bv[k]->name, v[i]->job->name) < 0)))
			cmd_status_broken(ctx, bv[k++], width);
		else
			cmd_status_one(ctx, v[i++], now, width, detail);
	}
	if (ctx->json) {
		json_array_end(&ctx->jw);
		cmd_status_state_db_json(ctx);
		json_object_end(&ctx->jw);
		cmd_json_end(ctx);
	}
}

/*
 * On standard error, the instances that could not start because vigild
 * ran out of descriptors (their reason says so), the first few by name.
 */
static void
cmd_status_no_fds(struct cmd_ctx *ctx, struct inst **v, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		if (v[i]->reason == NULL || v[i]->run.pid > 0 ||
		    strncmp(v[i]->reason, INST_NO_FDS, strlen(INST_NO_FDS)) !=
		        0)
			continue;
		if (k == 0)
			cmd_print_err(
			    ctx, "vigild: could not start: %s:", INST_NO_FDS);
		if (k++ < 10)
			cmd_print_err(ctx, " %s", v[i]->label);
	}
	if (k > 10)
		cmd_print_err(ctx, " and %zu more", k - 10);
	if (k > 0)
		cmd_print_err(ctx,
		    " (raise vigild's limit on open files: "
		    "LimitNOFILE=, ulimit -n)\n");
}

/*
 * On standard error, before the table: what happened to state.db in the
 * last day (found deleted, replaced or corrupt; put back), and a put-back
 * that keeps failing, for as long as it does.
 */
static void
cmd_status_state_db(struct cmd_ctx *ctx)
{
	const struct state_health *h = state_watch_health();
	char at[TIMEFMT_LEN];

	if (h->failing != NULL)
		cmd_print_err(ctx,
		    "vigild: state.db cannot be put back at its path: %s "
		    "(writing on into the open file)\n",
		    h->failing);
	if (h->what != NULL && store_now() - h->at < CMD_STATUS_STATE_DB_SHOWN)
		cmd_print_err(ctx, "vigild: at %s: %s\n",
		    timefmt_wall(h->at, at, sizeof(at)), h->what);
}

/* state.db's health in status --json: "state_db": {...}. */
static void
cmd_status_state_db_json(struct cmd_ctx *ctx)
{
	const struct state_health *h = state_watch_health();
	struct json *jw = &ctx->jw;
	char at[TIMEFMT_LEN];

	json_key(jw, "state_db");
	json_object_begin(jw);
	json_key(jw, "ok");
	json_bool(jw, h->failing == NULL);
	json_key(jw, "lost");
	json_uint(jw, h->lost);
	json_key(jw, "restored");
	json_uint(jw, h->restored);
	json_key(jw, "last_event");
	if (h->what != NULL)
		json_string(jw, h->what);
	else
		json_null(jw);
	json_key(jw, "last_event_at");
	if (h->what != NULL)
		json_string(jw, timefmt_wall(h->at, at, sizeof(at)));
	else
		json_null(jw);
	json_key(jw, "failing");
	if (h->failing != NULL)
		json_string(jw, h->failing);
	else
		json_null(jw);
	json_object_end(jw);
}

/*
 * Print status for ctx's targets, with the database's view cv (n rows)
 * of its cluster instances, or without (NULL), and set the exit code.
 */
static void
cmd_status_show(struct cmd_ctx *ctx, const struct cmd_status_cv *cv, size_t n)
{
	struct inst **v = ctx->insts;
	const struct broken_job **bv = ctx->broken;
	size_t ni = ctx->ninsts, nb = ctx->nbroken, i;
	int width = 3, len, notrunning = 0, named = ctx->argc > 0;

	cmd_status_cvs = cv;
	cmd_status_ncvs = n;
	cmd_status_cvi = 0;
	for (i = 0; i < ni; i++) {
		if ((len = (int)strlen(v[i]->label)) > width)
			width = len;
		/* WAITING is a periodic job's healthy rest. */
		if (v[i]->state != JOB_RUNNING && v[i]->state != JOB_WAITING &&
		    !cmd_status_elsewhere(cmd_status_cv(v[i])))
			notrunning = 1;
	}
	for (i = 0; i < nb; i++) {
		if ((len = (int)strlen(bv[i]->name)) > width)
			width = len;
	}
	if (!ctx->json)
		cmd_status_state_db(ctx);
	cmd_status_print(ctx, v, ni, bv, nb, width, named);
	if (!ctx->json)
		cmd_status_no_fds(ctx, v, ni);
	/* A named broken file fails the command (1), before not running. */
	if (named && nb > 0)
		ctx->code = CMD_EXIT_FAILED;
	else if (named && notrunning)
		ctx->code = CMD_EXIT_NOT_RUNNING;
	cmd_status_cvs = NULL;
	cmd_status_ncvs = 0;
}

/* A status that waits for the database's view, and what it asked. */
struct cmd_status_later {
	struct cmd_ctx *l; /* the reply (cmd_later) */
	char **argv;       /* copies of the operands, to resolve again */
	int argc;
};

static void
cmd_status_later_free(struct cmd_status_later *sl)
{
	int i;

	for (i = 0; i < sl->argc; i++)
		free(sl->argv[i]);
	free(sl->argv);
	free(sl);
}

/* The database's view (pg_status_view's rows) into n of cv. */
static size_t
cmd_status_cv_read(const struct pgres *res, struct cmd_status_cv **cv)
{
	struct cmd_status_cv *c;
	const char *v;
	int row, n = pgres_ntuples(res);

	*cv = c = xcalloc(n > 0 ? (size_t)n : 1, sizeof(*c));
	for (row = 0; row < n; row++, c++) {
		c->job_id = pgres_int(res, row, 0, 0);
		c->instance = (int)pgres_int(res, row, 1, -1);
		if ((v = pgres_value(res, row, 2)) != NULL)
			strlcpy(c->holder, v, sizeof(c->holder));
		c->pid = (long)pgres_int(res, row, 3, 0);
		c->up = pgres_int(res, row, 4, 0);
		if ((v = pgres_value(res, row, 5)) != NULL)
			strlcpy(c->node, v, sizeof(c->node));
		c->exit_code = (int)pgres_int(res, row, 6, -1);
		c->sig = (int)pgres_int(res, row, 7, -1);
		if ((v = pgres_value(res, row, 8)) != NULL)
			strlcpy(c->reason, v, sizeof(c->reason));
		c->restarts = (long)pgres_int(res, row, 10, 0);
	}
	return ((size_t)n);
}

/*
 * The database answered (or could not): the targets resolved again (a
 * reload may have come in between), then status as usual.
 */
static void
cmd_status_cluster_done(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct cmd_status_later *sl = arg;
	struct cmd_ctx *l = sl->l;
	struct cmd_status_cv *cv = NULL;
	size_t n = 0;

	(void)sent;
	if (res == NULL)
		cmd_error(l, "warning: this node's view only: the database: %s",
		    err != NULL ? err : "no answer");
	else
		n = cmd_status_cv_read(res, &cv);
	l->argc = sl->argc;
	l->argv = sl->argv;
	if (l->client != NULL && cmd_targets(l) == 0)
		cmd_status_show(l, cv, n);
	else if (l->code == 0)
		l->code = CMD_EXIT_FAILED;
	free(cv);
	cmd_later_end(l);
	cmd_status_later_free(sl);
}

/* Is in a cluster instance whose view the database holds? */
static int
cmd_status_in_cluster(const struct inst *in)
{
	return (in->job->spec->cluster && in->job->cluster_id != 0 &&
	    in->job->spec->kind != CONF_KIND_QUEUE);
}

/*
 * Ask the database for its view of ctx's cluster instances: 0 when asked
 * (the reply comes later), -1 when there are none or it is out of reach
 * (warned on stderr).
 */
static int
cmd_status_cluster(struct cmd_ctx *ctx)
{
	struct cmd_status_later *sl;
	int64_t *ids, *idx;
	const char *p[2];
	char *pa[2], *cause = NULL;
	size_t i, n = 0;
	int r;

	if (!cluster_enabled())
		return (-1);
	ids = xreallocarray(NULL, ctx->ninsts + 1, sizeof(*ids));
	idx = xreallocarray(NULL, ctx->ninsts + 1, sizeof(*idx));
	for (i = 0; i < ctx->ninsts; i++) {
		if (!cmd_status_in_cluster(ctx->insts[i]))
			continue;
		ids[n] = ctx->insts[i]->job->cluster_id;
		idx[n++] = ctx->insts[i]->index;
	}
	pa[0] = n > 0 ? pg_array_int(ids, n) : NULL;
	pa[1] = n > 0 ? pg_array_int(idx, n) : NULL;
	free(ids);
	free(idx);
	if (n == 0)
		return (-1);
	sl = xcalloc(1, sizeof(*sl));
	p[0] = pa[0];
	p[1] = pa[1];
	r = cluster_ask(
	    pg_status_view, 2, p, cmd_status_cluster_done, sl, &cause);
	free(pa[0]);
	free(pa[1]);
	if (r == -1) {
		cmd_error(ctx, "warning: this node's view only: %s", cause);
		free(cause);
		free(sl);
		return (-1);
	}
	sl->argv = xreallocarray(NULL, (size_t)ctx->argc + 1, sizeof(char *));
	for (sl->argc = 0; sl->argc < ctx->argc; sl->argc++)
		sl->argv[sl->argc] = xstrdup(ctx->argv[sl->argc]);
	sl->argv[sl->argc] = NULL;
	sl->l = cmd_later(ctx);
	return (0);
}

static enum cmd_retval
cmd_status_exec(struct cmd_ctx *ctx)
{
	if (cmd_status_cluster(ctx) == 0)
		return (CMD_WAIT);
	cmd_status_show(ctx, NULL, 0);
	return (CMD_OK);
}
