/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * One job file as a struct job_spec: the defaults of interface.md, the
 * file read over them (conf-ctx.c, with the fields of conf-field.c), the
 * checks across options once every value is known (an option of another
 * kind, a cap below its start value, what needs ready = "notify"), and
 * the equality reload uses to tell a changed job from the same one.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/resource.h>

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "conf-int.h"
#include "duration.h"
#include "words.h"
#include "xmalloc.h"

/* The resource of each limit_* option, in the order of enum conf_limit. */
static const int conf_limit_resources[CONF_LIMIT_COUNT] = {
	RLIMIT_NOFILE,
	RLIMIT_CORE,
	RLIMIT_NPROC,
	RLIMIT_AS,
	RLIMIT_DATA,
	RLIMIT_STACK,
	RLIMIT_FSIZE,
	RLIMIT_CPU,
	RLIMIT_MEMLOCK,
};

/* A spec holding the defaults of interface.md. */
static struct job_spec *
job_spec_create(const char *name, const char *path)
{
	struct job_spec *spec;
	size_t i;

	spec = xcalloc(1, sizeof *spec);
	spec->name = xstrdup(name);
	spec->path = xstrdup(path);
	spec->kind = CONF_KIND_SERVICE;
	spec->instances = 1;
	spec->autostart = 1;
	spec->restart = CONF_RESTART_ALWAYS;
	spec->success[0] = 1; /* exit code 0 */
	spec->min_uptime = DURATION_USEC_PER_SEC;
	spec->restart_delay = 100 * DURATION_USEC_PER_MSEC;
	spec->restart_delay_max = 30 * DURATION_USEC_PER_SEC;
	spec->ready = CONF_READY_EXEC;
	spec->ready_timeout = 90 * DURATION_USEC_PER_SEC;
	spec->health_interval = 10 * DURATION_USEC_PER_SEC;
	spec->health_failures = 3;
	spec->watch_delay = 500 * DURATION_USEC_PER_MSEC;
	spec->stop_signal = SIGTERM;
	spec->stop_timeout = 10 * DURATION_USEC_PER_SEC;
	spec->kill_group = 1;
	spec->pdeath_signal = SIGTERM;
	spec->directory = xstrdup("/");
	spec->umask = -1;
	for (i = 0; i < CONF_LIMIT_COUNT; i++)
		spec->limits[i].resource = conf_limit_resources[i];
	spec->out = spec->err = CONF_OUTPUT_FILE;
	spec->log_max_size = 10 * 1024 * 1024;
	spec->log_keep = 5;
	spec->concurrency = 1;
	spec->max_attempts = 5;
	spec->retry_delay = DURATION_USEC_PER_SEC;
	spec->retry_delay_max = 600 * DURATION_USEC_PER_SEC;
	spec->hook_timeout = 30 * DURATION_USEC_PER_SEC;
	spec->limits_policy = -1;
	spec->alert_repeat = 3600 * DURATION_USEC_PER_SEC;
	spec->cluster_handover_after = 3;
	return (spec);
}

/*
 * A spec with every default and no command, read from no file: for a
 * process vigild runs that no job file describes (on_event).
 */
struct job_spec *
job_spec_new(const char *name)
{
	return (job_spec_create(name, ""));
}

/* Report option name set for a job kind it does not apply to. */
static void
job_spec_check_kinds(struct conf_ctx *ctx, struct job_spec *spec)
{
	static const struct {
		const char *name;
		unsigned int kinds; /* bits of enum conf_kind */
	} only[] = {
		{ "instances", 1U << CONF_KIND_SERVICE },
		{ "type", 1U << CONF_KIND_SERVICE },
		{ "pid_file", 1U << CONF_KIND_SERVICE },
		{ "health", 1U << CONF_KIND_SERVICE },
		{ "health_interval", 1U << CONF_KIND_SERVICE },
		{ "health_failures", 1U << CONF_KIND_SERVICE },
		{ "watch", 1U << CONF_KIND_SERVICE },
		{ "exec_start_pre", 1U << CONF_KIND_SERVICE },
		{ "exec_start_post", 1U << CONF_KIND_SERVICE },
		{ "exec_stop_post", 1U << CONF_KIND_SERVICE },
		{ "watch_delay", 1U << CONF_KIND_SERVICE },
		{ "start_limit", 1U << CONF_KIND_SERVICE },
		{ "cluster_handover_after", 1U << CONF_KIND_SERVICE },
		{ "every", 1U << CONF_KIND_PERIODIC },
		{ "schedule", 1U << CONF_KIND_PERIODIC },
		{ "catch_up", 1U << CONF_KIND_PERIODIC },
		{ "random_delay", 1U << CONF_KIND_PERIODIC },
		{ "timeout", 1U << CONF_KIND_PERIODIC | 1U << CONF_KIND_QUEUE },
		{ "concurrency", 1U << CONF_KIND_QUEUE },
		{ "cluster_concurrency", 1U << CONF_KIND_QUEUE },
		{ "max_attempts", 1U << CONF_KIND_QUEUE },
		{ "retry_delay", 1U << CONF_KIND_QUEUE },
		{ "retry_delay_max", 1U << CONF_KIND_QUEUE },
		{ "drain_timeout", 1U << CONF_KIND_QUEUE },
	};
	size_t i;

	for (i = 0; i < sizeof only / sizeof only[0]; i++) {
		if ((only[i].kinds & (1U << spec->kind)) == 0 &&
		    conf_ctx_given(ctx, only[i].name))
			conf_ctx_error(ctx, only[i].name,
			    "not valid for kind \"%s\"",
			    conf_field_kind_words[spec->kind]);
	}
	if (spec->pid_file != NULL && !spec->forking)
		conf_ctx_error(ctx, "pid_file", "needs type = \"forking\"");
	if (spec->forking && spec->ready == CONF_READY_NOTIFY)
		conf_ctx_error(ctx, "ready",
		    "\"notify\" is not valid with type = \"forking\": the "
		    "daemon is ready once its starter has exited 0");
	if (spec->kind != CONF_KIND_SERVICE && spec->ready == CONF_READY_PROBE)
		conf_ctx_error(
		    ctx, "ready", "a probe is only for kind \"service\"");
	if (spec->forking && spec->ready == CONF_READY_PROBE)
		conf_ctx_error(ctx, "ready",
		    "a probe is not valid with type = \"forking\": the "
		    "daemon is ready once its starter has exited 0");
	if (conf_ctx_given(ctx, "cluster_concurrency") && !spec->cluster)
		conf_ctx_error(
		    ctx, "cluster_concurrency", "needs cluster = true");
	if (conf_ctx_given(ctx, "cluster_handover_after") && !spec->cluster)
		conf_ctx_error(
		    ctx, "cluster_handover_after", "needs cluster = true");
	if (conf_ctx_given(ctx, "cluster_nodes") && !spec->cluster)
		conf_ctx_error(ctx, "cluster_nodes", "needs cluster = true");
	if (spec->kind == CONF_KIND_QUEUE && spec->ready == CONF_READY_NOTIFY)
		conf_ctx_error(
		    ctx, "ready", "\"notify\" is not valid for kind \"queue\"");
	if (spec->kind == CONF_KIND_QUEUE && spec->input == CONF_STDIN_PIPE)
		conf_ctx_error(ctx, "stdin",
		    "\"pipe\" is not valid for kind \"queue\": its stdin is the "
		    "message's payload");
	if (spec->kind != CONF_KIND_PERIODIC)
		return;
	if (!conf_ctx_given(ctx, "every") && !conf_ctx_given(ctx, "schedule"))
		conf_ctx_error(ctx, "kind",
		    "periodic job needs \"every\" or \"schedule\"");
	else if (conf_ctx_given(ctx, "every") &&
	    conf_ctx_given(ctx, "schedule"))
		conf_ctx_error(ctx, "schedule", "conflicts with \"every\"");
	else if (conf_ctx_given(ctx, "every") && spec->every == 0)
		conf_ctx_error(ctx, "every", "must be more than 0");
}

/* Report a cap (max) below its start value (min), at the cap if set. */
static void
job_spec_check_cap(struct conf_ctx *ctx, const char *minname, uint64_t min,
    const char *maxname, uint64_t max)
{
	char a[32], b[32];

	if (max >= min)
		return;
	duration_format(min, a, sizeof a);
	duration_format(max, b, sizeof b);
	if (conf_ctx_given(ctx, maxname))
		conf_ctx_error(
		    ctx, maxname, "%s is less than %s (%s)", b, minname, a);
	else
		conf_ctx_error(
		    ctx, minname, "%s is more than %s (%s)", a, maxname, b);
}

/* Checks across options, once each value is known. */
static void
job_spec_check(struct conf_ctx *ctx, struct job_spec *spec)
{
	if (!conf_ctx_given(ctx, "command"))
		conf_ctx_error(ctx, "command", "missing required option");
	job_spec_check_kinds(ctx, spec);
	job_spec_check_cap(ctx, "restart_delay", spec->restart_delay,
	    "restart_delay_max", spec->restart_delay_max);
	job_spec_check_cap(ctx, "retry_delay", spec->retry_delay,
	    "retry_delay_max", spec->retry_delay_max);
	if (spec->watchdog != 0 && spec->ready != CONF_READY_NOTIFY)
		conf_ctx_error(ctx, "watchdog", "needs ready = \"notify\"");
	if (spec->health_interval == 0 && spec->health.kind != PROBE_NONE)
		conf_ctx_error(ctx, "health_interval", "must be more than 0");
	if (!conf_ctx_given(ctx, "parent_death_signal"))
		spec->pdeath_signal = spec->stop_signal;
	if (!conf_ctx_given(ctx, "drain_timeout"))
		spec->drain_timeout = spec->stop_timeout;
}

/* "web" from ".../web.conf" (or the base name if it has no ".conf"). */
static char *
job_spec_name_of(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t len;

	base = base == NULL ? path : base + 1;
	len = strlen(base);
	if (len > 5 && strcmp(base + len - 5, ".conf") == 0)
		len -= 5;
	return (xstrndup(base, len));
}

/*
 * As job_spec_load, but errs must not be NULL, and the line of the
 * file's depends option (0 if not set) is also returned in *depends_line
 * if that is not NULL, for conf-jobs.c's errors about dependencies.
 */
struct job_spec *
job_spec_load_line(const char *path, const char *name, struct conf_errors *errs,
    int *depends_line)
{
	struct conf_ctx ctx;
	struct job_spec *spec;
	char *derived = NULL;
	int parsed;

	if (name == NULL)
		name = derived = job_spec_name_of(path);
	spec = job_spec_create(name, path);
	conf_ctx_init(&ctx, path, errs, spec, conf_field_job, conf_field_njob);
	ctx.name = name;
	if (strchr(name, '@') != NULL)
		conf_errors_add(errs,
		    "%s:1: invalid job name \"%s\": \"@\" is kept for "
		    "instance names (NAME@N is instance N of job NAME)",
		    path, name);
	else if (!conf_name_is_valid(name))
		conf_errors_add(
		    errs, "%s:1: invalid job name \"%s\"", path, name);
	else if ((parsed = conf_ctx_parse(&ctx)) != -1) {
		conf_ctx_apply(&ctx);
		/* Not when lines with syntax errors were left out. */
		if (parsed == 0)
			job_spec_check(&ctx, spec);
	}
	if (depends_line != NULL)
		*depends_line = conf_ctx_line(&ctx, "depends");
	conf_ctx_sort(&ctx);
	if (conf_ctx_failed(&ctx)) {
		job_spec_free(spec);
		spec = NULL;
	}
	conf_ctx_clear(&ctx);
	free(derived);
	return (spec);
}

/*
 * Load and validate the job file path for job name (NULL: the file name
 * without ".conf").  Returns an owned spec (free it with job_spec_free), or
 * NULL with every error found appended to errs (if not NULL) as
 * "FILE:LINE: option: message".  Dependencies are not checked against other
 * jobs here; conf_jobs_load does that.
 */
struct job_spec *
job_spec_load(const char *path, const char *name, struct conf_errors *errs)
{
	struct conf_errors discard;
	struct job_spec *spec;

	conf_errors_init(&discard);
	spec = job_spec_load_line(
	    path, name, errs != NULL ? errs : &discard, NULL);
	conf_errors_clear(&discard);
	return (spec);
}

/* Free a spec and everything it owns; NULL is a no-op. */
void
job_spec_free(struct job_spec *spec)
{
	if (spec == NULL)
		return;
	free(spec->name);
	free(spec->path);
	words_free(spec->argv);
	words_free(spec->depends);
	words_free(spec->cluster_nodes);
	free(spec->user);
	free(spec->group);
	free(spec->directory);
	words_free(spec->environment);
	free(spec->env_file);
	free(spec->pid_file);
	probe_spec_free(&spec->ready_probe);
	probe_spec_free(&spec->health);
	words_free(spec->watch);
	words_free(spec->pre_argv);
	words_free(spec->start_post_argv);
	words_free(spec->stop_post_argv);
	words_free(spec->failure_argv);
	free(spec->schedule);
	free(spec);
}

/* Are two strings, either of which may be NULL, the same? */
static int
job_spec_str_eq(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return (a == b);
	return (strcmp(a, b) == 0);
}

/* Are two NULL-terminated string arrays, or NULLs, the same? */
static int
job_spec_words_eq(char *const *a, char *const *b)
{
	if (a == NULL || b == NULL)
		return (a == b);
	for (; *a != NULL && *b != NULL; a++, b++) {
		if (strcmp(*a, *b) != 0)
			return (0);
	}
	return (*a == NULL && *b == NULL);
}

/* Do a and b run their process the same way (who, where, with what)? */
static int
job_spec_equal_process(const struct job_spec *a, const struct job_spec *b)
{
	size_t i;

	if (!job_spec_words_eq(a->argv, b->argv) ||
	    !job_spec_str_eq(a->user, b->user) || a->has_uid != b->has_uid ||
	    (a->has_uid && a->uid != b->uid) ||
	    !job_spec_str_eq(a->group, b->group) || a->has_gid != b->has_gid ||
	    (a->has_gid && a->gid != b->gid) ||
	    !job_spec_str_eq(a->directory, b->directory) ||
	    !job_spec_words_eq(a->environment, b->environment) ||
	    !job_spec_str_eq(a->env_file, b->env_file) ||
	    a->umask != b->umask || a->has_nice != b->has_nice ||
	    (a->has_nice && a->nice != b->nice))
		return (0);
	for (i = 0; i < CONF_LIMIT_COUNT; i++) {
		if (a->limits[i].set != b->limits[i].set ||
		    a->limits[i].resource != b->limits[i].resource)
			return (0);
		if (a->limits[i].set &&
		    (a->limits[i].rl.rlim_cur != b->limits[i].rl.rlim_cur ||
		        a->limits[i].rl.rlim_max != b->limits[i].rl.rlim_max))
			return (0);
	}
	if (memcmp(&a->cg, &b->cg, sizeof(a->cg)) != 0)
		return (0);
	return (a->input == b->input && a->out == b->out && a->err == b->err &&
	    a->log_max_size == b->log_max_size && a->log_keep == b->log_keep &&
	    a->log_timestamps == b->log_timestamps);
}

/* Do a and b supervise their process the same way? */
static int
job_spec_equal_policy(const struct job_spec *a, const struct job_spec *b)
{
	return (a->kind == b->kind && a->instances == b->instances &&
	    a->autostart == b->autostart && a->restart == b->restart &&
	    memcmp(a->success, b->success, sizeof a->success) == 0 &&
	    a->min_uptime == b->min_uptime &&
	    a->restart_delay == b->restart_delay &&
	    a->restart_delay_max == b->restart_delay_max &&
	    a->max_restarts == b->max_restarts && a->ready == b->ready &&
	    probe_spec_equal(&a->ready_probe, &b->ready_probe) &&
	    probe_spec_equal(&a->health, &b->health) &&
	    a->health_interval == b->health_interval &&
	    a->health_failures == b->health_failures &&
	    job_spec_words_eq(a->watch, b->watch) &&
	    job_spec_words_eq(a->pre_argv, b->pre_argv) &&
	    job_spec_words_eq(a->start_post_argv, b->start_post_argv) &&
	    job_spec_words_eq(a->stop_post_argv, b->stop_post_argv) &&
	    job_spec_words_eq(a->failure_argv, b->failure_argv) &&
	    a->hook_timeout == b->hook_timeout &&
	    a->watch_delay == b->watch_delay && a->forking == b->forking &&
	    job_spec_str_eq(a->pid_file, b->pid_file) &&
	    a->ready_timeout == b->ready_timeout &&
	    job_spec_words_eq(a->depends, b->depends) &&
	    a->stop_signal == b->stop_signal &&
	    a->stop_timeout == b->stop_timeout &&
	    a->kill_group == b->kill_group &&
	    a->pdeath_signal == b->pdeath_signal &&
	    a->watchdog == b->watchdog && a->cluster == b->cluster &&
	    a->cluster_handover_after == b->cluster_handover_after &&
	    job_spec_words_eq(a->cluster_nodes, b->cluster_nodes) &&
	    a->every == b->every && job_spec_str_eq(a->schedule, b->schedule) &&
	    a->catch_up == b->catch_up && a->random_delay == b->random_delay &&
	    a->timeout == b->timeout && a->concurrency == b->concurrency &&
	    a->cluster_concurrency == b->cluster_concurrency &&
	    a->max_attempts == b->max_attempts &&
	    a->retry_delay == b->retry_delay &&
	    a->retry_delay_max == b->retry_delay_max &&
	    a->drain_timeout == b->drain_timeout);
}

/*
 * Would specs a and b run their job identically?  Every field but the
 * file's path is compared (including the name and the resolved uid/gid).
 * Returns 1 or 0; two NULLs are equal.
 */
int
job_spec_equal(const struct job_spec *a, const struct job_spec *b)
{
	if (a == NULL || b == NULL)
		return (a == b);
	return (job_spec_str_eq(a->name, b->name) &&
	    job_spec_equal_process(a, b) && job_spec_equal_policy(a, b));
}

/* Are a and b equal but for `instances`, which differs? */
int
job_spec_equal_but_instances(const struct job_spec *a, const struct job_spec *b)
{
	struct job_spec c;

	if (a == NULL || b == NULL || a->instances == b->instances)
		return (0);
	c = *b; /* a shallow copy, only compared */
	c.instances = a->instances;
	return (job_spec_equal(a, &c));
}

/* Does exit code count as success for spec (success_exit_codes)? */
int
job_spec_is_success(const struct job_spec *spec, int code)
{
	if (code < 0 || code > 255)
		return (0);
	return ((spec->success[code / 8] & (1 << (code % 8))) != 0);
}
