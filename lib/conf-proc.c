/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The parsers of the options that set up a job's process (conf-field.c's
 * table names them): user and group (by name or number; a group is
 * vigil.conf's socket_group too), umask, nice, environment and resource
 * limits.  Like every parser, each stores the value in the spec or
 * returns -1 with a message that conf-ctx.c reports at the option's line.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/resource.h>

#include <confuse.h>
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "conf-int.h"
#include "duration.h"
#include "words.h"
#include "xmalloc.h"

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

int
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

int
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
int
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

int
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
int
conf_parse_mode(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	if (conf_octal(conf_str(opt), conf_ptr(ctx, f)) != 0) {
		xasprintf(cause, "invalid octal mode \"%s\"", conf_str(opt));
		return (-1);
	}
	return (0);
}

int
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
int
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
