/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Reading one configuration file, vigil.conf or a job file, into its
 * struct following a table of fields (conf-field.c).
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
 *
 * A file may have one section, "name { option = value ... }" (vigil.conf's
 * cluster), read through a context of its own (ctx->sub) with its own
 * table of fields.  The callbacks track the options of its first copy; a
 * second copy is an error.  libconfuse keeps no line for a section
 * either, so the pre-processor notes the line of each section's name.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <confuse.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "conf-int.h"
#include "log.h"
#include "xmalloc.h"

#define CONF_FILE_MAX (1024 * 1024)
#define CONF_PP_SECTIONS 2 /* the first, and a second to report */
#define CONF_SYNTAX_MAX 20 /* syntax errors reported per file, at most */

static struct conf_ctx *conf_current;

/* ------------------------------------------------------------------ */
/* Context, libconfuse callbacks and error reporting. */

/* The first copy of the file's section, or NULL (none, or no parse yet). */
static cfg_t *
conf_ctx_first_section(struct conf_ctx *ctx)
{
	if (ctx->sub == NULL || ctx->cfg == NULL)
		return (NULL);
	return (cfg_opt_getnsec(
	    cfg_getnopt(ctx->cfg, (unsigned int)ctx->nfields), 0));
}

/*
 * The tracking slot of opt, an option of cfg (the file being parsed or
 * the first copy of its section), or NULL.
 */
static struct conf_track *
conf_track_of(cfg_t *cfg, cfg_opt_t *opt)
{
	struct conf_ctx *ctx = conf_current;
	size_t i;

	if (ctx == NULL)
		return (NULL);
	if (cfg != ctx->cfg) {
		if (cfg == NULL || cfg != conf_ctx_first_section(ctx))
			return (NULL);
		ctx = ctx->sub;
	}
	if (opt < cfg->opts)
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

/*
 * libconfuse error callback: add "FILE:LINE: message" to the errors, or
 * "FILE:LINE: section: message" for an error inside a section.
 */
static void __attribute__((format(printf, 2, 0)))
conf_cb_error(cfg_t *cfg, const char *fmt, va_list ap)
{
	struct conf_ctx *ctx = conf_current;
	const char *section = "";
	char *msg;

	if (ctx == NULL)
		return;
	if (cfg != NULL && cfg->line > 0)
		ctx->err_line = cfg->line;
	if (vasprintf(&msg, fmt, ap) == -1)
		fatalx("%s: out of memory", __func__);
	if (cfg != NULL && cfg != ctx->cfg && ctx->sub != NULL)
		section = ctx->sub->section;
	if (cfg != NULL && cfg->line > 0)
		conf_errors_add(ctx->errs, "%s:%d: %s%s%s", ctx->path,
		    cfg->line, section, *section != '\0' ? ": " : "", msg);
	else
		conf_errors_add(ctx->errs, "%s: %s%s%s", ctx->path, section,
		    *section != '\0' ? ": " : "", msg);
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
int
conf_ctx_line(struct conf_ctx *ctx, const char *name)
{
	size_t i = conf_ctx_index(ctx, name);

	return (i < ctx->nfields ? ctx->track[i].line : 0);
}

/* Was option name set in the file? */
int
conf_ctx_given(struct conf_ctx *ctx, const char *name)
{
	size_t i = conf_ctx_index(ctx, name);
	cfg_opt_t *opt;

	if (i == ctx->nfields || (opt = cfg_getnopt(ctx->cfg, i)) == NULL)
		return (0);
	return (opt->nvalues > 0 || (opt->flags & CFGF_MODIFIED) != 0);
}

/*
 * Add "FILE:LINE: option: message" (or "FILE: option: ...") to errs.  In
 * a section's context it is "FILE:LINE: section: option: message", at the
 * section's line if the option was not set; option NULL leaves it out, for
 * an error about the whole section.
 */
void
conf_ctx_error(struct conf_ctx *ctx, const char *option, const char *fmt, ...)
{
	va_list ap;
	char *msg, *where;
	int line = 0;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) == -1)
		fatalx("%s: out of memory", __func__);
	va_end(ap);
	if (option != NULL)
		line = conf_ctx_line(ctx, option);
	if (line == 0)
		line = ctx->line;
	xasprintf(&where, "%s%s%s%s", ctx->section != NULL ? ctx->section : "",
	    ctx->section != NULL ? ": " : "", option != NULL ? option : "",
	    option != NULL ? ": " : "");
	if (line > 0)
		conf_errors_add(
		    ctx->errs, "%s:%d: %s%s", ctx->path, line, where, msg);
	else
		conf_errors_add(ctx->errs, "%s: %s%s", ctx->path, where, msg);
	free(where);
	free(msg);
}

/* Has the file of ctx had errors so far? */
int
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
void
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
/* Reading one file. */

/* Prepare ctx to read path into obj following fields. */
void
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

/*
 * Build libconfuse's option table for ctx: strings without defaults, then
 * the section (any number of copies, so that a second one can be told)
 * with its own.  Free it with conf_ctx_opts_free once cfg_init has copied
 * it.
 */
static cfg_opt_t *
conf_ctx_opts(struct conf_ctx *ctx)
{
	cfg_opt_t str = CFG_STR("", NULL, CFGF_NODEFAULT);
	cfg_opt_t list = CFG_STR_LIST("", NULL, CFGF_NODEFAULT);
	cfg_opt_t sec = CFG_SEC("", NULL, CFGF_MULTI);
	cfg_opt_t end = CFG_END();
	cfg_opt_t *opts;
	size_t i;

	opts = xcalloc(ctx->nfields + 2, sizeof *opts);
	for (i = 0; i < ctx->nfields; i++) {
		opts[i] = ctx->fields[i].list ? list : str;
		opts[i].name = ctx->fields[i].name;
		opts[i].parsecb = conf_cb_parse;
		opts[i].validcb = conf_cb_validate;
	}
	if (ctx->sub != NULL) {
		opts[i] = sec;
		opts[i].name = ctx->sub->section;
		opts[i++].subopts = conf_ctx_opts(ctx->sub);
	}
	opts[i] = end;
	return (opts);
}

/* Free an option table of conf_ctx_opts. */
static void
conf_ctx_opts_free(cfg_opt_t *opts)
{
	size_t i;

	for (i = 0; opts[i].name != NULL; i++) {
		if (opts[i].subopts != NULL)
			conf_ctx_opts_free(opts[i].subopts);
	}
	free(opts);
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
	const char *last;    /* the last character of the last token, or NULL */
	const char *counted; /* the output is counted in lines up to here */
	int line;            /* the line of counted */
	int depth;           /* braces open */
	int sections[CONF_PP_SECTIONS]; /* the line of each section's name */
	size_t nsections;
};

/* The line of p, in the output at or after pp->counted. */
static int
conf_pp_line(struct conf_pp *pp, const char *p)
{
	for (; pp->counted < p; pp->counted++) {
		if (*pp->counted == '\n')
			pp->line++;
	}
	return (pp->line);
}

/*
 * Copy a character that is not in a string or a comment.  A top-level
 * opening brace that does not follow "=" or "+=", which open a list, opens
 * a section: note the line of the section's name.
 */
static void
conf_pp_char(struct conf_pp *pp)
{
	if (*pp->s == '{') {
		if (pp->depth++ == 0 && pp->last != NULL && *pp->last != '=' &&
		    pp->nsections < CONF_PP_SECTIONS)
			pp->sections[pp->nsections++] =
			    conf_pp_line(pp, pp->last);
	} else if (*pp->s == '}' && pp->depth > 0)
		pp->depth--;
	if (!isspace((unsigned char)*pp->s))
		pp->last = pp->o;
	*pp->o++ = *pp->s++;
}

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
 * the quote that starts a string the text does not end, else NULL, and
 * sections[] to the lines of the names of the first CONF_PP_SECTIONS
 * sections (0 past the last).
 */
static char *
conf_preprocess(const char *text, const char **unclosed, int *sections)
{
	static const char stops[] = " #\"'\t\n\r={}()+,*";
	struct conf_pp pp;
	char *out;
	int inword = 0;

	/* At worst "${}" becomes "'${}'" and each ' or \\ doubles. */
	out = xmalloc(3 * strlen(text) + 1);
	memset(&pp, 0, sizeof pp);
	pp.s = text;
	pp.o = out;
	pp.counted = out;
	pp.line = 1;
	while (*pp.s != '\0') {
		if (*pp.s == '"' || *pp.s == '\'') {
			conf_pp_string(&pp);
			pp.last = pp.o - 1;
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
		    strchr(pp.s, '}') != NULL) {
			conf_pp_variable(&pp);
			pp.last = pp.o - 1;
		} else {
			inword = strchr(stops, *pp.s) == NULL;
			conf_pp_char(&pp);
		}
	}
	*pp.o = '\0';
	*unclosed = pp.unclosed;
	memcpy(sections, pp.sections, sizeof pp.sections);
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

/*
 * Once the file is parsed, point the context of its section at the first
 * copy, if there is one, with the line of its name; a second copy is an
 * error.
 */
static void
conf_ctx_found(struct conf_ctx *ctx, const int *lines)
{
	struct conf_ctx *sub = ctx->sub;

	if (sub == NULL || (sub->cfg = conf_ctx_first_section(ctx)) == NULL)
		return;
	sub->line = lines[0];
	if (cfg_size(ctx->cfg, sub->section) > 1)
		conf_errors_add(ctx->errs,
		    "%s:%d: %s: only one %s section is allowed; the first is "
		    "at line %d",
		    ctx->path, lines[1], sub->section, sub->section, lines[0]);
}

/*
 * One parse of buf with libconfuse, in a fresh cfg_t (the last attempt's
 * freed) and with the tracking of lines started over.  Returns
 * libconfuse's result; ctx->err_line is the line of its error, if any.
 */
static int
conf_ctx_parse_buf(struct conf_ctx *ctx, const char *buf)
{
	cfg_opt_t *opts;
	int rc;

	if (ctx->cfg != NULL)
		cfg_free(ctx->cfg);
	memset(ctx->track, 0, sizeof(ctx->track));
	if (ctx->sub != NULL)
		memset(ctx->sub->track, 0, sizeof(ctx->sub->track));
	opts = conf_ctx_opts(ctx);
	ctx->cfg = cfg_init(opts, CFGF_NONE);
	conf_ctx_opts_free(opts);
	if (ctx->cfg == NULL)
		fatalx("%s: cfg_init failed", __func__);
	cfg_set_error_function(ctx->cfg, conf_cb_error);
	ctx->err_line = 0;
	conf_current = ctx;
	rc = cfg_parse_buf(ctx->cfg, buf);
	conf_current = NULL;
	return (rc);
}

/*
 * Blank line (from 1) of buf, keeping its newline so that the lines after
 * it keep their numbers.  Returns -1 if buf has no such line.
 */
static int
conf_blank_line(char *buf, int line)
{
	char *p = buf;
	int n;

	for (n = 1; n < line; n++) {
		if ((p = strchr(p, '\n')) == NULL)
			return (-1);
		p++;
	}
	if (*p == '\0')
		return (-1);
	for (; *p != '\0' && *p != '\n'; p++)
		*p = ' ';
	return (0);
}

/*
 * Parse the file with libconfuse.  libconfuse stops at the first syntax
 * error (an unknown option, a stray brace); to report every one, as a
 * compiler does, the line of each is blanked and the file parsed again,
 * as long as the errors move forward (CONF_SYNTAX_MAX at most).  Returns
 * 0; 1 when the file parsed only without the lines of its syntax errors
 * (added to the errors): its values can still be checked
 * (conf_ctx_apply), not the file as a whole; or -1 with errors added.  A
 * section found is ready for conf_ctx_apply(ctx->sub) after a 0.
 */
int
conf_ctx_parse(struct conf_ctx *ctx)
{
	int lines[CONF_PP_SECTIONS] = { 0 };
	const char *unclosed;
	char *text, *buf;
	int rc, nsyntax = 0, last = 0;

	if ((text = conf_ctx_read(ctx)) == NULL)
		return (-1);
	buf = conf_preprocess(text, &unclosed, lines);
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
	while ((rc = conf_ctx_parse_buf(ctx, buf)) != CFG_SUCCESS) {
		nsyntax++;
		if (ctx->err_line <= last || nsyntax >= CONF_SYNTAX_MAX ||
		    conf_blank_line(buf, ctx->err_line) == -1)
			break;
		last = ctx->err_line;
	}
	free(buf);
	if (rc == CFG_SUCCESS) {
		conf_ctx_found(ctx, lines);
		return (nsyntax == 0 ? 0 : 1);
	}
	if (!conf_ctx_failed(ctx))
		conf_errors_add(ctx->errs, "%s: syntax error", ctx->path);
	return (-1);
}

/* Convert every option set in the file, reporting each bad value. */
void
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

/* Release what reading the file needed, its section's included. */
void
conf_ctx_clear(struct conf_ctx *ctx)
{
	if (ctx->sub != NULL)
		ctx->sub->cfg = NULL;
	if (ctx->cfg != NULL && ctx->section == NULL)
		cfg_free(ctx->cfg);
	ctx->cfg = NULL;
}
