/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The options of both file types as tables of fields (conf_field_job for
 * a job file, conf_field_main for vigil.conf), and the typed parser of
 * each field: numbers, booleans, words, durations, sizes, signals, paths,
 * exit codes, dependencies, schedules, directories, log levels, the
 * cluster section's strings (commands, probes and watched paths:
 * conf-run.c; user, group, umask, nice, environment and limits:
 * conf-proc.c).  A parser stores the value in the file's struct, or
 * returns -1 with a message that conf-ctx.c reports at the option's
 * line.
 */

#include "config.h"

#include <sys/types.h>

#include <confuse.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "conf-int.h"
#include "duration.h"
#include "listenaddr.h"
#include "output.h"
#include "signame.h"
#include "words.h"
#include "xmalloc.h"

#define CONF_INSTANCES_MAX 1000

/* The words of enum conf_kind, for option kind and its errors. */
const char *const conf_field_kind_words[] = {
	"service",
	"periodic",
	"queue",
	NULL,
};

/* The words of the other enum options, in the order of their enum. */
static const char *const conf_restart_words[] = {
	"always",
	"on-failure",
	"never",
	NULL,
};
static const char *const conf_type_words[] = { "simple", "forking", NULL };
const char *const conf_ready_words[] = {
	"exec",
	"notify",
	NULL,
};
static const char *const conf_stdin_words[] = {
	"null",
	"pipe",
	NULL,
};
static const char *const conf_output_words[] = {
	"file",
	"journal",
	"null",
	"inherit",
	NULL,
};
static const char *const conf_level_words[] = {
	"error",
	"warn",
	"info",
	"debug",
	NULL,
};

/* Enum fields are written through an int pointer. */
_Static_assert(sizeof(enum conf_kind) == sizeof(int), "enum size");
_Static_assert(sizeof(enum conf_restart) == sizeof(int), "enum size");
_Static_assert(sizeof(enum conf_ready) == sizeof(int), "enum size");
_Static_assert(sizeof(enum conf_output) == sizeof(int), "enum size");
_Static_assert(sizeof(enum conf_stdin) == sizeof(int), "enum size");

/* Is s one of the strings of the NULL-terminated array words? */
int
conf_words_has(char *const *words, const char *s)
{
	for (; *words != NULL; words++) {
		if (strcmp(*words, s) == 0)
			return (1);
	}
	return (0);
}

/* ------------------------------------------------------------------ */
/* Value parsers: each returns 0, or -1 with an owned *cause. */

/* Where field f's value lives in the target struct. */
void *
conf_ptr(struct conf_ctx *ctx, const struct conf_field *f)
{
	return ((char *)ctx->obj + f->off);
}

/* The single string value of a scalar option ("" if somehow none). */
const char *
conf_str(cfg_opt_t *opt)
{
	const char *s = cfg_opt_size(opt) > 0 ? cfg_opt_getnstr(opt, 0) : NULL;

	return (s == NULL ? "" : s);
}

/* The index of s in the NULL-terminated array words, or -1. */
int
conf_word_index(const char *const *words, const char *s)
{
	int i;

	for (i = 0; words[i] != NULL; i++) {
		if (strcmp(words[i], s) == 0)
			return (i);
	}
	return (-1);
}

/* "a, b or c" from the NULL-terminated array words.  Owned. */
static char *
conf_word_choices(const char *const *words)
{
	size_t i, len = 1;
	char *out;

	for (i = 0; words[i] != NULL; i++)
		len += strlen(words[i]) + 4;
	out = xcalloc(1, len);
	for (i = 0; words[i] != NULL; i++) {
		if (i > 0)
			strcat(out, words[i + 1] == NULL ? " or " : ", ");
		strcat(out, words[i]);
	}
	return (out);
}

/* Parse a decimal integer in [min, max]. */
int
conf_number(const char *s, long min, long max, long *out, char **cause)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (*s == '\0' || isspace((unsigned char)*s) || *end != '\0' ||
	    errno == ERANGE) {
		xasprintf(cause, "invalid number \"%s\"", s);
		return (-1);
	}
	if (v < min || v > max) {
		if (max == INT_MAX)
			xasprintf(cause, "%ld is less than %ld", v, min);
		else
			xasprintf(cause, "%ld is not between %ld and %ld", v,
			    min, max);
		return (-1);
	}
	*out = v;
	return (0);
}

static int
conf_parse_int(struct conf_ctx *ctx, const struct conf_field *f, cfg_opt_t *opt,
    char **cause)
{
	long v;

	if (conf_number(conf_str(opt), f->min, f->max, &v, cause) != 0)
		return (-1);
	*(int *)conf_ptr(ctx, f) = (int)v;
	return (0);
}

static int
conf_parse_bool(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	const char *s = conf_str(opt);
	int *p = conf_ptr(ctx, f);

	if (strcmp(s, "true") == 0 || strcmp(s, "yes") == 0 ||
	    strcmp(s, "on") == 0)
		*p = 1;
	else if (strcmp(s, "false") == 0 || strcmp(s, "no") == 0 ||
	    strcmp(s, "off") == 0)
		*p = 0;
	else {
		xasprintf(cause, "invalid boolean \"%s\" (true or false)", s);
		return (-1);
	}
	return (0);
}

static int
conf_parse_word(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	const char *s = conf_str(opt);
	char *choices;
	int i;

	if ((i = conf_word_index(f->words, s)) == -1) {
		choices = conf_word_choices(f->words);
		xasprintf(cause, "invalid value \"%s\" (%s)", s, choices);
		free(choices);
		return (-1);
	}
	*(int *)conf_ptr(ctx, f) = i;
	return (0);
}

static int
conf_parse_duration(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	return (duration_parse(conf_str(opt), conf_ptr(ctx, f), cause));
}

/* A duration above 0. */
static int
conf_parse_period(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	uint64_t v;

	if (duration_parse(conf_str(opt), &v, cause) == -1)
		return (-1);
	if (v == 0) {
		*cause = xstrdup("must be more than 0");
		return (-1);
	}
	*(uint64_t *)conf_ptr(ctx, f) = v;
	return (0);
}

/* A log file size limit: 0 (never rotate) or at least OUTPUT_MIN_SIZE. */
static int
conf_parse_log_size(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	uint64_t v;

	if (duration_size_parse(conf_str(opt), &v, cause) == -1)
		return (-1);
	if (v != 0 && v < OUTPUT_MIN_SIZE) {
		xasprintf(cause,
		    "%s is below the minimum of %dK (0: never rotate)",
		    conf_str(opt), OUTPUT_MIN_SIZE / 1024);
		return (-1);
	}
	*(uint64_t *)conf_ptr(ctx, f) = v;
	return (0);
}

/* A memory size for a cgroup limit ("512M"): at least one page. */
static int
conf_parse_mem(struct conf_ctx *ctx, const struct conf_field *f, cfg_opt_t *opt,
    char **cause)
{
	uint64_t v;

	if (duration_size_parse(conf_str(opt), &v, cause) == -1)
		return (-1);
	if (v < 4096) {
		xasprintf(cause, "%s is below one page (4K)", conf_str(opt));
		return (-1);
	}
	*(uint64_t *)conf_ptr(ctx, f) = v;
	return (0);
}

/* A share of one CPU, "50%" or "200%": 1 to 100000 per cent. */
static int
conf_parse_percent(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	const char *s = conf_str(opt);
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || strcmp(end, "%") != 0 || errno != 0 || v < 1 ||
	    v > 100000) {
		xasprintf(cause,
		    "invalid value \"%s\" (a share of one CPU: \"50%%\", "
		    "\"200%%\")",
		    s);
		return (-1);
	}
	*(int *)conf_ptr(ctx, f) = (int)v;
	return (0);
}

/*
 * start_limit = "N/INTERVAL": give up (FATAL) at the Nth failed start
 * within INTERVAL, as "5/10m"; N from 1 to 1000, INTERVAL above 0.
 */
static int
conf_parse_start_limit(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	struct job_spec *spec = ctx->obj;
	const char *s = conf_str(opt);
	char *end, *why = NULL;
	uint64_t iv;
	long n;

	(void)f;
	errno = 0;
	n = strtol(s, &end, 10);
	if (end == s || *end != '/' || errno != 0 || n < 1 || n > 1000 ||
	    duration_parse(end + 1, &iv, &why) == -1 || iv == 0) {
		xasprintf(cause,
		    "invalid value \"%s\" (failed starts/interval: \"5/10m\", "
		    "1 to 1000 starts)",
		    s);
		free(why);
		return (-1);
	}
	spec->start_limit_burst = (int)n;
	spec->start_limit_interval = iv;
	return (0);
}

static int
conf_parse_signal(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	int signo;

	if ((signo = signame_parse(conf_str(opt))) == -1) {
		xasprintf(cause, "invalid signal \"%s\"", conf_str(opt));
		return (-1);
	}
	*(int *)conf_ptr(ctx, f) = signo;
	return (0);
}

/* An absolute path. */
static int
conf_parse_path(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	const char *s = conf_str(opt);
	char **p = conf_ptr(ctx, f);

	if (s[0] != '/') {
		xasprintf(cause, "\"%s\" is not an absolute path", s);
		return (-1);
	}
	free(*p);
	*p = xstrdup(s);
	return (0);
}

/* ------------------------------------------------------------------ */
/* Parsers of job options. */

static int
conf_parse_codes(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	struct job_spec *spec = ctx->obj;
	uint8_t codes[sizeof spec->success];
	size_t i;
	long v;

	memset(codes, 0, sizeof codes);
	for (i = 0; i < cfg_opt_size(opt); i++) {
		if (conf_number(cfg_opt_getnstr(opt, i), 0, 255, &v, cause))
			return (-1);
		codes[v / 8] |= (uint8_t)(1 << (v % 8));
	}
	memcpy(spec->success, codes, sizeof spec->success);
	return (0);
}

static int
conf_parse_depends(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	struct job_spec *spec = ctx->obj;
	size_t i, j, n = cfg_opt_size(opt);
	char **deps;
	const char *s;

	deps = xcalloc(n + 1, sizeof *deps);
	for (i = j = 0; i < n; i++) {
		s = cfg_opt_getnstr(opt, i);
		if (!conf_name_is_valid(s))
			xasprintf(cause, "invalid job name \"%s\"", s);
		else if (ctx->name != NULL && strcmp(s, ctx->name) == 0)
			xasprintf(cause, "job depends on itself");
		else {
			/* Duplicates are harmless: keep the first. */
			if (!conf_words_has(deps, s))
				deps[j++] = xstrdup(s);
			continue;
		}
		words_free(deps);
		return (-1);
	}
	words_free(spec->depends);
	spec->depends = deps;
	spec->ndepends = j;
	return (0);
}

/* cluster_nodes: globs over node_name (fnmatch(3)), none empty. */
static int
conf_parse_cluster_nodes(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	struct job_spec *spec = ctx->obj;
	size_t i, n = cfg_opt_size(opt);
	char **globs;
	const char *s;

	(void)f;
	if (n == 0) {
		xasprintf(cause, "an empty list would let no node run it");
		return (-1);
	}
	globs = xcalloc(n + 1, sizeof *globs);
	for (i = 0; i < n; i++) {
		s = cfg_opt_getnstr(opt, i);
		if (*s == '\0' || strlen(s) > 128) {
			xasprintf(cause,
			    "pattern \"%s\" is empty or longer "
			    "than a node_name (128)",
			    s);
			words_free(globs);
			return (-1);
		}
		globs[i] = xstrdup(s);
	}
	words_free(spec->cluster_nodes);
	spec->cluster_nodes = globs;
	return (0);
}

/* A cron expression (lib/schedule.c), kept as text and parsed. */
static int
conf_parse_schedule(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	struct job_spec *spec = ctx->obj;
	const char *s = conf_str(opt);
	char *why = NULL;

	if (schedule_parse(s, &spec->cron, &why) == -1) {
		xasprintf(cause, "invalid schedule \"%s\": %s", s, why);
		free(why);
		return (-1);
	}
	free(spec->schedule);
	spec->schedule = xstrdup(s);
	return (0);
}

/* ------------------------------------------------------------------ */
/* Parsers of vigil.conf options. */

/* A directory; relative paths are relative to the config file's. */
static int
conf_parse_dir(struct conf_ctx *ctx, const struct conf_field *f, cfg_opt_t *opt,
    char **cause)
{
	const char *s = conf_str(opt);
	char **p = conf_ptr(ctx, f);

	if (*s == '\0') {
		*cause = xstrdup("empty path");
		return (-1);
	}
	free(*p);
	if (s[0] == '/' || ctx->base == NULL)
		*p = xstrdup(s);
	else
		xasprintf(p, "%s/%s", ctx->base, s);
	return (0);
}

/* http_listen: an address listen_addr_parse() takes. */
static int
conf_parse_listen(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	struct conf *c = ctx->obj;
	struct listen_addr a;
	const char *s = conf_str(opt);

	(void)f;
	if (listen_addr_parse(s, &a, cause) == -1)
		return (-1);
	free(c->http_listen);
	c->http_listen = xstrdup(s);
	return (0);
}

/* http_allowed_hosts: host names, as a Host header may give them. */
static int
conf_parse_hosts(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	struct conf *c = ctx->obj;
	size_t i, n = cfg_opt_size(opt);
	const char *s;
	char **hosts;

	(void)f;
	hosts = xcalloc(n + 1, sizeof *hosts);
	for (i = 0; i < n; i++) {
		s = cfg_opt_getnstr(opt, i);
		if (!listen_addr_host_valid(s)) {
			xasprintf(cause,
			    "invalid host name \"%s\" (a name such as "
			    "\"vigil.example.org\", without a port)",
			    s);
			words_free(hosts);
			return (-1);
		}
		hosts[i] = xstrdup(s);
	}
	words_free(c->http_allowed_hosts);
	c->http_allowed_hosts = hosts;
	return (0);
}

static int
conf_parse_level(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	struct conf *c = ctx->obj;
	const char *s = conf_str(opt);

	if (conf_word_index(conf_level_words, s) == -1) {
		xasprintf(cause, "invalid log level \"%s\"", s);
		return (-1);
	}
	free(c->log_level);
	c->log_level = xstrdup(s);
	return (0);
}

static int
conf_parse_socket_group(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	struct conf *c = ctx->obj;

	if (conf_gid(conf_str(opt), &c->socket_gid, cause) != 0)
		return (-1);
	c->has_socket_gid = 1;
	free(c->socket_group);
	c->socket_group = xstrdup(conf_str(opt));
	return (0);
}

/* A string, kept as it is (emptiness is for the checks after). */
static int
conf_parse_string(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	char **p = conf_ptr(ctx, f);

	free(*p);
	*p = xstrdup(conf_str(opt));
	return (0);
}

/* cluster's node_name: as a job name, 1 to 64 of [A-Za-z0-9_.-]. */
static int
conf_parse_node_name(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	const char *s = conf_str(opt);

	if (!conf_name_is_valid(s)) {
		xasprintf(cause,
		    "invalid node name \"%s\" (1 to %d characters of A-Z, "
		    "a-z, 0-9, \".\", \"_\" and \"-\")",
		    s, CONF_NAME_MAX);
		return (-1);
	}
	return (conf_parse_string(ctx, f, opt, cause));
}

/* ------------------------------------------------------------------ */
/* Option tables. */

#define JOB_OFF(field) offsetof(struct job_spec, field)
#define CONF_FIELD(...)                                                        \
	{                                                                      \
		__VA_ARGS__                                                    \
	}
#define JOB_FN(n, fn) CONF_FIELD(n, 0, fn, 0, 0, 0, NULL)
#define JOB_LIST(n, fn) CONF_FIELD(n, 1, fn, 0, 0, 0, NULL)
#define JOB_INT(n, field, lo, hi)                                              \
	CONF_FIELD(n, 0, conf_parse_int, JOB_OFF(field), lo, hi, NULL)
#define JOB_BOOL(n, field)                                                     \
	CONF_FIELD(n, 0, conf_parse_bool, JOB_OFF(field), 0, 0, NULL)
#define JOB_WORD(n, field, w)                                                  \
	CONF_FIELD(n, 0, conf_parse_word, JOB_OFF(field), 0, 0, w)
#define JOB_DUR(n, field)                                                      \
	CONF_FIELD(n, 0, conf_parse_duration, JOB_OFF(field), 0, 0, NULL)
#define JOB_SIG(n, field)                                                      \
	CONF_FIELD(n, 0, conf_parse_signal, JOB_OFF(field), 0, 0, NULL)
#define JOB_LIMIT(n, l) CONF_FIELD(n, 0, conf_parse_limit, 0, l, 0, NULL)

static const char *const conf_limits_words[] = { "best-effort", "require",
	NULL };

/* Every option of a job file. */
const struct conf_field conf_field_job[] = {
	JOB_LIST("command", conf_parse_command),
	JOB_LIST("exec_start_pre", conf_parse_hook_command),
	JOB_LIST("exec_start_post", conf_parse_hook_command),
	JOB_LIST("exec_stop_post", conf_parse_hook_command),
	JOB_LIST("on_failure", conf_parse_hook_command),
	JOB_DUR("hook_timeout", hook_timeout),
	JOB_DUR("alert_repeat", alert_repeat),
	JOB_FN("start_limit", conf_parse_start_limit),
	JOB_WORD("kind", kind, conf_field_kind_words),
	JOB_INT("instances", instances, 1, CONF_INSTANCES_MAX),
	JOB_BOOL("autostart", autostart),
	JOB_WORD("restart", restart, conf_restart_words),
	JOB_LIST("success_exit_codes", conf_parse_codes),
	JOB_DUR("min_uptime", min_uptime),
	JOB_DUR("restart_delay", restart_delay),
	JOB_DUR("restart_delay_max", restart_delay_max),
	JOB_INT("max_restarts", max_restarts, 0, INT_MAX),
	JOB_FN("ready", conf_parse_ready),
	JOB_FN("health", conf_parse_health),
	JOB_DUR("health_interval", health_interval),
	JOB_INT("health_failures", health_failures, 1, 1000),
	JOB_WORD("type", forking, conf_type_words),
	{ "pid_file", 0, conf_parse_path, JOB_OFF(pid_file), 0, 0, NULL },
	JOB_DUR("ready_timeout", ready_timeout),
	JOB_LIST("depends", conf_parse_depends),
	JOB_LIST("watch", conf_parse_watch),
	JOB_DUR("watch_delay", watch_delay),
	JOB_SIG("stop_signal", stop_signal),
	JOB_DUR("stop_timeout", stop_timeout),
	JOB_BOOL("kill_group", kill_group),
	JOB_SIG("parent_death_signal", pdeath_signal),
	JOB_FN("user", conf_parse_user),
	JOB_FN("group", conf_parse_group),
	{ "directory", 0, conf_parse_path, JOB_OFF(directory), 0, 0, NULL },
	JOB_LIST("environment", conf_parse_env),
	{ "env_file", 0, conf_parse_path, JOB_OFF(env_file), 0, 0, NULL },
	{ "umask", 0, conf_parse_mode, JOB_OFF(umask), 0, 0, NULL },
	JOB_FN("nice", conf_parse_nice),
	JOB_LIMIT("limit_nofile", CONF_LIMIT_NOFILE),
	JOB_LIMIT("limit_core", CONF_LIMIT_CORE),
	JOB_LIMIT("limit_nproc", CONF_LIMIT_NPROC),
	JOB_LIMIT("limit_as", CONF_LIMIT_AS),
	JOB_LIMIT("limit_data", CONF_LIMIT_DATA),
	JOB_LIMIT("limit_stack", CONF_LIMIT_STACK),
	JOB_LIMIT("limit_fsize", CONF_LIMIT_FSIZE),
	JOB_LIMIT("limit_cpu", CONF_LIMIT_CPU),
	JOB_LIMIT("limit_memlock", CONF_LIMIT_MEMLOCK),
	JOB_WORD("stdin", input, conf_stdin_words),
	JOB_WORD("stdout", out, conf_output_words),
	JOB_WORD("stderr", err, conf_output_words),
	{ "log_max_size", 0, conf_parse_log_size, JOB_OFF(log_max_size), 0, 0,
	    NULL },
	JOB_INT("log_keep", log_keep, 0, INT_MAX),
	JOB_BOOL("log_timestamps", log_timestamps),
	JOB_DUR("watchdog", watchdog),
	JOB_BOOL("cluster", cluster),
	JOB_INT("cluster_handover_after", cluster_handover_after, 1, 1000),
	JOB_LIST("cluster_nodes", conf_parse_cluster_nodes),
	JOB_DUR("every", every),
	JOB_FN("schedule", conf_parse_schedule),
	JOB_BOOL("catch_up", catch_up),
	JOB_DUR("random_delay", random_delay),
	JOB_DUR("timeout", timeout),
	JOB_INT("concurrency", concurrency, 1, 10000),
	JOB_INT("cluster_concurrency", cluster_concurrency, 0, 1000000),
	JOB_INT("max_attempts", max_attempts, 1, INT_MAX),
	JOB_DUR("retry_delay", retry_delay),
	JOB_DUR("retry_delay_max", retry_delay_max),
	JOB_DUR("drain_timeout", drain_timeout),
	{ "memory_max", 0, conf_parse_mem, JOB_OFF(cg.memory_max), 0, 0, NULL },
	{ "memory_high", 0, conf_parse_mem, JOB_OFF(cg.memory_high), 0, 0,
	    NULL },
	JOB_INT("tasks_max", cg.tasks_max, 1, INT_MAX),
	JOB_INT("cpu_weight", cg.cpu_weight, 1, 10000),
	{ "cpu_max", 0, conf_parse_percent, JOB_OFF(cg.cpu_max), 0, 0, NULL },
	JOB_INT("io_weight", cg.io_weight, 1, 10000),
	JOB_WORD("limits", limits_policy, conf_limits_words),
};

#define CONF_OFF(field) offsetof(struct conf, field)

static const char *const conf_cgroup_words[] = { "auto", "off", NULL };

/* Every option of vigil.conf. */
const struct conf_field conf_field_main[] = {
	{ "jobs_dir", 0, conf_parse_dir, CONF_OFF(jobs_dir), 0, 0, NULL },
	{ "runtime_dir", 0, conf_parse_dir, CONF_OFF(runtime_dir), 0, 0, NULL },
	{ "state_dir", 0, conf_parse_dir, CONF_OFF(state_dir), 0, 0, NULL },
	{ "log_dir", 0, conf_parse_dir, CONF_OFF(log_dir), 0, 0, NULL },
	{ "log_level", 0, conf_parse_level, 0, 0, 0, NULL },
	{ "socket_group", 0, conf_parse_socket_group, 0, 0, 0, NULL },
	{ "socket_mode", 0, conf_parse_mode, CONF_OFF(socket_mode), 0, 0,
	    NULL },
	{ "history_keep", 0, conf_parse_int, CONF_OFF(history_keep), 1, INT_MAX,
	    NULL },
	{ "cgroup", 0, conf_parse_word, CONF_OFF(cgroup), 0, 0,
	    conf_cgroup_words },
	{ "limits", 0, conf_parse_word, CONF_OFF(limits_policy), 0, 0,
	    conf_limits_words },
	{ "on_event", 1, conf_parse_event_command, 0, 0, 0, NULL },
	{ "hook_timeout", 0, conf_parse_duration, CONF_OFF(hook_timeout), 0, 0,
	    NULL },
	{ "http_listen", 0, conf_parse_listen, 0, 0, 0, NULL },
	{ "http_token_file", 0, conf_parse_dir, CONF_OFF(http_token_file), 0, 0,
	    NULL },
	{ "http_allowed_hosts", 1, conf_parse_hosts, 0, 0, 0, NULL },
};

#define CLUSTER_OFF(field) offsetof(struct conf_cluster, field)
#define CLUSTER_DUR(n, field)                                                  \
	CONF_FIELD(n, 0, conf_parse_period, CLUSTER_OFF(field), 0, 0, NULL)

static const char *const conf_db_loss_words[] = { "kill", "keep", NULL };

/* Every option of vigil.conf's section cluster { ... }. */
const struct conf_field conf_field_cluster[] = {
	{ "conninfo", 0, conf_parse_string, CLUSTER_OFF(conninfo), 0, 0, NULL },
	{ "work_conninfo", 0, conf_parse_string, CLUSTER_OFF(work_conninfo), 0,
	    0, NULL },
	{ "node_name", 0, conf_parse_node_name, CLUSTER_OFF(node_name), 0, 0,
	    NULL },
	CLUSTER_DUR("lease_ttl", lease_ttl),
	CLUSTER_DUR("renew_interval", renew_interval),
	CLUSTER_DUR("query_timeout", query_timeout),
	CLUSTER_DUR("fence_margin", fence_margin),
	CLUSTER_DUR("connect_timeout", connect_timeout),
	CLUSTER_DUR("forget_after", forget_after),
	{ "on_db_loss", 0, conf_parse_word, CLUSTER_OFF(on_db_loss), 0, 0,
	    conf_db_loss_words },
};

/* The number of entries of each table. */
const size_t conf_field_njob = sizeof conf_field_job / sizeof conf_field_job[0];
const size_t conf_field_nmain =
    sizeof conf_field_main / sizeof conf_field_main[0];
const size_t conf_field_ncluster =
    sizeof conf_field_cluster / sizeof conf_field_cluster[0];

_Static_assert(
    sizeof conf_field_job / sizeof conf_field_job[0] <= CONF_MAX_FIELDS,
    "too many job options");
