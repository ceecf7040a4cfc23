/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * supervisord's configuration, read by ini.c, translated into vigil job
 * files: one job per [program:x], with the supervisord option beside each
 * line it became, and one report "FILE:LINE: option: not translated
 * (why)" for each thing that has no vigil meaning or a different one.
 * Pure: no file is written here; vigilctl-import.c does that.
 */

#ifndef VIGIL_SVIMPORT_H
#define VIGIL_SVIMPORT_H

#include <stddef.h>

struct ini;

/* What the translation needs from the outside world. */
struct svimport_in {
	const char *host;     /* %(host_node_name)s: uname's nodename */
	char *const *environ; /* %(ENV_X)s: the environment of the import */
	char *const *skip;    /* program names not to translate, or NULL */
};

/* One job file to write: NAME.conf with TEXT. */
struct svimport_job {
	char *name;
	char *text;
	char *file; /* the [program:x] section's file and line */
	int line;
};

struct svimport_out {
	struct svimport_job *jobs; /* in the order of the sections */
	size_t njobs;
	char **reports; /* "FILE:LINE: option: not translated (why)" */
	size_t nreports;
};

/*
 * Translate every [program:x] of INI into OUT (zeroed by the caller); a
 * program named in IN->skip gets no job and no report.  Never fails: what
 * cannot be translated is reported, and a program whose command cannot be
 * made gets no job.
 */
void svimport_translate(
    const struct ini *, const struct svimport_in *, struct svimport_out *);
void svimport_out_clear(struct svimport_out *);

/*
 * The expansions supervisord's read_config() gives every value: here
 * (HERE, borrowed), host_node_name (HOST, borrowed) and ENV_X for each
 * "X=value" of ENVIRON (names allocated, values borrowed).  *N is set;
 * free with svimport_vars_free().
 */
struct ini_var *svimport_vars(
    const char *, const char *, char *const *, size_t *);
void svimport_vars_free(struct ini_var *, size_t);

/* VALUE as a double-quoted string of a job file, or NULL (a NUL-free
 * string with a control character that job files cannot hold). */
char *svimport_quote(const char *);

#endif
