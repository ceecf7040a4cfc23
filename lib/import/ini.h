/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * supervisord's configuration dialect, read as supervisord 4 reads it:
 * Python's configparser.RawConfigParser with inline_comment_prefixes
 * (';', '#') and strict=False (sections and options of the same name
 * merge, the later value wins), option names lowercased, [DEFAULT] values
 * inherited by every section, the main file's [include] files globs
 * (relative to the main file, sorted, unreadable matches skipped; the
 * included files' own [include] sections are not followed), %(here)s
 * replaced by the directory of the file that holds it, and Python's
 * "%(name)s" % mapping formatting for the expansions supervisord offers.
 */

#ifndef VIGIL_INI_H
#define VIGIL_INI_H

#include <stddef.h>

struct ini_index;

/* One option: its name (lowercased), its value and where it was set. */
struct ini_entry {
	char *key;
	char *value;      /* stripped, continuation lines joined with '\n' */
	const char *file; /* borrowed from struct ini's files */
	int line;
};

/* One section, with every file's options of that name merged. */
struct ini_section {
	char *name;       /* "program:web", as written */
	const char *file; /* where it first appeared */
	int line;
	struct ini_entry *entries; /* in order of first appearance */
	size_t n;
};

/* A main file and what its [include] brought in. */
struct ini {
	char **files; /* the files read, the main file first */
	size_t nfiles;
	struct ini_section *sections; /* without [DEFAULT], in order */
	size_t nsections;
	struct ini_section defaults; /* [DEFAULT]: every section's fallback */
	char **notes; /* "include PATTERN: no file matches" and the like */
	size_t nnotes;
	struct ini_index *index; /* private: section and option lookups */
};

/* What a %(name)s expands to: a string, a number, or a marker. */
enum ini_var_kind {
	INI_VAR_STRING = 0,
	INI_VAR_NUMBER,
	INI_VAR_MARK, /* a number known only later (process_num) */
};

struct ini_var {
	const char *name;
	enum ini_var_kind kind;
	const char *string; /* INI_VAR_STRING */
	long long number;   /* INI_VAR_NUMBER */
};

/*
 * An INI_VAR_MARK expands to INI_MARK_OPEN, the conversion written as
 * hex digits of its bytes (flags, width, precision and type, e.g. "02d"
 * is "303264"), and INI_MARK_CLOSE; the caller replaces it later.
 */
#define INI_MARK_OPEN "((vigil:"
#define INI_MARK_CLOSE "))"

/*
 * Read PATH and the files of its [include] section into INI (zeroed by
 * the caller).  VARS are the expansions of the include files value
 * (here, host_node_name, ENV_X).  Returns 0, or -1 with *CAUSE set to
 * "FILE:LINE: message" (FILE alone when the file cannot be read); INI is
 * then cleared.
 */
int ini_load(
    struct ini *, const char *, const struct ini_var *, size_t, char **);
void ini_clear(struct ini *);

/*
 * Parse LEN bytes at BUF, called NAME in messages, into INI as
 * configparser reads one more file: merged with what INI holds, without
 * [include] or %(here)s processing.  Returns 0, or -1 with *CAUSE set
 * to "NAME:LINE: message"; INI is then cleared.
 */
int ini_parse_buffer(struct ini *, const char *, const char *, size_t, char **);

/* The section named NAME (borrowed), or NULL; never [DEFAULT]. */
const struct ini_section *ini_section(const struct ini *, const char *);

/*
 * Option KEY (lowercase) of SECTION, or of [DEFAULT], or NULL (borrowed).
 * SECTION may be NULL or &INI->defaults to look in [DEFAULT] only.
 */
const struct ini_entry *ini_get(
    const struct ini *, const struct ini_section *, const char *);

/*
 * VALUE % VARS as Python formats a string with a mapping: %(name)s and
 * the other conversions, %% for '%'.  Returns an allocated string, or
 * NULL with *CAUSE set (an unknown name, with the known ones listed; an
 * incomplete or unsupported format; INI_MARK_OPEN in VALUE or in a
 * string inserted, so that every marker in a result is a real one).
 */
char *ini_expand(const char *, const struct ini_var *, size_t, char **);

/*
 * os.path.abspath(os.path.dirname(PATH)), supervisord's %(here)s: made
 * absolute against the working directory and normalised textually,
 * without resolving symbolic links.  Returns an allocated string, or
 * NULL with errno set if the working directory cannot be found.
 */
char *ini_here(const char *);

#endif
