/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The options of one [program:x] that are the same for all its processes:
 * a table of what each becomes in the job file, or why it does not.
 * Values are expanded as supervisord expands them before it makes the
 * processes (program_name, group_name, here, host_node_name, ENV_X; no
 * process_num), and checked as supervisord checks them: a value
 * supervisord would refuse is reported, not guessed at.
 */

#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ini.h"
#include "signame.h"
#include "svimport-int.h"
#include "xmalloc.h"

struct svi_opt {
	const char *name;
	/* Translate the expanded value of E; NULL: report WHY. */
	void (*fn)(struct svi_prog *, const struct ini_entry *, const char *);
	const char *why;
};

/*
 * Option KEY of the program (or [DEFAULT]) expanded, or NULL: absent
 * (*EP NULL), or refused by supervisord (*EP set, and reported).
 */
char *
svi_get(struct svi_prog *p, const char *key, const struct ini_entry **ep)
{
	const struct ini_entry *e;
	char *v, *cause = NULL;

	*ep = e = ini_get(p->ctx->ini, p->sec, key);
	if (e == NULL)
		return (NULL);
	v = ini_expand(e->value, p->vars.v, p->vars.n, &cause);
	if (v == NULL) {
		svi_report(p->ctx, e->file, e->line, e->key,
		    "supervisord refuses it: %s", cause);
		free(cause);
	}
	return (v);
}

static void
svi_bad(struct svi_prog *p, const struct ini_entry *e, const char *what)
{
	svi_report(p->ctx, e->file, e->line, e->key,
	    "supervisord refuses it: not %s: '%s'", what, e->value);
}

static void
svi_autostart(struct svi_prog *p, const struct ini_entry *e, const char *v)
{
	if (svi_boolean(v, &p->autostart) == -1) {
		svi_bad(p, e, "a boolean");
		return;
	}
	svi_line_raw(p, e, "autostart", p->autostart ? "true" : "false");
}

/*
 * autorestart: true is "always", false "never", unexpected (the default,
 * written too: vigil's default is "always") "on-failure" with exitcodes.
 */
static void
svi_autorestart(struct svi_prog *p, const struct ini_entry *e, const char *v)
{
	const char *restart = "on-failure";
	int b;

	if (v != NULL && strcasecmp(v, "unexpected") != 0) {
		if (svi_boolean(v, &b) == -1) {
			svi_bad(p, e, "true, false or unexpected");
			return;
		}
		restart = b ? "always" : "never";
	}
	if (e == NULL)
		fprintf(p->f,
		    "# autorestart = unexpected (supervisord's "
		    "default)\n");
	svi_line(p, e == NULL ? NULL : e, "restart", restart);
}

static void
svi_exitcodes(struct svi_prog *p, const struct ini_entry *e, const char *v)
{
	char *list = xstrdup(v), *s, *tok, *out;
	long long code;
	size_t len = 0;
	FILE *f;

	if ((f = open_memstream(&out, &len)) == NULL)
		abort();
	fputc('{', f);
	for (s = list; (tok = strsep(&s, ",")) != NULL;) {
		if (svi_number(tok, &code) == -1 || code < 0 || code > 255) {
			fclose(f);
			free(out);
			free(list);
			svi_bad(p, e, "a list of exit codes");
			return;
		}
		fprintf(f, "%s%lld", tok == list ? "" : ", ", code);
	}
	fputc('}', f);
	fclose(f);
	svi_line_raw(p, e, "success_exit_codes", out);
	free(out);
	free(list);
}

/* A number of seconds as a duration, under the name KEY. */
static void
svi_seconds(struct svi_prog *p, const struct ini_entry *e, const char *v,
    const char *key)
{
	long long n;
	char buf[32];

	if (svi_number(v, &n) == -1 || n < 0) {
		svi_bad(p, e, "a number of seconds");
		return;
	}
	snprintf(buf, sizeof buf, "%llds", n);
	svi_line(p, e, key, buf);
}

static void
svi_startsecs(struct svi_prog *p, const struct ini_entry *e, const char *v)
{
	svi_seconds(p, e, v, "min_uptime");
}

static void
svi_stopwaitsecs(struct svi_prog *p, const struct ini_entry *e, const char *v)
{
	svi_seconds(p, e, v, "stop_timeout");
}

/*
 * startretries N gives up after N failed starts in a row, as vigil's
 * max_restarts N.  supervisord's 0 (no retry) has no vigil form: there 0
 * never gives up.  Without it supervisord gives up after 3; vigil never
 * does, on purpose, and the job says so.
 */
static void
svi_startretries(struct svi_prog *p, const struct ini_entry *e, const char *v)
{
	long long n;
	char buf[32];

	if (e == NULL) {
		fprintf(p->f,
		    "# startretries = 3 (supervisord's default) is "
		    "not carried over: vigil never gives up\n");
		return;
	}
	if (svi_number(v, &n) == -1 || n < 0) {
		svi_bad(p, e, "a number");
		return;
	}
	if (n == 0) {
		svi_report(p->ctx, e->file, e->line, e->key,
		    "vigil's max_restarts counts restarts from 1; with 0 it "
		    "never gives up");
		return;
	}
	if (n > 1000000) {
		svi_report(p->ctx, e->file, e->line, e->key,
		    "vigil's max_restarts is at most 1000000; without it, "
		    "vigil never gives up");
		return;
	}
	snprintf(buf, sizeof buf, "%lld", n);
	svi_line_raw(p, e, "max_restarts", buf);
}

static void
svi_stopsignal(struct svi_prog *p, const struct ini_entry *e, const char *v)
{
	char name[32];
	long long n;
	int sig;

	if (svi_number(v, &n) == 0)
		sig = n > 0 && n < 65 ? (int)n : -1;
	else {
		while (isspace((unsigned char)*v))
			v++;
		snprintf(name, sizeof name, "%s", v);
		name[strcspn(name, " \t\n")] = '\0';
		sig = signame_parse(name);
	}
	if (sig <= 0 || signame_name(sig) == NULL) {
		svi_bad(p, e, "a signal");
		return;
	}
	svi_line(p, e, "stop_signal", signame_name(sig));
}

/*
 * stopasgroup and killasgroup: vigil signals the whole process group (or
 * cgroup) by default already; either one set true says so explicitly.
 */
static void
svi_asgroup(struct svi_prog *p, const struct ini_entry *e, const char *v)
{
	int b;

	const struct ini_entry *k;
	char *kv;
	int kb;

	if (svi_boolean(v, &b) == -1) {
		svi_bad(p, e, "a boolean");
		return;
	}
	/* killasgroup defaults to stopasgroup; false beside true is refused. */
	if (b && strcmp(e->key, "stopasgroup") == 0 &&
	    (kv = svi_get(p, "killasgroup", &k)) != NULL) {
		if (svi_boolean(kv, &kb) == 0 && !kb)
			svi_report(p->ctx, e->file, e->line, e->key,
			    "supervisord refuses stopasgroup = true with "
			    "killasgroup = false");
		free(kv);
	}
	if (b)
		svi_line_raw(p, e, "kill_group", "true");
	else
		fprintf(p->f,
		    "# %s = %s: vigil stops the whole process "
		    "group anyway (see kill_group)\n",
		    e->key, e->value);
}

static void
svi_user(struct svi_prog *p, const struct ini_entry *e, const char *v)
{
	svi_line(p, e, "user", v);
}

static void
svi_umask(struct svi_prog *p, const struct ini_entry *e, const char *v)
{
	char buf[16], *end;
	long mode;

	while (isspace((unsigned char)*v))
		v++;
	if (v[0] == '0' && (v[1] == 'o' || v[1] == 'O'))
		v += 2;
	mode = strtol(v, &end, 8);
	while (isspace((unsigned char)*end))
		end++;
	if (*v == '\0' || *end != '\0' || mode < 0 || mode > 0777) {
		svi_bad(p, e, "an octal umask");
		return;
	}
	snprintf(buf, sizeof buf, "%03lo", mode);
	svi_line(p, e, "umask", buf);
}

static void
svi_priority(struct svi_prog *p, const struct ini_entry *e, const char *v)
{
	if (svi_number(v, &p->prio) == -1)
		svi_bad(p, e, "a number");
}

static void
svi_redirect(struct svi_prog *p, const struct ini_entry *e, const char *v)
{
	if (svi_boolean(v, &p->redirect_stderr) == -1)
		svi_bad(p, e, "a boolean");
}

/* serverurl: AUTO is supervisord's default; anything else has no use. */
static void
svi_serverurl(struct svi_prog *p, const struct ini_entry *e, const char *v)
{
	if (strcasecmp(v, "auto") != 0)
		svi_report(p->ctx, e->file, e->line, e->key,
		    "vigil gives jobs no XML-RPC server URL; they can run "
		    "vigilctl");
}

/* What the process options translate; they are read per process. */
static void
svi_later(struct svi_prog *p, const struct ini_entry *e, const char *v)
{
	(void)p;
	(void)e;
	(void)v;
}

static const struct svi_opt svi_opts[] = {
	{ "command", svi_later, NULL },
	{ "process_name", svi_later, NULL },
	{ "numprocs", svi_later, NULL },
	{ "numprocs_start", svi_later, NULL },
	{ "environment", svi_later, NULL },
	{ "directory", svi_later, NULL },
	{ "priority", svi_priority, NULL },
	{ "autostart", svi_autostart, NULL },
	{ "autorestart", svi_autorestart, NULL },
	{ "exitcodes", svi_exitcodes, NULL },
	{ "startsecs", svi_startsecs, NULL },
	{ "startretries", svi_startretries, NULL },
	{ "stopsignal", svi_stopsignal, NULL },
	{ "stopwaitsecs", svi_stopwaitsecs, NULL },
	{ "stopasgroup", svi_asgroup, NULL },
	{ "killasgroup", svi_asgroup, NULL },
	{ "user", svi_user, NULL },
	{ "umask", svi_umask, NULL },
	{ "redirect_stderr", svi_redirect, NULL },
	{ "stdout_logfile", svi_later, NULL },
	{ "stderr_logfile", svi_later, NULL },
	{ "stdout_logfile_maxbytes", svi_later, NULL },
	{ "stdout_logfile_backups", svi_later, NULL },
	{ "stderr_logfile_maxbytes", svi_later, NULL },
	{ "stderr_logfile_backups", svi_later, NULL },
	{ "stdout_syslog", svi_later, NULL },
	{ "stderr_syslog", svi_later, NULL },
	{ "stdout_capture_maxbytes", NULL,
	    "vigil has no process communication event mode" },
	{ "stderr_capture_maxbytes", NULL,
	    "vigil has no process communication event mode" },
	{ "stdout_events_enabled", NULL, "vigil has no event listeners" },
	{ "stderr_events_enabled", NULL, "vigil has no event listeners" },
	{ "serverurl", svi_serverurl, NULL },
};

static const struct svi_opt *
svi_opt_find(const char *key)
{
	size_t i;

	for (i = 0; i < sizeof svi_opts / sizeof svi_opts[0]; i++)
		if (strcmp(svi_opts[i].name, key) == 0)
			return (&svi_opts[i]);
	return (NULL);
}

/* Report the options of S (the program or [DEFAULT]) in no table. */
static void
svi_unknown(struct svi_prog *p, const struct ini_section *s)
{
	const struct svi_opt *o;
	size_t i;

	for (i = 0; i < s->n; i++) {
		const struct ini_entry *e = &s->entries[i];

		if (s != p->sec && ini_get(p->ctx->ini, p->sec, e->key) != e)
			continue;
		if ((o = svi_opt_find(e->key)) == NULL)
			svi_report(p->ctx, e->file, e->line, e->key,
			    "not an option of [program:x]");
		else if (o->fn == NULL)
			svi_report(
			    p->ctx, e->file, e->line, e->key, "%s", o->why);
	}
}

/*
 * A [supervisord] setting (E) the program has not set itself: supervisord
 * runs as that user, or with that umask when it daemonizes.
 */
static void
svi_inherited(struct svi_prog *p, const char *key, const struct ini_entry *e,
    void (*fn)(struct svi_prog *, const struct ini_entry *, const char *))
{
	char *v;

	if (e == NULL || ini_get(p->ctx->ini, p->sec, key) != NULL)
		return;
	if ((v = ini_expand(e->value, p->vars.v, p->vars.n, NULL)) != NULL)
		fn(p, e, v);
	free(v);
}

/* The expansions of the options read before the processes are made. */
static void
svi_prog_vars(struct svi_prog *p)
{
	svi_vars_copy(&p->vars, &p->ctx->base);
	svi_vars_add(&p->vars, "program_name", INI_VAR_STRING, p->name, 0);
	svi_vars_add(&p->vars, "group_name", INI_VAR_STRING, p->group, 0);
}

/*
 * Translate the program-wide options, in the table's order, and report
 * what the table does not translate.
 */
void
svi_prog_options(struct svi_prog *p)
{
	const struct ini_entry *e;
	size_t i;
	char *v;

	svi_prog_vars(p);
	for (i = 0; i < sizeof svi_opts / sizeof svi_opts[0]; i++) {
		const struct svi_opt *o = &svi_opts[i];

		if (o->fn == NULL || o->fn == svi_later)
			continue;
		v = svi_get(p, o->name, &e);
		if (v != NULL)
			o->fn(p, e, v);
		else if (e == NULL &&
		    (o->fn == svi_autorestart || o->fn == svi_startretries))
			o->fn(p, NULL, NULL);
		free(v);
	}
	svi_inherited(p, "user", p->ctx->user, svi_user);
	svi_inherited(p, "umask", p->ctx->umask, svi_umask);
	svi_unknown(p, p->sec);
	svi_unknown(p, &p->ctx->ini->defaults);
}
