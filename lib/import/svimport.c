/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The supervisord importer's driver: the expansions every option gets,
 * the [supervisord] settings every program inherits, [group:x] (its
 * priority orders its programs), each [program:x] (svimport-prog.c and
 * svimport-proc.c write its job), the sections with no vigil meaning
 * (reported) or no meaning at all (ignored), then the start order that
 * supervisord's priorities gave, as depends, and each job's text.
 */

#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "ini.h"
#include "pyshlex.h"
#include "svimport-int.h"
#include "svimport.h"
#include "words.h"
#include "xmalloc.h"

/*
 * Add "FILE:LINE: OPTION: not translated (why)" to the reports.  An empty
 * OPTION names the section alone.
 */
void
svi_report(struct svi_ctx *ctx, const char *file, int line, const char *option,
    const char *fmt, ...)
{
	struct svimport_out *out = ctx->out;
	char *why, *msg;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&why, fmt, ap) == -1)
		why = NULL;
	va_end(ap);
	if (why == NULL)
		return;
	xasprintf(
	    &msg, "%s:%d: %s: not translated (%s)", file, line, option, why);
	free(why);
	out->reports = xreallocarray(
	    out->reports, out->nreports + 1, sizeof *out->reports);
	out->reports[out->nreports++] = msg;
}

/* Add an expansion (NAME and STRING are borrowed). */
void
svi_vars_add(struct svi_vars *vars, const char *name, enum ini_var_kind kind,
    const char *string, long long number)
{
	size_t i;

	for (i = 0; i < vars->n; i++)
		if (strcmp(vars->v[i].name, name) == 0)
			break;
	if (i == vars->n) {
		if (vars->n == vars->alloc) {
			vars->alloc = vars->alloc == 0 ? 64 : vars->alloc * 2;
			vars->v = xreallocarray(
			    vars->v, vars->alloc, sizeof *vars->v);
		}
		vars->n++;
	}
	vars->v[i].name = name;
	vars->v[i].kind = kind;
	vars->v[i].string = string;
	vars->v[i].number = number;
}

void
svi_vars_copy(struct svi_vars *dst, const struct svi_vars *src)
{
	size_t i;

	for (i = 0; i < src->n; i++)
		svi_vars_add(dst, src->v[i].name, src->v[i].kind,
		    src->v[i].string, src->v[i].number);
}

void
svi_vars_clear(struct svi_vars *vars)
{
	free(vars->v);
	memset(vars, 0, sizeof *vars);
}

/* Write "# key=value" for the supervisord option E, a line at a time. */
static void
svi_comment(struct svi_prog *p, const struct ini_entry *e)
{
	const char *s, *nl;

	if (e == NULL)
		return;
	fprintf(p->f, "# %s = ", e->key);
	for (s = e->value; (nl = strchr(s, '\n')) != NULL; s = nl + 1)
		fprintf(p->f, "%.*s\n#     ", (int)(nl - s), s);
	fprintf(p->f, "%s\n", s);
}

/* Write KEY = "VALUE", under the supervisord option E it came from. */
void
svi_line(struct svi_prog *p, const struct ini_entry *e, const char *key,
    const char *value)
{
	char *q = svimport_quote(value);

	if (q == NULL && e != NULL) {
		svi_report(p->ctx, e->file, e->line, e->key,
		    "its value has a control character a job file cannot "
		    "hold");
		return;
	}
	if (q == NULL)
		return;
	svi_comment(p, e);
	fprintf(p->f, "%s = %s\n", key, q);
	free(q);
}

/* Write KEY = VALUE as it is (a boolean, a number, a list). */
void
svi_line_raw(struct svi_prog *p, const struct ini_entry *e, const char *key,
    const char *value)
{
	svi_comment(p, e);
	if (key != NULL)
		fprintf(p->f, "%s = %s\n", key, value);
}

/* Python's int() of a string: blanks around, a sign, '_' between digits. */
int
svi_number(const char *s, long long *n)
{
	char digits[32];
	size_t len = 0;
	int neg = 0;

	while (isspace((unsigned char)*s))
		s++;
	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	if (!isdigit((unsigned char)*s))
		return (-1);
	for (; isdigit((unsigned char)*s) || *s == '_'; s++) {
		if (*s == '_' && !isdigit((unsigned char)s[1]))
			return (-1);
		if (*s != '_' && len < sizeof digits - 1)
			digits[len++] = *s;
	}
	while (isspace((unsigned char)*s))
		s++;
	if (*s != '\0' || len >= 19)
		return (-1);
	digits[len] = '\0';
	*n = strtoll(digits, NULL, 10) * (neg ? -1 : 1);
	return (0);
}

/* supervisord's boolean(): yes/true/on/1 or no/false/off/0, any case. */
int
svi_boolean(const char *s, int *b)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };
	size_t i;

	for (i = 0; i < 4; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*b = 1;
			return (0);
		}
		if (strcasecmp(s, no[i]) == 0) {
			*b = 0;
			return (0);
		}
	}
	return (-1);
}

/*
 * A double-quoted job file string: \\ \" \n \t \r escaped, "${" kept
 * literal by the reader.  NULL for other control characters.
 */
char *
svimport_quote(const char *s)
{
	char *q = xmalloc(2 * strlen(s) + 3), *o = q;

	*o++ = '"';
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			*o++ = '\\';
		if (*s == '\n' || *s == '\t' || *s == '\r') {
			*o++ = '\\';
			*o++ = *s == '\n' ? 'n' : *s == '\t' ? 't' : 'r';
			continue;
		}
		if ((unsigned char)*s < 0x20 || *s == 0x7f) {
			free(q);
			return (NULL);
		}
		*o++ = *s;
	}
	*o++ = '"';
	*o = '\0';
	return (q);
}

/* See svimport.h. */
struct ini_var *
svimport_vars(const char *here, const char *host, char *const *env, size_t *n)
{
	struct ini_var *v;
	char *const *e;
	const char *eq;
	char *name;
	size_t k = 0;

	for (e = env; e != NULL && *e != NULL; e++)
		k++;
	v = xreallocarray(NULL, k + 2, sizeof *v);
	v[0] = (struct ini_var){ "here", INI_VAR_STRING, here, 0 };
	v[1] = (struct ini_var){ "host_node_name", INI_VAR_STRING, host, 0 };
	k = 2;
	for (e = env; e != NULL && *e != NULL; e++) {
		if ((eq = strchr(*e, '=')) == NULL)
			continue;
		xasprintf(&name, "ENV_%.*s", (int)(eq - *e), *e);
		v[k++] = (struct ini_var){ name, INI_VAR_STRING, eq + 1, 0 };
	}
	*n = k;
	return (v);
}

void
svimport_vars_free(struct ini_var *v, size_t n)
{
	size_t i;

	for (i = 2; i < n; i++)
		free((char *)v[i].name);
	free(v);
}

/* The expansions of every option: here, host_node_name, ENV_X. */
static struct ini_var *
svi_base_vars(struct svi_ctx *ctx, char **here, size_t *n)
{
	struct ini_var *v;
	size_t i;

	*here = ini_here(ctx->ini->files[0]);
	v = svimport_vars(*here, ctx->in->host, ctx->in->environ, n);
	for (i = 0; i < *n; i++)
		svi_vars_add(&ctx->base, v[i].name, v[i].kind, v[i].string, 0);
	return (v);
}

/* Options of [supervisord] with nothing to say: supervisord's own. */
static const char *const svi_sv_ignored[] = { "logfile", "logfile_maxbytes",
	"logfile_backups", "loglevel", "pidfile", "nodaemon", "silent",
	"identifier", "nocleanup", "childlogdir", NULL };

/* Why an option of [supervisord] is not translated, or NULL. */
static const char *
svi_sv_why(const char *key)
{
	if (strcmp(key, "minfds") == 0)
		return ("vigild does not raise its own limit: set "
		        "limit_nofile in the jobs that need it");
	if (strcmp(key, "minprocs") == 0)
		return ("vigild does not raise its own limit: set "
		        "limit_nproc or tasks_max in the jobs that need it");
	if (strcmp(key, "strip_ansi") == 0)
		return ("vigil writes the output as the job wrote it");
	return ("not a supervisord option vigil knows");
}

/*
 * The [supervisord] environment, expanded as supervisord does; its
 * variables are %(ENV_X)s for the programs from then on.
 */
static void
svi_sv_environment(struct svi_ctx *ctx, const struct ini_entry *e)
{
	char *cause = NULL, *v;
	size_t i;

	v = ini_expand(e->value, ctx->base.v, ctx->base.n, &cause);
	if (v != NULL) {
		ctx->env = pyshlex_pairs(v, &ctx->nenv, &cause);
		free(v);
	}
	if (cause != NULL) {
		svi_report(ctx, e->file, e->line, e->key,
		    "supervisord refuses it: %s", cause);
		free(cause);
		return;
	}
	ctx->env_names = xreallocarray(NULL, ctx->nenv + 1, sizeof(char *));
	for (i = 0; i < ctx->nenv; i++) {
		xasprintf(&ctx->env_names[i], "ENV_%.*s",
		    (int)strcspn(ctx->env[i], "="), ctx->env[i]);
		svi_vars_add(&ctx->base, ctx->env_names[i], INI_VAR_STRING,
		    strchr(ctx->env[i], '=') + 1, 0);
	}
	ctx->env_names[ctx->nenv] = NULL;
}

/* [supervisord]: what every program inherits, and what is reported. */
static void
svi_supervisord(struct svi_ctx *ctx, const struct ini_section *sec)
{
	const struct ini_entry *nd;
	int nodaemon = 0;
	size_t i, j;

	nd = ini_get(ctx->ini, sec, "nodaemon");
	if (nd != NULL && svi_boolean(nd->value, &nodaemon) == -1)
		nodaemon = 0;
	for (i = 0; i < sec->n; i++) {
		const struct ini_entry *e = &sec->entries[i];

		if (strcmp(e->key, "environment") == 0) {
			ctx->env_e = e;
			svi_sv_environment(ctx, e);
		} else if (strcmp(e->key, "user") == 0)
			ctx->user = e;
		else if (strcmp(e->key, "umask") == 0) {
			if (!nodaemon)
				ctx->umask = e;
		} else if (strcmp(e->key, "directory") == 0) {
			if (!nodaemon)
				ctx->directory = e;
		} else {
			for (j = 0; svi_sv_ignored[j] != NULL; j++)
				if (strcmp(e->key, svi_sv_ignored[j]) == 0)
					break;
			if (svi_sv_ignored[j] == NULL)
				svi_report(ctx, e->file, e->line, e->key, "%s",
				    svi_sv_why(e->key));
		}
	}
}

/* Is program NAME one not to translate? */
static int
svi_skipped(const struct svi_ctx *ctx, const char *name)
{
	char *const *s;

	for (s = ctx->in->skip; s != NULL && *s != NULL; s++)
		if (strcmp(*s, name) == 0)
			return (1);
	return (0);
}

/* S without the blanks around it, as Python's strip(). */
static char *
svi_strip(const char *s)
{
	size_t len;

	while (isspace((unsigned char)*s))
		s++;
	len = strlen(s);
	while (len > 0 && isspace((unsigned char)s[len - 1]))
		len--;
	return (xstrndup(s, len));
}

/* Does the comma-separated LIST (list_of_strings) name NAME? */
static int
svi_listed(const char *list, const char *name)
{
	const char *s = list, *c;
	char *item, *t;
	int found;

	for (;;) {
		c = strchr(s, ',');
		item = xstrndup(s, c == NULL ? strlen(s) : (size_t)(c - s));
		t = svi_strip(item);
		found = strcmp(t, name) == 0;
		free(item);
		free(t);
		if (found || c == NULL)
			return (found);
		s = c + 1;
	}
}

/*
 * The [group:x] that lists program NAME, if any: its name and priority.
 * supervisord makes the program's processes once for each group that
 * lists it; vigil has one job, in the first such group.
 */
static void
svi_group_of(struct svi_prog *p)
{
	const struct ini *ini = p->ctx->ini;
	const struct ini_entry *e;
	long long prio = 999;
	size_t i;

	for (i = 0; i < ini->nsections; i++) {
		const struct ini_section *g = &ini->sections[i];

		if (strncmp(g->name, "group:", 6) != 0 ||
		    (e = ini_get(ini, g, "programs")) == NULL ||
		    !svi_listed(e->value, p->name))
			continue;
		e = ini_get(ini, g, "priority");
		if (e != NULL && svi_number(e->value, &prio) == -1)
			prio = 999;
		p->group = svi_strip(g->name + 6);
		p->group_line = g->line;
		p->gprio = prio;
		return;
	}
}

/* Translate one [program:x]. */
static void
svi_program(struct svi_ctx *ctx, const struct ini_section *sec)
{
	const struct svi_prog *first;
	struct svi_prog *p;
	char *name, *opts;
	size_t len, i;

	name = svi_strip(sec->name + strlen("program:"));
	if (svi_skipped(ctx, name)) {
		free(name);
		return;
	}
	/* supervisord runs the first group of a name and drops the rest. */
	for (i = 0; i < ctx->nprogs; i++) {
		first = ctx->progs[i];
		if (strcmp(first->name, name) == 0) {
			svi_report(ctx, sec->file, sec->line, "",
			    "[%s] is already in %s:%d", first->sec->name,
			    first->sec->file, first->sec->line);
			free(name);
			return;
		}
	}
	p = xcalloc(1, sizeof *p);
	p->ctx = ctx;
	p->sec = sec;
	p->name = name;
	p->prio = 999;
	p->autostart = 1;
	p->numprocs = 1;
	svi_group_of(p);
	if (p->group == NULL)
		p->group = xstrdup(p->name);
	/* The processes' options first in the file, then the others. */
	if ((p->f = open_memstream(&opts, &len)) == NULL)
		abort();
	svi_prog_options(p);
	fclose(p->f);
	if (p->group_line == 0)
		p->gprio = p->prio;
	if ((p->f = open_memstream(&p->body, &p->bodylen)) == NULL)
		abort();
	/* ".x.conf" would be a hidden file, "-x" an option to vigilctl. */
	if (!conf_name_is_valid(p->name) || p->name[0] == '.' ||
	    p->name[0] == '-') {
		svi_report(ctx, sec->file, sec->line, "",
		    "'%s' is not a vigil job name%s", p->name,
		    conf_name_is_valid(p->name) ?
		        " (it starts with '.' or '-')" :
		        "");
		p->failed = 1;
	} else
		svi_prog_process(p);
	fputs(opts, p->f);
	free(opts);
	fclose(p->f);
	p->f = NULL;
	ctx->progs =
	    xreallocarray(ctx->progs, ctx->nprogs + 1, sizeof *ctx->progs);
	ctx->progs[ctx->nprogs++] = p;
}

/* The report, or nothing, for a section that is not a program. */
static void
svi_other_section(struct svi_ctx *ctx, const struct ini_section *sec)
{
	static const char *const ignored[] = { "supervisord", "include",
		"unix_http_server", "supervisorctl", NULL };
	const char *why = NULL;
	size_t i;

	for (i = 0; ignored[i] != NULL; i++)
		if (strcmp(sec->name, ignored[i]) == 0)
			return;
	/* supervisorctl's plugins: nothing for supervisord. */
	if (strncmp(sec->name, "rpcinterface:", 13) == 0 ||
	    strncmp(sec->name, "ctlplugin:", 10) == 0)
		return;
	if (strncmp(sec->name, "group:", 6) == 0)
		why = "vigil has no groups: name the programs together, as in "
		      "`vigilctl restart a b`; the group's priority orders "
		      "their start";
	else if (strncmp(sec->name, "eventlistener:", 14) == 0)
		why = "vigil has no event listener protocol: run it as a job "
		      "of its own, and follow state changes with `vigilctl "
		      "history`, `vigilctl wait` or `vigilctl status --json`";
	else if (strncmp(sec->name, "fcgi-program:", 13) == 0)
		why = "vigil does not open sockets for its jobs";
	else if (strcmp(sec->name, "inet_http_server") == 0)
		why = "vigilctl talks to vigild over its unix socket only";
	else
		why = "not a section supervisord knows";
	svi_report(ctx, sec->file, sec->line, "", "%s", why);
}

/* Compare two programs' start levels: (group priority, priority). */
static int
svi_level_cmp(const struct svi_prog *a, const struct svi_prog *b)
{
	if (a->gprio != b->gprio)
		return (a->gprio < b->gprio ? -1 : 1);
	if (a->prio != b->prio)
		return (a->prio < b->prio ? -1 : 1);
	return (0);
}

/*
 * supervisord starts groups in the order of their priorities, and a
 * group's processes in the order of theirs.  Each autostarted program
 * depends on the autostarted programs of the nearest lower level, so
 * vigild starts them in the same order (and stops them in the reverse).
 * Only where there are two levels or more.
 */
static void
svi_depends(struct svi_ctx *ctx, struct svi_prog *p, FILE *f)
{
	const struct svi_prog *best = NULL;
	size_t i;
	int first = 1;

	if (!p->autostart)
		return;
	for (i = 0; i < ctx->nprogs; i++) {
		const struct svi_prog *q = ctx->progs[i];

		if (q->failed || !q->autostart || svi_level_cmp(q, p) >= 0)
			continue;
		if (best == NULL || svi_level_cmp(q, best) > 0)
			best = q;
	}
	if (best == NULL)
		return;
	fprintf(f,
	    "# priority: supervisord starts %s after the lower "
	    "priorities\ndepends = {",
	    p->name);
	for (i = 0; i < ctx->nprogs; i++) {
		const struct svi_prog *q = ctx->progs[i];

		if (q->failed || !q->autostart || svi_level_cmp(q, best) != 0)
			continue;
		fprintf(f, "%s\"%s\"", first ? "" : ", ", q->name);
		first = 0;
	}
	fprintf(f, "}\n");
}

/* The job file of P: a header, its body, its depends. */
static void
svi_job(struct svi_ctx *ctx, struct svi_prog *p)
{
	struct svimport_out *out = ctx->out;
	struct svimport_job *job;
	size_t len;
	FILE *f;

	out->jobs = xreallocarray(out->jobs, out->njobs + 1, sizeof *out->jobs);
	job = &out->jobs[out->njobs++];
	job->name = xstrdup(p->name);
	job->file = xstrdup(p->sec->file);
	job->line = p->sec->line;
	if ((f = open_memstream(&job->text, &len)) == NULL)
		abort();
	fprintf(f,
	    "# Imported from supervisord's [%s] (%s:%d) by vigilctl import.\n"
	    "# Above each line, the supervisord option it was made from.\n",
	    p->sec->name, p->sec->file, p->sec->line);
	fputs(p->body, f);
	svi_depends(ctx, p, f);
	fclose(f);
}

static void
svi_prog_free(struct svi_prog *p)
{
	free(p->name);
	free(p->group);
	free(p->body);
	free(p->out_stdout);
	free(p->out_stderr);
	svi_vars_clear(&p->vars);
	while (p->nnames > 0)
		free(p->names[--p->nnames]);
	free(p->names);
	words_free(p->pairs);
	free(p);
}

void
svimport_translate(const struct ini *ini, const struct svimport_in *in,
    struct svimport_out *out)
{
	struct svi_ctx ctx;
	struct ini_var *base;
	char *here;
	size_t nbase;
	size_t i;

	memset(&ctx, 0, sizeof ctx);
	ctx.ini = ini;
	ctx.in = in;
	ctx.out = out;
	base = svi_base_vars(&ctx, &here, &nbase);
	for (i = 0; i < ini->nsections; i++)
		if (strcmp(ini->sections[i].name, "supervisord") == 0)
			svi_supervisord(&ctx, &ini->sections[i]);
	for (i = 0; i < ini->nsections; i++) {
		if (strncmp(ini->sections[i].name, "program:", 8) == 0)
			svi_program(&ctx, &ini->sections[i]);
		else
			svi_other_section(&ctx, &ini->sections[i]);
	}
	for (i = 0; i < ctx.nprogs; i++)
		if (!ctx.progs[i]->failed)
			svi_job(&ctx, ctx.progs[i]);
	for (i = 0; i < ctx.nprogs; i++)
		svi_prog_free(ctx.progs[i]);
	free(ctx.progs);
	words_free(ctx.env);
	words_free(ctx.env_names);
	svi_vars_clear(&ctx.base);
	svimport_vars_free(base, nbase);
	free(here);
}

void
svimport_out_clear(struct svimport_out *out)
{
	size_t i;

	for (i = 0; i < out->njobs; i++) {
		free(out->jobs[i].name);
		free(out->jobs[i].text);
		free(out->jobs[i].file);
	}
	free(out->jobs);
	for (i = 0; i < out->nreports; i++)
		free(out->reports[i]);
	free(out->reports);
	memset(out, 0, sizeof *out);
}
