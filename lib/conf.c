/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * vigil.conf, the daemon's own configuration (struct conf): built-in
 * defaults for root and for other users (XDG base directories), with the
 * file read over them, and its cluster section (cluster mode).  Also what
 * every part of the configuration shares: the rules for job names and
 * job file names, and the error list.
 *
 * The configuration is read by five files, one concept each:
 *   conf.c        vigil.conf, names, the error list (conf_*)
 *   conf-ctx.c    reading one file: libconfuse and its pre-processor,
 *                 where each option was set, errors by line (conf_ctx_*)
 *   conf-field.c  the typed parsers of values and the option tables
 *                 of both file types (conf_field_*)
 *   job-spec.c    one job file: struct job_spec, its defaults, the checks
 *                 across options, its equality for reload (job_spec_*)
 *   conf-jobs.c   jobs.d: every job file, missing dependencies and
 *                 cycles (conf_jobs_*)
 * conf-int.h holds what they share and no one else sees.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "conf-int.h"
#include "duration.h"
#include "log.h"
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

/* Whether this vigild can run cluster mode (configure --with-postgresql). */
#ifdef HAVE_LIBPQ
#define CONF_HAVE_LIBPQ 1
#else
#define CONF_HAVE_LIBPQ 0
#endif

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
	(void)xvasprintf(&msg, fmt, ap);
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
	c->hook_timeout = 30 * DURATION_USEC_PER_SEC;
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

/* ------------------------------------------------------------------ */
/* The cluster section of vigil.conf. */

/* a + b, or UINT64_MAX if that does not fit. */
static uint64_t
conf_add(uint64_t a, uint64_t b)
{
	return (a > UINT64_MAX - b ? UINT64_MAX : a + b);
}

/*
 * The timing rule: renew_interval + 2 * query_timeout + fence_margin must
 * be less than lease_ttl.  A renewal is due every renew_interval and an
 * attempt may take query_timeout: the lease leaves room for two attempts
 * to fail before the fence starts, fence_margin before the lease expires.
 */
static void
conf_cluster_check_timing(struct conf_ctx *sub, const struct conf_cluster *cl)
{
	char ri[32], qt[32], fm[32], sum[32], ttl[32];
	uint64_t need;

	need = conf_add(conf_add(cl->renew_interval, cl->fence_margin),
	    conf_add(cl->query_timeout, cl->query_timeout));
	if (need < cl->lease_ttl)
		return;
	duration_format(cl->renew_interval, ri, sizeof ri);
	duration_format(cl->query_timeout, qt, sizeof qt);
	duration_format(cl->fence_margin, fm, sizeof fm);
	duration_format(need, sum, sizeof sum);
	duration_format(cl->lease_ttl, ttl, sizeof ttl);
	conf_ctx_error(sub, "lease_ttl",
	    "renew_interval + 2 * query_timeout + fence_margin must be less "
	    "than lease_ttl, so that two renew attempts may fail before the "
	    "fence starts: %s + 2 * %s + %s = %s is not less than %s",
	    ri, qt, fm, sum, ttl);
}

/* node_name's default: the host name, if it is a valid node name. */
static void
conf_cluster_node_name(struct conf_ctx *sub, struct conf_cluster *cl)
{
	char host[256];

	if (gethostname(host, sizeof host) == -1) {
		conf_ctx_error(sub, "node_name",
		    "no host name for the default (%s): set node_name",
		    strerror(errno));
		return;
	}
	host[sizeof host - 1] = '\0';
	if (!conf_name_is_valid(host)) {
		conf_ctx_error(sub, "node_name",
		    "the host name \"%s\" is not a valid node name (1 to %d "
		    "characters of A-Z, a-z, 0-9, \".\", \"_\" and \"-\"): set "
		    "node_name",
		    host, CONF_NAME_MAX);
		return;
	}
	cl->node_name = xstrdup(host);
}

/*
 * The defaults that follow other options, and the checks of a cluster
 * section once its options are read; bad values (bad) hide the timing
 * rule.
 */
static void
conf_cluster_check(struct conf_ctx *sub, struct conf_cluster *cl, int bad)
{
	if (cl->conninfo == NULL || cl->conninfo[0] == '\0')
		conf_ctx_error(sub, NULL, "conninfo is required");
	if ((cl->conninfo_line = conf_ctx_line(sub, "conninfo")) == 0)
		cl->conninfo_line = cl->line;
	if ((cl->work_conninfo_line = conf_ctx_line(sub, "work_conninfo")) == 0)
		cl->work_conninfo_line = cl->line;
	if (!conf_ctx_given(sub, "query_timeout"))
		cl->query_timeout = cl->renew_interval;
	if (!conf_ctx_given(sub, "connect_timeout"))
		cl->connect_timeout = cl->renew_interval;
	if (cl->node_name == NULL && !conf_ctx_given(sub, "node_name"))
		conf_cluster_node_name(sub, cl);
	if (!bad)
		conf_cluster_check_timing(sub, cl);
}

/*
 * Read the cluster section, if the file has one, into c->cluster through
 * sub, the section's context, and check it.  A vigild built without libpq
 * takes none.
 */
static void
conf_cluster_load(struct conf_ctx *sub, struct conf *c)
{
	struct conf_cluster *cl = &c->cluster;
	size_t nerrs = sub->errs->n;

	if (sub->cfg == NULL)
		return;
	if (!CONF_HAVE_LIBPQ) {
		conf_ctx_error(sub, NULL,
		    "this vigild was built without PostgreSQL support "
		    "(./configure --with-postgresql)");
		return;
	}
	cl->enabled = 1;
	cl->line = sub->line;
	cl->lease_ttl = 30 * DURATION_USEC_PER_SEC;
	cl->renew_interval = 5 * DURATION_USEC_PER_SEC;
	cl->fence_margin = 2 * DURATION_USEC_PER_SEC;
	cl->forget_after = 3600 * DURATION_USEC_PER_SEC;
	cl->on_db_loss = CONF_DB_LOSS_KILL;
	conf_ctx_apply(sub);
	conf_cluster_check(sub, cl, sub->errs->n > nerrs);
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
	struct conf_ctx ctx, sub;
	struct conf *c;
	struct stat st;
	char *base;
	int parsed;

	c = xcalloc(1, sizeof *c);
	conf_defaults(c);
	if (path == NULL ||
	    (!must_exist && stat(path, &st) == -1 && errno == ENOENT))
		return (c);
	conf_errors_init(&discard);
	base = conf_dir_of(path);
	c->path = xstrdup(path);
	conf_ctx_init(&ctx, path, errs != NULL ? errs : &discard, c,
	    conf_field_main, conf_field_nmain);
	ctx.base = base;
	conf_ctx_init(&sub, path, ctx.errs, &c->cluster, conf_field_cluster,
	    conf_field_ncluster);
	sub.section = "cluster";
	ctx.sub = &sub;
	if ((parsed = conf_ctx_parse(&ctx)) != -1) {
		conf_ctx_apply(&ctx);
		/* Not when lines with syntax errors were left out. */
		if (parsed == 0) {
			if (c->has_socket_gid &&
			    !conf_ctx_given(&ctx, "socket_mode"))
				c->socket_mode = 0660;
			conf_cluster_load(&sub, c);
		}
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
	words_free(c->event_argv);
	free(c->http_listen);
	free(c->http_token_file);
	words_free(c->http_allowed_hosts);
	free(c->cluster.conninfo);
	free(c->cluster.work_conninfo);
	free(c->cluster.node_name);
	free(c);
}
