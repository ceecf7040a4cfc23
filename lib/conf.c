/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Configuration files: vigil.conf and one job per file in jobs.d.
 *
 * libconfuse does the syntax.  Every option is declared as a string (or a
 * list of strings) without a default, so that libconfuse accepts "3", 3,
 * "yes" and true alike and never stops at the first bad value; the typed
 * parsing, the defaults and the cross checks are ours, driven by one table
 * of fields per file type.  That way every value error is reported, each
 * as "FILE:LINE: option: message".
 *
 * libconfuse 3.3 does not remember where an option was set, so a parse
 * callback and a validation callback on every option record the line of its
 * last assignment, and whether a list was written in braces (command =
 * "a b" is split into words, command = { "a b" } is one word).  The
 * callbacks find their context through conf_current, set only while
 * cfg_parse_buf runs: libconfuse's lexer is not reentrant anyway.  The text
 * is rewritten first (conf_preprocess) to work around libconfuse's comment
 * handling and to turn off its "${VAR}" substitution.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <confuse.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "duration.h"
#include "log.h"
#include "output.h"
#include "signame.h"
#include "words.h"
#include "xmalloc.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif
#ifndef LOCALSTATEDIR
#define LOCALSTATEDIR "/var"
#endif
#ifndef RUNSTATEDIR
#define RUNSTATEDIR "/run"
#endif

#define CONF_MAX_FIELDS 64
#define CONF_INSTANCES_MAX 1000
#define CONF_FILE_MAX (1024 * 1024)

struct conf_ctx;
struct conf_field;

typedef int (*conf_parse_cb)(
    struct conf_ctx *, const struct conf_field *, cfg_opt_t *, char **);

/* One option: its name, how to parse it and where the value goes. */
struct conf_field {
	const char *name;
	int list;
	conf_parse_cb parse;
	size_t off; /* offset of the value in the target struct */
	long min;   /* bounds for numbers; the limit for limit_* */
	long max;
	const char *const *words; /* NULL-terminated choices for enums */
};

/* What the libconfuse callbacks learnt about one option. */
struct conf_track {
	int line;    /* line of the last assignment, 0 if unknown */
	int pending; /* a value was parsed, its validation is due */
	int braced;  /* the last assignment was a { list } */
};

/* One file being loaded. */
struct conf_ctx {
	const char *path;
	const char *name; /* the job's name, or NULL */
	const char *base; /* directory for relative paths, or NULL */
	struct conf_errors *errs;
	size_t nerrs; /* errs->n when the file was opened */
	cfg_t *cfg;
	void *obj; /* struct job_spec or struct conf */
	const struct conf_field *fields;
	size_t nfields;
	struct conf_track track[CONF_MAX_FIELDS];
};

static struct conf_ctx *conf_current;

static const char *const conf_kind_words[] = {
	"service",
	"periodic",
	"queue",
	NULL,
};
static const char *const conf_restart_words[] = {
	"always",
	"on-failure",
	"never",
	NULL,
};
static const char *const conf_ready_words[] = {
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

/* Enum fields are written through an int pointer. */
_Static_assert(sizeof(enum conf_kind) == sizeof(int), "enum size");
_Static_assert(sizeof(enum conf_restart) == sizeof(int), "enum size");
_Static_assert(sizeof(enum conf_ready) == sizeof(int), "enum size");
_Static_assert(sizeof(enum conf_output) == sizeof(int), "enum size");
_Static_assert(sizeof(enum conf_stdin) == sizeof(int), "enum size");

/* ------------------------------------------------------------------ */
/* Error lists. */

/* Initialise an empty error list. */
void
conf_errors_init(struct conf_errors *errs)
{
	errs->msgs = NULL;
	errs->n = 0;
}

/* Append a formatted message (conventionally "FILE:LINE: ...") to errs. */
void
conf_errors_add(struct conf_errors *errs, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) == -1)
		fatalx("%s: out of memory", __func__);
	va_end(ap);
	errs->msgs = xreallocarray(errs->msgs, errs->n + 1, sizeof *errs->msgs);
	errs->msgs[errs->n++] = msg;
}

/* Free every message of errs and leave it empty; NULL is a no-op. */
void
conf_errors_clear(struct conf_errors *errs)
{
	size_t i;

	if (errs == NULL)
		return;
	for (i = 0; i < errs->n; i++)
		free(errs->msgs[i]);
	free(errs->msgs);
	conf_errors_init(errs);
}

/* ------------------------------------------------------------------ */
/* Names. */

#define CONF_NAME_CHARS                                                        \
	"abcdefghijklmnopqrstuvwxyz"                                           \
	"ABCDEFGHIJKLMNOPQRSTUVWXYZ"                                           \
	"0123456789_.-"

/* Is name 1 to CONF_NAME_MAX characters of chars? */
static int
conf_name_is_of(const char *name, const char *chars)
{
	size_t len;

	if (name == NULL)
		return (0);
	len = strspn(name, chars);
	return (len > 0 && len <= CONF_NAME_MAX && name[len] == '\0');
}

/*
 * Is name a valid job name: 1 to CONF_NAME_MAX characters from
 * [A-Za-z0-9_.-]?  "@" is not one of them: NAME@N names instance N of job
 * NAME (its lock file, its status line), and a job named "x@1" would be
 * taken for instance 1 of job x.
 */
int
conf_name_is_valid(const char *name)
{
	return (conf_name_is_of(name, CONF_NAME_CHARS));
}

/*
 * Is filename (a name in jobs.d, without directory) a job file: NAME.conf,
 * not hidden, with NAME a valid job name?  Editor and package manager
 * leftovers ("web.conf~", "#web.conf#", "web.conf.swp", "web.conf.bak",
 * "web.conf.dpkg-old", "web.conf.rpmnew") do not end in ".conf" or have
 * characters a name cannot have, so they are not job files.
 */
int
conf_file_is_job(const char *filename)
{
	char stem[CONF_NAME_MAX + 1];
	size_t len;

	if (filename == NULL || filename[0] == '.')
		return (0);
	len = strlen(filename);
	if (len <= 5 || len - 5 > CONF_NAME_MAX ||
	    strcmp(filename + len - 5, ".conf") != 0)
		return (0);
	memcpy(stem, filename, len - 5);
	stem[len - 5] = '\0';
	/* "x@1.conf" is a job file with an invalid name: it is reported. */
	return (conf_name_is_of(stem, CONF_NAME_CHARS "@"));
}

/* Is s a valid environment variable name: [A-Za-z_][A-Za-z0-9_]*? */
static int
conf_env_name_is_valid(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || isdigit((unsigned char)s[0]))
		return (0);
	for (i = 0; i < len; i++) {
		if (s[i] != '_' && !isalnum((unsigned char)s[i]))
			return (0);
	}
	return (1);
}

/* Is s one of the strings of the NULL-terminated array words? */
static int
conf_words_has(char *const *words, const char *s)
{
	for (; *words != NULL; words++) {
		if (strcmp(*words, s) == 0)
			return (1);
	}
	return (0);
}

/* ------------------------------------------------------------------ */
/* Context, libconfuse callbacks and error reporting. */

/* The tracking slot of opt in the file being parsed, or NULL. */
static struct conf_track *
conf_track_of(cfg_t *cfg, cfg_opt_t *opt)
{
	struct conf_ctx *ctx = conf_current;
	size_t i;

	if (ctx == NULL || ctx->cfg != cfg || opt < cfg->opts)
		return (NULL);
	i = (size_t)(opt - cfg->opts);
	if (i >= ctx->nfields)
		return (NULL);
	return (&ctx->track[i]);
}

/* libconfuse parse callback: keep the string, note a value was read. */
static int
conf_cb_parse(cfg_t *cfg, cfg_opt_t *opt, const char *value, void *result)
{
	struct conf_track *t;

	*(const char **)result = value;
	if ((t = conf_track_of(cfg, opt)) != NULL)
		t->pending = 1;
	return (0);
}

/*
 * libconfuse validation callback, called after each value and again after
 * the closing brace of a list (with no value parsed in between).  Records
 * the line of each assignment and whether it used braces.
 */
static int
conf_cb_validate(cfg_t *cfg, cfg_opt_t *opt)
{
	struct conf_track *t;

	if ((t = conf_track_of(cfg, opt)) == NULL)
		return (0);
	if (!t->pending) {
		t->braced = 1;
		return (0);
	}
	t->pending = 0;
	if ((opt->flags & CFGF_LIST) == 0 || cfg_opt_size(opt) == 1) {
		t->line = cfg->line;
		t->braced = 0;
	}
	return (0);
}

/* libconfuse error callback: add "FILE:LINE: message" to the errors. */
static void __attribute__((format(printf, 2, 0)))
conf_cb_error(cfg_t *cfg, const char *fmt, va_list ap)
{
	struct conf_ctx *ctx = conf_current;
	char *msg;

	if (ctx == NULL)
		return;
	if (vasprintf(&msg, fmt, ap) == -1)
		fatalx("%s: out of memory", __func__);
	if (cfg != NULL && cfg->line > 0)
		conf_errors_add(
		    ctx->errs, "%s:%d: %s", ctx->path, cfg->line, msg);
	else
		conf_errors_add(ctx->errs, "%s: %s", ctx->path, msg);
	free(msg);
}

/* The index of option name in the file's fields; ctx->nfields if none. */
static size_t
conf_ctx_index(struct conf_ctx *ctx, const char *name)
{
	size_t i;

	for (i = 0; i < ctx->nfields; i++) {
		if (strcmp(ctx->fields[i].name, name) == 0)
			break;
	}
	return (i);
}

/* Line where option name was set, 0 if unknown. */
static int
conf_ctx_line(struct conf_ctx *ctx, const char *name)
{
	size_t i = conf_ctx_index(ctx, name);

	return (i < ctx->nfields ? ctx->track[i].line : 0);
}

/* Was option name set in the file? */
static int
conf_ctx_given(struct conf_ctx *ctx, const char *name)
{
	size_t i = conf_ctx_index(ctx, name);
	cfg_opt_t *opt;

	if (i == ctx->nfields || (opt = cfg_getnopt(ctx->cfg, i)) == NULL)
		return (0);
	return (opt->nvalues > 0 || (opt->flags & CFGF_MODIFIED) != 0);
}

/* Add "FILE:LINE: option: message" (or "FILE: option: ...") to errs. */
static void __attribute__((format(printf, 3, 4)))
conf_ctx_error(struct conf_ctx *ctx, const char *option, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	int line;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) == -1)
		fatalx("%s: out of memory", __func__);
	va_end(ap);
	if ((line = conf_ctx_line(ctx, option)) > 0)
		conf_errors_add(
		    ctx->errs, "%s:%d: %s: %s", ctx->path, line, option, msg);
	else
		conf_errors_add(
		    ctx->errs, "%s: %s: %s", ctx->path, option, msg);
	free(msg);
}

/* Has the file of ctx had errors so far? */
static int
conf_ctx_failed(struct conf_ctx *ctx)
{
	return (ctx->errs->n > ctx->nerrs);
}

/* The line of a "PATH:LINE: ..." message of the file at path, else 0. */
static long
conf_msg_line(const char *msg, const char *path)
{
	size_t len = strlen(path);
	char *end;
	long line;

	if (strncmp(msg, path, len) != 0 || msg[len] != ':' ||
	    !isdigit((unsigned char)msg[len + 1]))
		return (0);
	line = strtol(msg + len + 1, &end, 10);
	return (*end == ':' ? line : 0);
}

/* Sort the errors of the file of ctx by line, keeping their order else. */
static void
conf_ctx_sort(struct conf_ctx *ctx)
{
	char **msgs = ctx->errs->msgs, *m;
	size_t i, j;
	long line;

	for (i = ctx->nerrs + 1; i < ctx->errs->n; i++) {
		m = msgs[i];
		line = conf_msg_line(m, ctx->path);
		for (j = i; j > ctx->nerrs &&
		     conf_msg_line(msgs[j - 1], ctx->path) > line;
		     j--)
			msgs[j] = msgs[j - 1];
		msgs[j] = m;
	}
}

/* ------------------------------------------------------------------ */
/* Value parsers: each returns 0, or -1 with an owned *cause. */

/* Where field f's value lives in the target struct. */
static void *
conf_ptr(struct conf_ctx *ctx, const struct conf_field *f)
{
	return ((char *)ctx->obj + f->off);
}

/* The single string value of a scalar option ("" if somehow none). */
static const char *
conf_str(cfg_opt_t *opt)
{
	const char *s = cfg_opt_size(opt) > 0 ? cfg_opt_getnstr(opt, 0) : NULL;

	return (s == NULL ? "" : s);
}

/* The index of s in the NULL-terminated array words, or -1. */
static int
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
static int
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

/* Parse an octal mode of one to four digits, at most 0777. */
static int
conf_octal(const char *s, int *out)
{
	size_t len = strspn(s, "01234567");
	long v;

	if (len == 0 || len > 4 || s[len] != '\0')
		return (-1);
	if ((v = strtol(s, NULL, 8)) > 0777)
		return (-1);
	*out = (int)v;
	return (0);
}

/* Parse a uid or gid written as a number. */
static int
conf_id(const char *s, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!isdigit((unsigned char)*s))
		return (-1);
	errno = 0;
	v = strtoul(s, &end, 10);
	if (*end != '\0' || errno == ERANGE || v >= UINT32_MAX)
		return (-1);
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
conf_parse_command(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	struct job_spec *spec = ctx->obj;
	size_t i, n = cfg_opt_size(opt);
	char **argv;

	if (n == 1 && !ctx->track[f - ctx->fields].braced) {
		if ((argv = words_split(conf_str(opt), &n, cause)) == NULL)
			return (-1);
	} else {
		argv = xcalloc(n + 1, sizeof *argv);
		for (i = 0; i < n; i++)
			argv[i] = xstrdup(cfg_opt_getnstr(opt, i));
	}
	if (n == 0 || argv[0][0] == '\0') {
		words_free(argv);
		*cause =
		    xstrdup(n == 0 ? "empty command" : "empty program name");
		return (-1);
	}
	words_free(spec->argv);
	spec->argv = argv;
	spec->argc = n;
	return (0);
}

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

static int
conf_parse_env(struct conf_ctx *ctx, const struct conf_field *f, cfg_opt_t *opt,
    char **cause)
{
	struct job_spec *spec = ctx->obj;
	size_t i, n = cfg_opt_size(opt);
	const char *s, *eq;
	char **env;

	env = xcalloc(n + 1, sizeof *env);
	for (i = 0; i < n; i++) {
		s = cfg_opt_getnstr(opt, i);
		if ((eq = strchr(s, '=')) == NULL ||
		    !conf_env_name_is_valid(s, (size_t)(eq - s))) {
			xasprintf(cause, "invalid \"KEY=value\" \"%s\"", s);
			words_free(env);
			return (-1);
		}
		env[i] = xstrdup(s);
	}
	words_free(spec->environment);
	spec->environment = env;
	spec->nenvironment = n;
	return (0);
}

static int
conf_parse_user(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	struct job_spec *spec = ctx->obj;
	const char *s = conf_str(opt);
	struct passwd *pw;
	unsigned long id;

	if (*s != '\0' && (pw = getpwnam(s)) != NULL)
		spec->uid = pw->pw_uid;
	else if (conf_id(s, &id) == 0)
		spec->uid = (uid_t)id;
	else {
		xasprintf(cause, "unknown user \"%s\"", s);
		return (-1);
	}
	spec->has_uid = 1;
	free(spec->user);
	spec->user = xstrdup(s);
	return (0);
}

/* Resolve a group name or number. */
static int
conf_gid(const char *s, gid_t *gid, char **cause)
{
	struct group *gr;
	unsigned long id;

	if (*s != '\0' && (gr = getgrnam(s)) != NULL)
		*gid = gr->gr_gid;
	else if (conf_id(s, &id) == 0)
		*gid = (gid_t)id;
	else {
		xasprintf(cause, "unknown group \"%s\"", s);
		return (-1);
	}
	return (0);
}

static int
conf_parse_group(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	struct job_spec *spec = ctx->obj;

	if (conf_gid(conf_str(opt), &spec->gid, cause) != 0)
		return (-1);
	spec->has_gid = 1;
	free(spec->group);
	spec->group = xstrdup(conf_str(opt));
	return (0);
}

/* An octal mode such as "022" (umask, socket_mode). */
static int
conf_parse_mode(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	if (conf_octal(conf_str(opt), conf_ptr(ctx, f)) != 0) {
		xasprintf(cause, "invalid octal mode \"%s\"", conf_str(opt));
		return (-1);
	}
	return (0);
}

static int
conf_parse_nice(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	struct job_spec *spec = ctx->obj;
	long v;

	if (conf_number(conf_str(opt), -20, 19, &v, cause) != 0)
		return (-1);
	spec->nice = (int)v;
	spec->has_nice = 1;
	return (0);
}

/*
 * One side of a limit: "infinity", "unlimited", or a number, with a K, M or
 * G suffix unless cpu (plain seconds).
 */
static int
conf_limit_value(const char *s, int cpu, rlim_t *out)
{
	uint64_t v;
	long n;
	char *cause = NULL;

	if (strcmp(s, "infinity") == 0 || strcmp(s, "unlimited") == 0) {
		*out = RLIM_INFINITY;
		return (0);
	}
	if (cpu) {
		if (conf_number(s, 0, LONG_MAX, &n, &cause) != 0) {
			free(cause);
			return (-1);
		}
		v = (uint64_t)n;
	} else if (duration_size_parse(s, &v, NULL) != 0)
		return (-1);
	if (v >= (uint64_t)RLIM_INFINITY)
		return (-1);
	*out = (rlim_t)v;
	return (0);
}

/* A limit: "N" (soft and hard) or "SOFT:HARD". */
static int
conf_parse_limit(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	struct job_spec *spec = ctx->obj;
	struct conf_rlimit *l = &spec->limits[f->min];
	const char *s = conf_str(opt), *colon;
	char *soft;
	int cpu = (f->min == CONF_LIMIT_CPU), rc;
	struct rlimit rl = { 0, 0 };

	if ((colon = strchr(s, ':')) == NULL) {
		rc = conf_limit_value(s, cpu, &rl.rlim_cur);
		rl.rlim_max = rl.rlim_cur;
	} else {
		soft = xstrndup(s, (size_t)(colon - s));
		rc = conf_limit_value(soft, cpu, &rl.rlim_cur);
		free(soft);
		if (rc == 0)
			rc = conf_limit_value(colon + 1, cpu, &rl.rlim_max);
	}
	if (rc != 0) {
		xasprintf(cause, "invalid limit \"%s\"", s);
		return (-1);
	}
	if (rl.rlim_max != RLIM_INFINITY &&
	    (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > rl.rlim_max)) {
		xasprintf(cause, "soft limit above hard limit in \"%s\"", s);
		return (-1);
	}
	l->set = 1;
	l->rl = rl;
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

/* Every option of a job file. */
static const struct conf_field conf_job_fields[] = {
	JOB_LIST("command", conf_parse_command),
	JOB_WORD("kind", kind, conf_kind_words),
	JOB_INT("instances", instances, 1, CONF_INSTANCES_MAX),
	JOB_BOOL("autostart", autostart),
	JOB_WORD("restart", restart, conf_restart_words),
	JOB_LIST("success_exit_codes", conf_parse_codes),
	JOB_DUR("min_uptime", min_uptime),
	JOB_DUR("restart_delay", restart_delay),
	JOB_DUR("restart_delay_max", restart_delay_max),
	JOB_INT("max_restarts", max_restarts, 0, INT_MAX),
	JOB_WORD("ready", ready, conf_ready_words),
	JOB_DUR("ready_timeout", ready_timeout),
	JOB_LIST("depends", conf_parse_depends),
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
	JOB_DUR("every", every),
	JOB_FN("schedule", conf_parse_schedule),
	JOB_BOOL("catch_up", catch_up),
	JOB_DUR("random_delay", random_delay),
	JOB_DUR("timeout", timeout),
	JOB_INT("concurrency", concurrency, 1, 10000),
	JOB_INT("max_attempts", max_attempts, 1, INT_MAX),
	JOB_DUR("retry_delay", retry_delay),
	JOB_DUR("retry_delay_max", retry_delay_max),
	JOB_DUR("drain_timeout", drain_timeout),
};

#define CONF_OFF(field) offsetof(struct conf, field)

/* Every option of vigil.conf. */
static const struct conf_field conf_main_fields[] = {
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
};

_Static_assert(
    sizeof conf_job_fields / sizeof conf_job_fields[0] <= CONF_MAX_FIELDS,
    "too many job options");

/* ------------------------------------------------------------------ */
/* Reading one file. */

/* Prepare ctx to read path into obj following fields. */
static void
conf_ctx_init(struct conf_ctx *ctx, const char *path, struct conf_errors *errs,
    void *obj, const struct conf_field *fields, size_t nfields)
{
	memset(ctx, 0, sizeof *ctx);
	ctx->path = path;
	ctx->errs = errs;
	ctx->nerrs = errs->n;
	ctx->obj = obj;
	ctx->fields = fields;
	ctx->nfields = nfields;
}

/* Build libconfuse's option table: strings without defaults. */
static cfg_opt_t *
conf_ctx_opts(struct conf_ctx *ctx)
{
	cfg_opt_t str = CFG_STR("", NULL, CFGF_NODEFAULT);
	cfg_opt_t list = CFG_STR_LIST("", NULL, CFGF_NODEFAULT);
	cfg_opt_t end = CFG_END();
	cfg_opt_t *opts;
	size_t i;

	opts = xcalloc(ctx->nfields + 1, sizeof *opts);
	for (i = 0; i < ctx->nfields; i++) {
		opts[i] = ctx->fields[i].list ? list : str;
		opts[i].name = ctx->fields[i].name;
		opts[i].parsecb = conf_cb_parse;
		opts[i].validcb = conf_cb_validate;
	}
	opts[i] = end;
	return (opts);
}

/*
 * Read the whole of ctx->path, a regular text file of at most
 * CONF_FILE_MAX bytes, as an owned string; NULL with an error added if
 * that fails.
 */
static char *
conf_ctx_read(struct conf_ctx *ctx)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	ssize_t n;
	int fd;

	if ((fd = open(ctx->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) == -1)
		goto fail;
	if (fstat(fd, &st) == -1)
		goto fail;
	if (!S_ISREG(st.st_mode)) {
		errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		goto fail;
	}
	buf = xmalloc(CONF_FILE_MAX + 1);
	while (len < CONF_FILE_MAX + 1) {
		if ((n = read(fd, buf + len, CONF_FILE_MAX + 1 - len)) == -1) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (len > CONF_FILE_MAX || memchr(buf, '\0', len) != NULL) {
		conf_errors_add(
		    ctx->errs, "%s: not a configuration file", ctx->path);
		free(buf);
		return (NULL);
	}
	buf[len] = '\0';
	return (buf);

fail:
	conf_errors_add(ctx->errs, "%s: %s", ctx->path, strerror(errno));
	if (fd != -1)
		close(fd);
	free(buf);
	return (NULL);
}

/* Rewriting a file's text for libconfuse: input and output positions. */
struct conf_pp {
	const char *s;
	char *o;
	const char *unclosed; /* the quote of a string the file does not end */
};

/* Copy a quoted string, keeping "${" in double quotes literal. */
static void
conf_pp_string(struct conf_pp *pp)
{
	char quote = *pp->s;

	pp->unclosed = pp->s;
	*pp->o++ = *pp->s++;
	while (*pp->s != '\0' && *pp->s != quote) {
		if (pp->s[0] == '\\' && pp->s[1] != '\0') {
			*pp->o++ = *pp->s++;
			*pp->o++ = *pp->s++;
			continue;
		}
		if (quote == '"' && pp->s[0] == '$' && pp->s[1] == '{')
			*pp->o++ = '\\';
		*pp->o++ = *pp->s++;
	}
	if (*pp->s != '\0') {
		*pp->o++ = *pp->s++;
		pp->unclosed = NULL;
	}
}

/* Copy an unquoted "${...}" as a single-quoted string, so it stays. */
static void
conf_pp_variable(struct conf_pp *pp)
{
	const char *end = strchr(pp->s, '}');

	*pp->o++ = '\'';
	for (; pp->s <= end; pp->s++) {
		if (*pp->s == '\\' || *pp->s == '\'')
			*pp->o++ = '\\';
		*pp->o++ = *pp->s;
	}
	*pp->o++ = '\'';
}

/* Skip a comment, keeping its newlines; -1 if a block is not closed. */
static int
conf_pp_comment(struct conf_pp *pp)
{
	if (pp->s[0] != '/' || pp->s[1] != '*') {
		pp->s += strcspn(pp->s, "\n");
		return (0);
	}
	for (pp->s += 2; pp->s[0] != '*' || pp->s[1] != '/'; pp->s++) {
		if (*pp->s == '\0')
			return (-1);
		if (*pp->s == '\n')
			*pp->o++ = '\n';
	}
	pp->s += 2;
	return (0);
}

/*
 * Rewrite a file's text for libconfuse's lexer, keeping every newline so
 * that line numbers hold.  Comments ("#" outside quotes; "//" and block
 * comments where a word can start) are dropped: libconfuse 3.3 counts a
 * "#" or "//" comment as three lines and rejects comments inside a
 * { list }.  "${VAR}" is made literal: libconfuse would substitute the
 * environment of vigild, and values are never expanded.  Returns an owned
 * string, or NULL if a block comment is not closed.  *unclosed is set to
 * the quote that starts a string the text does not end, else NULL.
 */
static char *
conf_preprocess(const char *text, const char **unclosed)
{
	static const char stops[] = " #\"'\t\n\r={}()+,*";
	struct conf_pp pp;
	char *out;
	int inword = 0;

	/* At worst "${}" becomes "'${}'" and each ' or \\ doubles. */
	out = xmalloc(3 * strlen(text) + 1);
	pp.s = text;
	pp.o = out;
	pp.unclosed = NULL;
	while (*pp.s != '\0') {
		if (*pp.s == '"' || *pp.s == '\'') {
			conf_pp_string(&pp);
			inword = 0;
		} else if (*pp.s == '#' ||
		    (!inword && pp.s[0] == '/' &&
		        (pp.s[1] == '/' || pp.s[1] == '*'))) {
			if (conf_pp_comment(&pp) != 0) {
				free(out);
				return (NULL);
			}
			inword = 0;
		} else if (!inword && pp.s[0] == '$' && pp.s[1] == '{' &&
		    strchr(pp.s, '}') != NULL)
			conf_pp_variable(&pp);
		else {
			inword = strchr(stops, *pp.s) == NULL;
			*pp.o++ = *pp.s++;
		}
	}
	*pp.o = '\0';
	*unclosed = pp.unclosed;
	return (out);
}

/* The line (from 1) of p in text. */
static int
conf_text_line(const char *text, const char *p)
{
	int line = 1;

	for (; text < p; text++) {
		if (*text == '\n')
			line++;
	}
	return (line);
}

/* Parse the file with libconfuse.  Returns 0, or -1 with errors added. */
static int
conf_ctx_parse(struct conf_ctx *ctx)
{
	const char *unclosed;
	cfg_opt_t *opts;
	char *text, *buf;
	int rc;

	if ((text = conf_ctx_read(ctx)) == NULL)
		return (-1);
	buf = conf_preprocess(text, &unclosed);
	/* Where the string starts, not the end of the file libconfuse sees. */
	if (buf != NULL && unclosed != NULL) {
		conf_errors_add(ctx->errs,
		    "%s:%d: unterminated string (its closing %c is missing)",
		    ctx->path, conf_text_line(text, unclosed), *unclosed);
		free(buf);
		buf = NULL;
	} else if (buf == NULL)
		conf_errors_add(
		    ctx->errs, "%s: unterminated comment", ctx->path);
	free(text);
	if (buf == NULL)
		return (-1);
	opts = conf_ctx_opts(ctx);
	ctx->cfg = cfg_init(opts, CFGF_NONE);
	free(opts);
	if (ctx->cfg == NULL)
		fatalx("%s: cfg_init failed", __func__);
	cfg_set_error_function(ctx->cfg, conf_cb_error);
	conf_current = ctx;
	rc = cfg_parse_buf(ctx->cfg, buf);
	conf_current = NULL;
	free(buf);
	if (rc == CFG_SUCCESS)
		return (0);
	if (!conf_ctx_failed(ctx))
		conf_errors_add(ctx->errs, "%s: syntax error", ctx->path);
	return (-1);
}

/* Convert every option set in the file, reporting each bad value. */
static void
conf_ctx_apply(struct conf_ctx *ctx)
{
	const struct conf_field *f;
	cfg_opt_t *opt;
	char *cause;
	size_t i;

	for (i = 0; i < ctx->nfields; i++) {
		f = &ctx->fields[i];
		if (!conf_ctx_given(ctx, f->name))
			continue;
		opt = cfg_getnopt(ctx->cfg, (unsigned int)i);
		cause = NULL;
		if (f->parse(ctx, f, opt, &cause) != 0) {
			conf_ctx_error(ctx, f->name, "%s",
			    cause != NULL ? cause : "invalid value");
			free(cause);
		}
	}
}

/* Release what reading the file needed. */
static void
conf_ctx_clear(struct conf_ctx *ctx)
{
	if (ctx->cfg != NULL)
		cfg_free(ctx->cfg);
	ctx->cfg = NULL;
}

/* ------------------------------------------------------------------ */
/* Job files. */

/* A spec holding the defaults of interface.md. */
static struct job_spec *
conf_job_create(const char *name, const char *path)
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
	return (spec);
}

/* Report option name set for a job kind it does not apply to. */
static void
conf_job_check_kinds(struct conf_ctx *ctx, struct job_spec *spec)
{
	static const struct {
		const char *name;
		unsigned int kinds; /* bits of enum conf_kind */
	} only[] = {
		{ "instances", 1U << CONF_KIND_SERVICE },
		{ "every", 1U << CONF_KIND_PERIODIC },
		{ "schedule", 1U << CONF_KIND_PERIODIC },
		{ "catch_up", 1U << CONF_KIND_PERIODIC },
		{ "random_delay", 1U << CONF_KIND_PERIODIC },
		{ "timeout", 1U << CONF_KIND_PERIODIC | 1U << CONF_KIND_QUEUE },
		{ "concurrency", 1U << CONF_KIND_QUEUE },
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
			    conf_kind_words[spec->kind]);
	}
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
conf_job_check_cap(struct conf_ctx *ctx, const char *minname, uint64_t min,
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
conf_job_check(struct conf_ctx *ctx, struct job_spec *spec)
{
	if (!conf_ctx_given(ctx, "command"))
		conf_ctx_error(ctx, "command", "missing required option");
	conf_job_check_kinds(ctx, spec);
	conf_job_check_cap(ctx, "restart_delay", spec->restart_delay,
	    "restart_delay_max", spec->restart_delay_max);
	conf_job_check_cap(ctx, "retry_delay", spec->retry_delay,
	    "retry_delay_max", spec->retry_delay_max);
	if (spec->watchdog != 0 && spec->ready != CONF_READY_NOTIFY)
		conf_ctx_error(ctx, "watchdog", "needs ready = \"notify\"");
	if (!conf_ctx_given(ctx, "parent_death_signal"))
		spec->pdeath_signal = spec->stop_signal;
	if (!conf_ctx_given(ctx, "drain_timeout"))
		spec->drain_timeout = spec->stop_timeout;
}

/* "web" from ".../web.conf" (or the base name if it has no ".conf"). */
static char *
conf_job_name_of(const char *path)
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
 * Load one job file; also return the line of its depends option in
 * *depends_line if that is not NULL.
 */
static struct job_spec *
conf_job_load(const char *path, const char *name, struct conf_errors *errs,
    int *depends_line)
{
	struct conf_ctx ctx;
	struct job_spec *spec;
	char *derived = NULL;

	if (name == NULL)
		name = derived = conf_job_name_of(path);
	spec = conf_job_create(name, path);
	conf_ctx_init(&ctx, path, errs, spec, conf_job_fields,
	    sizeof conf_job_fields / sizeof conf_job_fields[0]);
	ctx.name = name;
	if (strchr(name, '@') != NULL)
		conf_errors_add(errs,
		    "%s:1: invalid job name \"%s\": \"@\" is kept for "
		    "instance names (NAME@N is instance N of job NAME)",
		    path, name);
	else if (!conf_name_is_valid(name))
		conf_errors_add(
		    errs, "%s:1: invalid job name \"%s\"", path, name);
	else if (conf_ctx_parse(&ctx) == 0) {
		conf_ctx_apply(&ctx);
		conf_job_check(&ctx, spec);
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
	spec = conf_job_load(path, name, errs != NULL ? errs : &discard, NULL);
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
	free(spec->user);
	free(spec->group);
	free(spec->directory);
	words_free(spec->environment);
	free(spec->env_file);
	free(spec->schedule);
	free(spec);
}

/* Are two strings, either of which may be NULL, the same? */
static int
conf_str_eq(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return (a == b);
	return (strcmp(a, b) == 0);
}

/* Are two NULL-terminated string arrays, or NULLs, the same? */
static int
conf_words_eq(char *const *a, char *const *b)
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
conf_job_equal_process(const struct job_spec *a, const struct job_spec *b)
{
	size_t i;

	if (!conf_words_eq(a->argv, b->argv) ||
	    !conf_str_eq(a->user, b->user) || a->has_uid != b->has_uid ||
	    (a->has_uid && a->uid != b->uid) ||
	    !conf_str_eq(a->group, b->group) || a->has_gid != b->has_gid ||
	    (a->has_gid && a->gid != b->gid) ||
	    !conf_str_eq(a->directory, b->directory) ||
	    !conf_words_eq(a->environment, b->environment) ||
	    !conf_str_eq(a->env_file, b->env_file) || a->umask != b->umask ||
	    a->has_nice != b->has_nice || (a->has_nice && a->nice != b->nice))
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
	return (a->input == b->input && a->out == b->out && a->err == b->err &&
	    a->log_max_size == b->log_max_size && a->log_keep == b->log_keep &&
	    a->log_timestamps == b->log_timestamps);
}

/* Do a and b supervise their process the same way? */
static int
conf_job_equal_policy(const struct job_spec *a, const struct job_spec *b)
{
	return (a->kind == b->kind && a->instances == b->instances &&
	    a->autostart == b->autostart && a->restart == b->restart &&
	    memcmp(a->success, b->success, sizeof a->success) == 0 &&
	    a->min_uptime == b->min_uptime &&
	    a->restart_delay == b->restart_delay &&
	    a->restart_delay_max == b->restart_delay_max &&
	    a->max_restarts == b->max_restarts && a->ready == b->ready &&
	    a->ready_timeout == b->ready_timeout &&
	    conf_words_eq(a->depends, b->depends) &&
	    a->stop_signal == b->stop_signal &&
	    a->stop_timeout == b->stop_timeout &&
	    a->kill_group == b->kill_group &&
	    a->pdeath_signal == b->pdeath_signal &&
	    a->watchdog == b->watchdog && a->every == b->every &&
	    conf_str_eq(a->schedule, b->schedule) &&
	    a->catch_up == b->catch_up && a->random_delay == b->random_delay &&
	    a->timeout == b->timeout && a->concurrency == b->concurrency &&
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
	return (conf_str_eq(a->name, b->name) && conf_job_equal_process(a, b) &&
	    conf_job_equal_policy(a, b));
}

/* Does exit code count as success for spec (success_exit_codes)? */
int
job_spec_is_success(const struct job_spec *spec, int code)
{
	if (code < 0 || code > 255)
		return (0);
	return ((spec->success[code / 8] & (1 << (code % 8))) != 0);
}

/* ------------------------------------------------------------------ */
/* A jobs directory. */

static int
conf_cmp_str(const void *a, const void *b)
{
	return (strcmp(*(char *const *)a, *(char *const *)b));
}

static int
conf_cmp_spec(const void *key, const void *elem)
{
	return (strcmp(key, (*(struct job_spec *const *)elem)->name));
}

/*
 * List the job names in dir (file names without ".conf"), sorted, as an
 * owned NULL-terminated array.  NULL with an error added if dir cannot be
 * read.
 */
static char **
conf_jobs_scan(const char *dir, size_t *np, struct conf_errors *errs)
{
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;

	if ((d = opendir(dir)) == NULL) {
		conf_errors_add(errs, "%s: %s", dir, strerror(errno));
		return (NULL);
	}
	names = xcalloc(1, sizeof *names);
	while ((de = readdir(d)) != NULL) {
		if (!conf_file_is_job(de->d_name))
			continue;
		names = xreallocarray(names, n + 2, sizeof *names);
		names[n++] = xstrndup(de->d_name, strlen(de->d_name) - 5);
		names[n] = NULL;
	}
	closedir(d);
	qsort(names, n, sizeof *names, conf_cmp_str);
	*np = n;
	return (names);
}

/* Drop jobs->specs[i] (and lines[i]) with an error about its depends. */
static void __attribute__((format(printf, 5, 6)))
conf_jobs_reject(struct conf_jobs *jobs, int *lines, size_t i,
    struct conf_errors *errs, const char *fmt, ...)
{
	struct job_spec *spec = jobs->specs[i];
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) == -1)
		fatalx("%s: out of memory", __func__);
	va_end(ap);
	if (lines[i] > 0)
		conf_errors_add(
		    errs, "%s:%d: depends: %s", spec->path, lines[i], msg);
	else
		conf_errors_add(errs, "%s: depends: %s", spec->path, msg);
	free(msg);
	job_spec_free(spec);
	jobs->n--;
	memmove(&jobs->specs[i], &jobs->specs[i + 1],
	    (jobs->n - i) * sizeof *jobs->specs);
	memmove(&lines[i], &lines[i + 1], (jobs->n - i) * sizeof *lines);
}

/*
 * Drop jobs that depend on a job that is not loaded, until none is left:
 * a job whose dependency was dropped is dropped too.  names are all the
 * job files found, to tell a missing job from a broken one.
 */
static void
conf_jobs_check_missing(struct conf_jobs *jobs, int *lines, char *const *names,
    size_t nnames, struct conf_errors *errs)
{
	struct job_spec *spec;
	const char *dep;
	size_t i, j;
	int changed;

	do {
		changed = 0;
		for (i = 0; i < jobs->n; i++) {
			spec = jobs->specs[i];
			for (j = 0; j < spec->ndepends; j++) {
				dep = spec->depends[j];
				if (conf_jobs_find(jobs, dep) == NULL)
					break;
			}
			if (j == spec->ndepends)
				continue;
			if (bsearch(&dep, names, nnames, sizeof *names,
			        conf_cmp_str) != NULL)
				conf_jobs_reject(jobs, lines, i, errs,
				    "job \"%s\" is not loaded", dep);
			else
				conf_jobs_reject(jobs, lines, i, errs,
				    "no such job \"%s\"", dep);
			i--;
			changed = 1;
		}
	} while (changed);
}

/* Depth-first search of the dependency graph for cycles. */
struct conf_dfs {
	struct conf_jobs *jobs;
	uint8_t *color; /* 0: not seen, 1: on the path, 2: done */
	size_t *path;
	size_t depth;
	char **cycle; /* for each job on a cycle: "a -> b -> a" */
};

/* Record the cycle made by the path from job k to its end, then k. */
static void
conf_jobs_cycle(struct conf_dfs *dfs, size_t k)
{
	size_t s, i, len = 1;
	char *text;

	for (s = 0; dfs->path[s] != k; s++)
		;
	for (i = s; i < dfs->depth; i++)
		len += strlen(dfs->jobs->specs[dfs->path[i]]->name) + 4;
	len += strlen(dfs->jobs->specs[k]->name);
	text = xcalloc(1, len);
	for (i = s; i < dfs->depth; i++) {
		strcat(text, dfs->jobs->specs[dfs->path[i]]->name);
		strcat(text, " -> ");
	}
	strcat(text, dfs->jobs->specs[k]->name);
	for (i = s; i < dfs->depth; i++) {
		if (dfs->cycle[dfs->path[i]] == NULL)
			dfs->cycle[dfs->path[i]] = xstrdup(text);
	}
	free(text);
}

/* Visit job i and everything it depends on. */
static void
conf_jobs_visit(struct conf_dfs *dfs, size_t i)
{
	struct job_spec *spec = dfs->jobs->specs[i], **dep;
	size_t j, k;

	dfs->color[i] = 1;
	dfs->path[dfs->depth++] = i;
	for (j = 0; j < spec->ndepends; j++) {
		dep = bsearch(spec->depends[j], dfs->jobs->specs, dfs->jobs->n,
		    sizeof *dfs->jobs->specs, conf_cmp_spec);
		if (dep == NULL)
			continue;
		k = (size_t)(dep - dfs->jobs->specs);
		if (dfs->color[k] == 0)
			conf_jobs_visit(dfs, k);
		else if (dfs->color[k] == 1)
			conf_jobs_cycle(dfs, k);
	}
	dfs->depth--;
	dfs->color[i] = 2;
}

/* Drop the jobs on a dependency cycle; returns 1 if any was dropped. */
static int
conf_jobs_check_cycles(
    struct conf_jobs *jobs, int *lines, struct conf_errors *errs)
{
	struct conf_dfs dfs;
	size_t i;
	int dropped = 0;

	memset(&dfs, 0, sizeof dfs);
	dfs.jobs = jobs;
	dfs.color = xcalloc(jobs->n + 1, sizeof *dfs.color);
	dfs.path = xcalloc(jobs->n + 1, sizeof *dfs.path);
	dfs.cycle = xcalloc(jobs->n + 1, sizeof *dfs.cycle);
	for (i = 0; i < jobs->n; i++) {
		if (dfs.color[i] == 0)
			conf_jobs_visit(&dfs, i);
	}
	/* From the end, so that dropping a job moves none still to see. */
	for (i = jobs->n; i-- > 0;) {
		if (dfs.cycle[i] == NULL)
			continue;
		conf_jobs_reject(
		    jobs, lines, i, errs, "dependency cycle: %s", dfs.cycle[i]);
		free(dfs.cycle[i]);
		dropped = 1;
	}
	free(dfs.color);
	free(dfs.path);
	free(dfs.cycle);
	return (dropped);
}

/*
 * Load every job file of dir (see conf_file_is_job) into *jobs, which is
 * initialised here and must later be released with conf_jobs_clear.  Jobs
 * are sorted by name.  A file with errors is skipped, and so is a job that
 * depends on a job not loaded or is on a dependency cycle; each error is
 * appended to errs (if not NULL).  Returns 0, or -1 if dir cannot be read
 * (with an error appended and *jobs empty).
 */
int
conf_jobs_load(
    const char *dir, struct conf_jobs *jobs, struct conf_errors *errs)
{
	struct conf_errors discard;
	struct job_spec *spec;
	char **names, *path;
	const char *slash;
	size_t n, i;
	int *lines;

	jobs->specs = NULL;
	jobs->n = 0;
	conf_errors_init(&discard);
	if (errs == NULL)
		errs = &discard;
	if ((names = conf_jobs_scan(dir, &n, errs)) == NULL) {
		conf_errors_clear(&discard);
		return (-1);
	}
	slash = (*dir != '\0' && dir[strlen(dir) - 1] == '/') ? "" : "/";
	jobs->specs = xcalloc(n + 1, sizeof *jobs->specs);
	lines = xcalloc(n + 1, sizeof *lines);
	for (i = 0; i < n; i++) {
		xasprintf(&path, "%s%s%s.conf", dir, slash, names[i]);
		spec = conf_job_load(path, names[i], errs, &lines[jobs->n]);
		if (spec != NULL)
			jobs->specs[jobs->n++] = spec;
		free(path);
	}
	conf_jobs_check_missing(jobs, lines, names, n, errs);
	if (conf_jobs_check_cycles(jobs, lines, errs))
		conf_jobs_check_missing(jobs, lines, names, n, errs);
	free(lines);
	words_free(names);
	conf_errors_clear(&discard);
	return (0);
}

/* Free every spec of jobs and leave it empty; NULL is a no-op. */
void
conf_jobs_clear(struct conf_jobs *jobs)
{
	size_t i;

	if (jobs == NULL)
		return;
	for (i = 0; i < jobs->n; i++)
		job_spec_free(jobs->specs[i]);
	free(jobs->specs);
	jobs->specs = NULL;
	jobs->n = 0;
}

/* The spec of job name in jobs (borrowed), or NULL. */
struct job_spec *
conf_jobs_find(const struct conf_jobs *jobs, const char *name)
{
	struct job_spec **found;

	if (jobs == NULL || jobs->n == 0 || name == NULL)
		return (NULL);
	found = bsearch(
	    name, jobs->specs, jobs->n, sizeof *jobs->specs, conf_cmp_spec);
	return (found != NULL ? *found : NULL);
}

/* ------------------------------------------------------------------ */
/* vigil.conf. */

/* The user's home directory, or "/" if there is none. */
static const char *
conf_home(void)
{
	const char *home = getenv("HOME");
	struct passwd *pw;

	if (home != NULL && home[0] == '/')
		return (home);
	if ((pw = getpwuid(getuid())) != NULL && pw->pw_dir != NULL &&
	    pw->pw_dir[0] == '/')
		return (pw->pw_dir);
	return ("/");
}

/*
 * "$VAR/vigil" if VAR holds an absolute path (XDG base directories), else
 * "$HOME/fallback/vigil".  Owned by the caller.
 */
static char *
conf_xdg_dir(const char *var, const char *fallback)
{
	const char *v = getenv(var), *home;
	char *dir;

	if (v != NULL && v[0] == '/')
		xasprintf(&dir, "%s/vigil", v);
	else {
		home = conf_home();
		xasprintf(&dir, "%s%s%s/vigil", home,
		    strcmp(home, "/") == 0 ? "" : "/", fallback);
	}
	return (dir);
}

/* Fill c with the built-in defaults for root or for another user. */
static void
conf_defaults(struct conf *c)
{
	const char *v;
	char *dir;

	c->socket_mode = 0600;
	c->history_keep = 1000;
	if (geteuid() == 0) {
		c->jobs_dir = xstrdup(SYSCONFDIR "/vigil/jobs.d");
		c->runtime_dir = xstrdup(RUNSTATEDIR "/vigil");
		c->state_dir = xstrdup(LOCALSTATEDIR "/lib/vigil");
		c->log_dir = xstrdup(LOCALSTATEDIR "/log/vigil");
		return;
	}
	dir = conf_xdg_dir("XDG_CONFIG_HOME", ".config");
	xasprintf(&c->jobs_dir, "%s/jobs.d", dir);
	free(dir);
	if ((v = getenv("XDG_RUNTIME_DIR")) != NULL && v[0] == '/')
		xasprintf(&c->runtime_dir, "%s/vigil", v);
	else
		xasprintf(&c->runtime_dir, "/tmp/vigil-%lu",
		    (unsigned long)geteuid());
	c->state_dir = conf_xdg_dir("XDG_STATE_HOME", ".local/state");
	xasprintf(&c->log_dir, "%s/log", c->state_dir);
}

/*
 * The default path of vigil.conf: SYSCONFDIR/vigil/vigil.conf for root,
 * else $XDG_CONFIG_HOME/vigil/vigil.conf (~/.config/vigil/vigil.conf).
 * Owned by the caller.
 */
char *
conf_default_path(void)
{
	char *dir, *path;

	if (geteuid() == 0)
		return (xstrdup(SYSCONFDIR "/vigil/vigil.conf"));
	dir = conf_xdg_dir("XDG_CONFIG_HOME", ".config");
	xasprintf(&path, "%s/vigil.conf", dir);
	free(dir);
	return (path);
}

/* The directory of path, absolute when it can be made so.  Owned. */
static char *
conf_dir_of(const char *path)
{
	char *dir, *slash, *real;

	dir = xstrdup(path);
	if ((slash = strrchr(dir, '/')) == NULL) {
		free(dir);
		dir = xstrdup(".");
	} else if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (dir[0] != '/' && (real = realpath(dir, NULL)) != NULL) {
		free(dir);
		dir = xstrdup(real);
		free(real);
	}
	return (dir);
}

/*
 * Read vigil.conf at path over the built-in defaults.  With path NULL, or
 * a missing file and !must_exist, return the defaults (c->path NULL).
 * Relative directories are taken from the config file's directory.
 * Returns an owned struct conf (free it with conf_free), or NULL with every
 * error appended to errs (if not NULL).
 */
struct conf *
conf_load(const char *path, int must_exist, struct conf_errors *errs)
{
	struct conf_errors discard;
	struct conf_ctx ctx;
	struct conf *c;
	struct stat st;
	char *base;

	c = xcalloc(1, sizeof *c);
	conf_defaults(c);
	if (path == NULL ||
	    (!must_exist && stat(path, &st) == -1 && errno == ENOENT))
		return (c);
	conf_errors_init(&discard);
	base = conf_dir_of(path);
	c->path = xstrdup(path);
	conf_ctx_init(&ctx, path, errs != NULL ? errs : &discard, c,
	    conf_main_fields,
	    sizeof conf_main_fields / sizeof conf_main_fields[0]);
	ctx.base = base;
	if (conf_ctx_parse(&ctx) == 0) {
		conf_ctx_apply(&ctx);
		if (c->has_socket_gid && !conf_ctx_given(&ctx, "socket_mode"))
			c->socket_mode = 0660;
	}
	conf_ctx_sort(&ctx);
	if (conf_ctx_failed(&ctx)) {
		conf_free(c);
		c = NULL;
	}
	conf_ctx_clear(&ctx);
	free(base);
	conf_errors_clear(&discard);
	return (c);
}

/* Free c and everything it owns; NULL is a no-op. */
void
conf_free(struct conf *c)
{
	if (c == NULL)
		return;
	free(c->path);
	free(c->jobs_dir);
	free(c->runtime_dir);
	free(c->state_dir);
	free(c->log_dir);
	free(c->log_level);
	free(c->socket_group);
	free(c);
}
