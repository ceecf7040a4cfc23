/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The options supervisord reads once for each process of a program:
 * numprocs (vigil's instances), environment, directory, command and the
 * log files.  They may use %(process_num)s, which ini_expand leaves as a
 * marker; a job whose command, environment or directory holds one runs
 * its command through a small sh script that computes the number from
 * VIGIL_INSTANCE (numprocs_start added) with the same printf conversion,
 * sets what depends on it and execs the command, so that each instance
 * gets exactly the argv, environment and directory supervisord would
 * have given that process.
 */

#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "ini.h"
#include "pyshlex.h"
#include "svimport-int.h"
#include "words.h"
#include "xmalloc.h"

/* The most distinct %(process_num) conversions one program may use. */
#define SVI_MARKS_MAX 8

/* What one program's processes are made of. */
struct svi_proc {
	char **env; /* "K=V": [supervisord]'s, then the program's */
	size_t nenv;
	const struct ini_entry *env_e;
	char *dir;
	const struct ini_entry *dir_e;
	char *cmd; /* expanded */
	char **argv;
	size_t argc;
	const struct ini_entry *cmd_e;
	char *marks[SVI_MARKS_MAX]; /* the printf conversions, "%02d" */
	size_t nmarks;
};

/* Set KEY=value in ENV, replacing an earlier KEY in place. */
static void
svi_env_set(struct svi_proc *pr, const char *kv)
{
	size_t klen = strcspn(kv, "="), i;

	for (i = 0; i < pr->nenv; i++)
		if (strncmp(pr->env[i], kv, klen + 1) == 0) {
			free(pr->env[i]);
			pr->env[i] = xstrdup(kv);
			return;
		}
	pr->env = xreallocarray(pr->env, pr->nenv + 2, sizeof *pr->env);
	pr->env[pr->nenv++] = xstrdup(kv);
	pr->env[pr->nenv] = NULL;
}

/* numprocs, numprocs_start and process_name: instances. */
static int
svi_numprocs(struct svi_prog *p)
{
	const struct ini_entry *e, *ne;
	long long n = 1;
	char *v, buf[32];

	if ((v = svi_get(p, "numprocs", &ne)) != NULL &&
	    (svi_number(v, &n) == -1 || n < 1 || n > 1000)) {
		/* No job rather than one with another number of processes. */
		svi_report(p->ctx, ne->file, ne->line, ne->key,
		    "%s: vigil runs 1 to 1000 instances; no job made", v);
		free(v);
		return (-1);
	}
	free(v);
	p->numprocs = (int)n;
	if ((v = svi_get(p, "numprocs_start", &e)) != NULL &&
	    svi_number(v, &p->numprocs_start) == -1)
		svi_report(p->ctx, e->file, e->line, e->key, "not a number");
	free(v);
	e = ini_get(p->ctx->ini, p->sec, "process_name");
	if (n > 1 &&
	    (e == NULL || strstr(e->value, "%(process_num)") == NULL)) {
		svi_report(p->ctx, p->sec->file, p->sec->line, "",
		    "supervisord refuses it: numprocs > 1 needs "
		    "%%(process_num) in process_name");
		return (-1);
	}
	if (e != NULL && strcmp(e->value, "%(program_name)s") != 0)
		svi_report(p->ctx, e->file, e->line, e->key,
		    n > 1 ? "the instances are called %s@0 to %s@%lld" :
		            "the job is called %s%.0s%.0lld",
		    p->name, p->name, n - 1);
	if (n > 1) {
		snprintf(buf, sizeof buf, "%lld", n);
		svi_line_raw(p, ne, "instances", buf);
	}
	return (0);
}

/* The environment: [supervisord]'s, then the program's own. */
static void
svi_environment(struct svi_prog *p, struct svi_proc *pr)
{
	struct svi_ctx *ctx = p->ctx;
	char **pairs, *v, *cause = NULL, *name;
	size_t i, n;

	for (i = 0; i < ctx->nenv; i++)
		svi_env_set(pr, ctx->env[i]);
	if ((v = svi_get(p, "environment", &pr->env_e)) == NULL)
		return;
	pairs = pyshlex_pairs(v, &n, &cause);
	free(v);
	if (pairs == NULL) {
		svi_report(ctx, pr->env_e->file, pr->env_e->line,
		    pr->env_e->key, "supervisord refuses it: %s", cause);
		free(cause);
		return;
	}
	for (i = 0; i < n; i++) {
		svi_env_set(pr, pairs[i]);
		/* The program's own variables are %(ENV_X)s from now on. */
		xasprintf(
		    &name, "ENV_%.*s", (int)strcspn(pairs[i], "="), pairs[i]);
		svi_vars_add(&p->vars, name, INI_VAR_STRING,
		    strchr(pairs[i], '=') + 1, 0);
		p->names =
		    xreallocarray(p->names, p->nnames + 1, sizeof *p->names);
		p->names[p->nnames++] = name;
	}
	p->pairs = pairs;
}

/*
 * The marker at M (just past INI_MARK_OPEN) as a printf format of sh's
 * printf into FMT, or -1 when the conversion has no such form (Python's
 * '#', a space-padded width, a non-integer type).  *NEXT is past it.
 */
static int
svi_mark_fmt(const char *m, char *fmt, size_t size, const char **next)
{
	const char *end = strstr(m, INI_MARK_CLOSE);
	char spec[32];
	size_t i, len;
	int c;

	if (end == NULL) { /* not from ini_expand(), which closes each */
		*next = m;
		return (-1);
	}
	len = (size_t)(end - m) / 2;
	*next = end + strlen(INI_MARK_CLOSE);
	if (len >= sizeof spec)
		return (-1);
	for (i = 0; i < len; i++) {
		if (sscanf(m + 2 * i, "%2x", (unsigned int *)&c) != 1)
			return (-1);
		spec[i] = (char)c;
	}
	spec[len] = '\0';
	i = strspn(spec, "-0 +");
	i += strspn(spec + i, "0123456789");
	if (spec[i] == '.')
		i += 1 + strspn(spec + i + 1, "0123456789");
	len = i;
	i += strspn(spec + i, "hlL");
	if (spec[i] == '\0' || strchr("diouxXsra", spec[i]) == NULL ||
	    spec[i + 1] != '\0' || strchr(spec, ' ') != NULL ||
	    (isdigit((unsigned char)spec[0]) && spec[0] != '0'))
		return (-1);
	c = strchr("diusra", spec[i]) != NULL ? 'd' : spec[i];
	snprintf(fmt, size, "%%%.*s%c", (int)len, spec, c);
	return (0);
}

/* The index of marker conversion FMT in PR, or -1. */
static int
svi_mark_index(const struct svi_proc *pr, const char *fmt)
{
	size_t i;

	for (i = 0; i < pr->nmarks; i++)
		if (strcmp(pr->marks[i], fmt) == 0)
			return ((int)i);
	return (-1);
}

/* Remember the printf conversion of each marker in S. */
static int
svi_marks(struct svi_prog *p, struct svi_proc *pr, const char *s,
    const struct ini_entry *e)
{
	char fmt[40];

	while ((s = strstr(s, INI_MARK_OPEN)) != NULL) {
		if (svi_mark_fmt(
		        s + strlen(INI_MARK_OPEN), fmt, sizeof fmt, &s) == -1) {
			svi_report(p->ctx, e->file, e->line, e->key,
			    "a %%(process_num) conversion that sh's printf "
			    "does not write as Python does");
			return (-1);
		}
		if (svi_mark_index(pr, fmt) != -1)
			continue;
		if (pr->nmarks == SVI_MARKS_MAX) {
			svi_report(p->ctx, e->file, e->line, e->key,
			    "too many ways to write %%(process_num)");
			return (-1);
		}
		pr->marks[pr->nmarks++] = xstrdup(fmt);
	}
	return (0);
}

/* The directory, which must be absolute for vigil. */
static int
svi_directory(struct svi_prog *p, struct svi_proc *pr)
{
	pr->dir = svi_get(p, "directory", &pr->dir_e);
	if (pr->dir == NULL && pr->dir_e == NULL &&
	    (pr->dir_e = p->ctx->directory) != NULL)
		pr->dir =
		    ini_expand(pr->dir_e->value, p->vars.v, p->vars.n, NULL);
	if (pr->dir == NULL)
		return (0);
	if (pr->dir[0] != '/') {
		svi_report(p->ctx, pr->dir_e->file, pr->dir_e->line,
		    pr->dir_e->key, "vigil needs an absolute directory");
		free(pr->dir);
		pr->dir = NULL;
		return (0);
	}
	return (svi_marks(p, pr, pr->dir, pr->dir_e));
}

/* The command, split as supervisord splits it. */
static int
svi_command(struct svi_prog *p, struct svi_proc *pr)
{
	char *v, *cause = NULL;
	size_t i;

	v = svi_get(p, "command", &pr->cmd_e);
	if (v == NULL) {
		if (pr->cmd_e == NULL)
			svi_report(p->ctx, p->sec->file, p->sec->line, "",
			    "supervisord refuses it: no command");
		return (-1);
	}
	pr->cmd = v;
	pr->argv = pyshlex_split(v, &pr->argc, &cause);
	if (pr->argv == NULL || pr->argc == 0) {
		svi_report(p->ctx, pr->cmd_e->file, pr->cmd_e->line,
		    pr->cmd_e->key, "supervisord refuses it: %s",
		    cause != NULL ? cause : "an empty command");
		free(cause);
		return (-1);
	}
	for (i = 0; i < pr->argc; i++) {
		if ((v = svimport_quote(pr->argv[i])) == NULL) {
			svi_report(p->ctx, pr->cmd_e->file, pr->cmd_e->line,
			    pr->cmd_e->key,
			    "a control character a job file cannot hold");
			return (-1);
		}
		free(v);
		if (svi_marks(p, pr, pr->argv[i], pr->cmd_e) == -1)
			return (-1);
	}
	return (0);
}

/* S as one sh word: single-quoted, each marker as "$nK". */
static void
svi_sh_word(FILE *f, const struct svi_proc *pr, const char *s)
{
	char fmt[40];
	int quoted = 0, any = 0;

	while (*s != '\0') {
		if (strncmp(s, INI_MARK_OPEN, strlen(INI_MARK_OPEN)) == 0 &&
		    svi_mark_fmt(
		        s + strlen(INI_MARK_OPEN), fmt, sizeof fmt, &s) == 0) {
			fprintf(f, "%s\"$n%d\"", quoted ? "'" : "",
			    svi_mark_index(pr, fmt));
			quoted = 0;
			any = 1;
			continue;
		}
		if (!quoted)
			fputc('\'', f);
		quoted = any = 1;
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
		s++;
	}
	if (quoted)
		fputc('\'', f);
	else if (!any)
		fputs("''", f);
}

/* The entry that set KV: the program's environment or [supervisord]'s. */
static const struct ini_entry *
svi_env_origin(struct svi_prog *p, struct svi_proc *pr, const char *kv)
{
	size_t i;

	for (i = 0; p->pairs != NULL && p->pairs[i] != NULL; i++) {
		if (strcmp(p->pairs[i], kv) == 0)
			return (pr->env_e);
	}
	return (pr->env_e != NULL && p->ctx->env_e == NULL ? pr->env_e :
	                                                     p->ctx->env_e);
}

static int
svi_has_mark(const char *s)
{
	return (strstr(s, INI_MARK_OPEN) != NULL);
}

/* Write the environment variables with (MARKED) or without markers. */
static void
svi_env_list(struct svi_prog *p, struct svi_proc *pr)
{
	const struct ini_entry *e;
	size_t i, len = 0;
	char *q, *list;
	int first = 1;
	FILE *f;

	if ((f = open_memstream(&list, &len)) == NULL)
		abort();
	fputc('{', f);
	for (i = 0; i < pr->nenv; i++) {
		if (svi_has_mark(pr->env[i]))
			continue;
		if ((q = svimport_quote(pr->env[i])) == NULL) {
			e = svi_env_origin(p, pr, pr->env[i]);
			svi_report(p->ctx, e->file, e->line, e->key,
			    "a value with a control character a job file "
			    "cannot hold");
			continue;
		}
		fprintf(f, "%s%s", first ? "" : ", ", q);
		free(q);
		first = 0;
	}
	fputc('}', f);
	fclose(f);
	if (!first) {
		if (p->ctx->env_e != NULL)
			svi_line_raw(p, p->ctx->env_e, NULL, NULL);
		svi_line_raw(p, pr->env_e, "environment", list);
	}
	free(list);
}

/* The sh script of a job whose processes differ by process_num. */
static char *
svi_script(struct svi_prog *p, struct svi_proc *pr)
{
	char *script;
	size_t i, len = 0;
	FILE *f;

	if ((f = open_memstream(&script, &len)) == NULL)
		abort();
	for (i = 0; i < pr->nmarks; i++)
		fprintf(f, "n%zu=$(printf '%s' $((VIGIL_INSTANCE + %lld))); ",
		    i, pr->marks[i], p->numprocs_start);
	if (pr->dir != NULL && svi_has_mark(pr->dir)) {
		fputs("cd ", f);
		svi_sh_word(f, pr, pr->dir);
		fputs(" || exit 1; ", f);
	}
	fputs("unset PWD OLDPWD; ", f);
	for (i = 0; i < pr->nenv; i++) {
		if (!svi_has_mark(pr->env[i]))
			continue;
		fprintf(f, "export %.*s=", (int)strcspn(pr->env[i], "="),
		    pr->env[i]);
		svi_sh_word(f, pr, strchr(pr->env[i], '=') + 1);
		fputs("; ", f);
	}
	fputs("exec", f);
	for (i = 0; i < pr->argc; i++) {
		fputc(' ', f);
		svi_sh_word(f, pr, pr->argv[i]);
	}
	fclose(f);
	return (script);
}

/* command = "string" when vigil splits it as supervisord did, or a list. */
static void
svi_command_line(struct svi_prog *p, struct svi_proc *pr)
{
	char **w, *q, *list, *script = NULL;
	size_t i, n, len = 0;
	int same;
	FILE *f;

	if (pr->nmarks == 0) {
		w = words_split(pr->cmd, &n, NULL);
		same = w != NULL && n == pr->argc;
		for (i = 0; same && i < n; i++)
			same = strcmp(w[i], pr->argv[i]) == 0;
		words_free(w);
		if (same) {
			svi_line(p, pr->cmd_e, "command", pr->cmd);
			return;
		}
	}
	if ((f = open_memstream(&list, &len)) == NULL)
		abort();
	if (pr->nmarks > 0) {
		script = svi_script(p, pr);
		fprintf(f, "{\"/bin/sh\", \"-c\", ");
	} else
		fputc('{', f);
	for (i = 0; i < (script != NULL ? 2 : pr->argc); i++) {
		q = svimport_quote(
		    script != NULL ? (i == 0 ? script : p->name) : pr->argv[i]);
		fprintf(f, "%s%s", i == 0 ? "" : ", ", q);
		free(q);
	}
	fputc('}', f);
	fclose(f);
	if (script != NULL)
		fprintf(p->f,
		    "# %%(process_num) as each instance's number, "
		    "VIGIL_INSTANCE + %lld\n",
		    p->numprocs_start);
	svi_line_raw(p, pr->cmd_e, "command", list);
	free(list);
	free(script);
}

/* supervisord's byte_size(): a number of bytes, or KB, MB, GB of them. */
static int
svi_bytes(const char *v, long long *n)
{
	static const char *const suffix[] = { "kb", "mb", "gb" };
	long long mult = 1;
	char buf[64];
	size_t len, i;

	snprintf(buf, sizeof buf, "%s", v);
	len = strlen(buf);
	for (i = 0; i < 3; i++)
		if (len >= 2 && strcasecmp(buf + len - 2, suffix[i]) == 0) {
			buf[len - 2] = '\0';
			mult = 1LL << (10 * (i + 1));
			break;
		}
	if (svi_number(buf, n) == -1 || *n < 0 || *n > (1LL << 40))
		return (-1);
	*n *= mult;
	return (0);
}

/*
 * Where one stream goes: "file" (AUTO, supervisord's default, and any
 * path: vigil's log is LOG_DIR/NAME.log), "null" (NONE), "journal"
 * (syslog) or "inherit" (/dev/stdout, /dev/stderr).
 */
static const char *
svi_stream(struct svi_prog *p, const char *which, const struct ini_entry **ep)
{
	const struct ini_entry *e;
	const char *kind = "file";
	char key[32], *v;
	int b;

	snprintf(key, sizeof key, "%s_logfile", which);
	if ((v = svi_get(p, key, ep)) != NULL) {
		if (strcasecmp(v, "none") == 0 || strcasecmp(v, "off") == 0)
			kind = "null";
		else if (strcasecmp(v, "syslog") == 0)
			kind = "journal";
		else if (strcmp(v, "/dev/stdout") == 0 ||
		    strcmp(v, "/dev/stderr") == 0) {
			kind = "inherit";
			/* vigil's inherit is vigild's own stream of that name */
			if (strcmp(v + 5, which) != 0)
				svi_report(p->ctx, (*ep)->file, (*ep)->line,
				    key,
				    "vigil's inherit gives the %s "
				    "vigild's own %s, not %s",
				    which, which, v);
		} else if (strcasecmp(v, "auto") != 0)
			svi_report(p->ctx, (*ep)->file, (*ep)->line, key,
			    "vigil writes the output to LOG_DIR/%s.log",
			    p->name);
		free(v);
	}
	snprintf(key, sizeof key, "%s_syslog", which);
	if ((v = svi_get(p, key, &e)) != NULL && svi_boolean(v, &b) == 0 && b) {
		/* supervisord writes both; vigil's output goes one way. */
		if (strcmp(kind, "null") != 0 && strcmp(kind, "journal") != 0)
			svi_report(p->ctx, e->file, e->line, key,
			    "vigil sends the output to the journal only, "
			    "not also to %s",
			    strcmp(kind, "file") == 0 ? "a log file" :
			                                "vigild's own stream");
		kind = "journal";
		*ep = e;
	}
	free(v);
	return (kind);
}

/* The log size and the rotated files kept, from WHICH's options. */
static void
svi_logsize(struct svi_prog *p, const char *which)
{
	const struct ini_entry *e;
	char key[40], buf[32], *v;
	long long n;

	snprintf(key, sizeof key, "%s_logfile_maxbytes", which);
	if ((v = svi_get(p, key, &e)) != NULL) {
		if (svi_bytes(v, &n) == -1)
			svi_report(p->ctx, e->file, e->line, key,
			    "supervisord refuses it: not a size");
		else if (n > 0 && n < 1024)
			svi_report(p->ctx, e->file, e->line, key,
			    "vigil's smallest log_max_size is 1K");
		else {
			snprintf(buf, sizeof buf, "%lld%s",
			    n % 1024 == 0 && n > 0 ? n / 1024 : n,
			    n % 1024 == 0 && n > 0 ? "K" : "");
			svi_line(p, e, "log_max_size", buf);
		}
	}
	free(v);
	snprintf(key, sizeof key, "%s_logfile_backups", which);
	if ((v = svi_get(p, key, &e)) != NULL) {
		if (svi_number(v, &n) == -1 || n < 0 || n > 1000)
			svi_report(p->ctx, e->file, e->line, key,
			    "vigil keeps 0 to 1000 rotated files");
		else {
			snprintf(buf, sizeof buf, "%lld", n);
			svi_line_raw(p, e, "log_keep", buf);
		}
	}
	free(v);
}

/* stdout, stderr and the log file's size. */
static void
svi_output(struct svi_prog *p)
{
	const struct ini_entry *oe = NULL, *ee = NULL;
	const char *out, *err;

	out = svi_stream(p, "stdout", &oe);
	err = p->redirect_stderr ? out : svi_stream(p, "stderr", &ee);
	if (strcmp(out, "file") != 0)
		svi_line(p, oe, "stdout", out);
	if (strcmp(err, "file") != 0)
		svi_line(p, p->redirect_stderr ? oe : ee, "stderr", err);
	if (!p->redirect_stderr && strcmp(err, "file") == 0)
		fprintf(p->f,
		    strcmp(out, "file") == 0 ?
		        "# stderr goes to the same log file as stdout "
		        "(supervisord keeps one of its own)\n" :
		        "# stderr goes to the job's log file, LOG_DIR/%s.log\n",
		    p->name);
	svi_logsize(p, strcmp(out, "file") == 0 ? "stdout" : "stderr");
	if (strcmp(out, "file") == 0 && strcmp(err, "file") == 0 &&
	    !p->redirect_stderr) {
		const struct ini_entry *a, *b;
		size_t i;
		static const char *const keys[][2] = {
			{ "stdout_logfile_maxbytes",
			    "stderr_logfile_maxbytes" },
			{ "stdout_logfile_backups", "stderr_logfile_backups" },
		};

		for (i = 0; i < 2; i++) {
			a = ini_get(p->ctx->ini, p->sec, keys[i][0]);
			b = ini_get(p->ctx->ini, p->sec, keys[i][1]);
			if (b != NULL &&
			    (a == NULL || strcmp(a->value, b->value) != 0))
				svi_report(p->ctx, b->file, b->line, b->key,
				    "vigil has one log file per job, "
				    "rotated as %s says",
				    keys[i][0]);
		}
	}
}

static void
svi_proc_clear(struct svi_proc *pr)
{
	size_t i;

	words_free(pr->env);
	free(pr->dir);
	free(pr->cmd);
	words_free(pr->argv);
	for (i = 0; i < pr->nmarks; i++)
		free(pr->marks[i]);
}

/*
 * The job's instances, command, environment and directory, as
 * supervisord makes its processes; p->failed when there is no command.
 */
void
svi_prog_process(struct svi_prog *p)
{
	struct svi_proc pr;
	size_t i;

	memset(&pr, 0, sizeof pr);
	if (svi_numprocs(p) == -1) {
		p->failed = 1;
		return;
	}
	svi_vars_add(&p->vars, "process_num", INI_VAR_MARK, NULL, 0);
	svi_vars_add(&p->vars, "numprocs", INI_VAR_NUMBER, NULL, p->numprocs);
	svi_environment(p, &pr);
	for (i = 0; i < pr.nenv; i++)
		if (svi_marks(p, &pr, pr.env[i], pr.env_e) == -1)
			p->failed = 1;
	if (p->failed || svi_directory(p, &pr) == -1 ||
	    svi_command(p, &pr) == -1) {
		p->failed = 1;
		svi_proc_clear(&pr);
		return;
	}
	svi_command_line(p, &pr);
	if (pr.dir != NULL && !svi_has_mark(pr.dir))
		svi_line(p, pr.dir_e, "directory", pr.dir);
	svi_env_list(p, &pr);
	svi_output(p);
	fprintf(p->f,
	    "# supervisord gives its processes a pipe as stdin\n"
	    "stdin = \"pipe\"\n");
	svi_proc_clear(&pr);
}
