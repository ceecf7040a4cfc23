/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The parsers of the options that say what a job runs and how it is
 * watched while it runs: command, exec_start_pre, exec_start_post,
 * exec_stop_post, ready (its probes), health, watch.  The other parsers,
 * and the tables that name them all, are in conf-field.c.
 */

#include "config.h"

#include <sys/types.h>

#include <confuse.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "conf-int.h"
#include "probe.h"
#include "words.h"
#include "xmalloc.h"

/* ready: "exec", "notify", or a probe (probe.h). */
int
conf_parse_ready(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	struct job_spec *spec = ctx->obj;
	const char *s = conf_str(opt);
	int i;

	(void)f;
	probe_spec_free(&spec->ready_probe);
	if ((i = conf_word_index(conf_ready_words, s)) != -1) {
		spec->ready = (enum conf_ready)i;
		return (0);
	}
	if (strchr(s, ':') == NULL) {
		xasprintf(cause,
		    "invalid value \"%s\" (exec, notify, tcp:PORT, "
		    "tcp:HOST:PORT, http:URL or exec:COMMAND)",
		    s);
		return (-1);
	}
	if (probe_parse(s, &spec->ready_probe, cause) == -1)
		return (-1);
	spec->ready = CONF_READY_PROBE;
	return (0);
}

/* health: a probe (probe.h). */
int
conf_parse_health(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	struct job_spec *spec = ctx->obj;

	(void)f;
	probe_spec_free(&spec->health);
	return (probe_parse(conf_str(opt), &spec->health, cause));
}

/* A command (a string split into words, or a list) into *argvp, *argcp. */
static int
conf_argv(struct conf_ctx *ctx, const struct conf_field *f, cfg_opt_t *opt,
    char ***argvp, size_t *argcp, char **cause)
{
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
	words_free(*argvp);
	*argvp = argv;
	if (argcp != NULL)
		*argcp = n;
	return (0);
}

int
conf_parse_command(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	struct job_spec *spec = ctx->obj;

	return (conf_argv(ctx, f, opt, &spec->argv, &spec->argc, cause));
}

/*
 * exec_start_pre, exec_start_post, exec_stop_post, on_failure: a command
 * each.
 */
int
conf_parse_hook_command(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	struct job_spec *spec = ctx->obj;
	char ***argvp = strcmp(f->name, "exec_start_pre") == 0 ?
	    &spec->pre_argv :
	    strcmp(f->name, "exec_start_post") == 0 ? &spec->start_post_argv :
	    strcmp(f->name, "on_failure") == 0      ? &spec->failure_argv :
	                                              &spec->stop_post_argv;

	return (conf_argv(ctx, f, opt, argvp, NULL, cause));
}

/* vigil.conf's on_event: a command. */
int
conf_parse_event_command(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	struct conf *c = ctx->obj;

	return (conf_argv(ctx, f, opt, &c->event_argv, NULL, cause));
}

/* watch: absolute paths, each at most PATH_MAX. */
int
conf_parse_watch(struct conf_ctx *ctx, const struct conf_field *f,
    cfg_opt_t *opt, char **cause)
{
	struct job_spec *spec = ctx->obj;
	size_t i, j, n = cfg_opt_size(opt);
	char **paths;
	const char *s;

	(void)f;
	paths = xcalloc(n + 1, sizeof *paths);
	for (i = j = 0; i < n; i++) {
		s = cfg_opt_getnstr(opt, i);
		if (s[0] != '/' || strlen(s) >= PATH_MAX) {
			xasprintf(cause, "\"%s\" is not an absolute path", s);
			words_free(paths);
			return (-1);
		}
		if (!conf_words_has(paths, s))
			paths[j++] = xstrdup(s);
	}
	words_free(spec->watch);
	spec->watch = paths;
	spec->nwatch = j;
	return (0);
}
