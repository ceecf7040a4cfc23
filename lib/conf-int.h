/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * What the files of the configuration (conf.c, conf-ctx.c, conf-field.c,
 * conf-run.c, conf-proc.c, job-spec.c, conf-jobs.c) share and no one else
 * sees: the context of one file being read, the tables of fields and
 * their parsers.  Not for supervisord/: it uses conf.h.
 */

#ifndef VIGIL_CONF_INT_H
#define VIGIL_CONF_INT_H

#include <sys/types.h>

#include <confuse.h>
#include <stddef.h>

#define CONF_MAX_FIELDS 96

struct conf_ctx;
struct conf_errors;
struct conf_field;
struct job_spec;

/* Parse opt into field f of ctx->obj: 0, or -1 with an owned *cause. */
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

/*
 * One file being loaded, or the section of one ("name { ... }", with a
 * context of its own: its fields, its object, the lines of its options).
 * A file has at most one section, written at most once.
 */
struct conf_ctx {
	const char *path;
	const char *name; /* the job's name, or NULL */
	const char *base; /* directory for relative paths, or NULL */
	struct conf_errors *errs;
	size_t nerrs; /* errs->n when the file was opened */
	cfg_t *cfg;   /* a section's: its first copy in the file's, or NULL */
	void *obj;    /* struct job_spec, struct conf or a part of it */
	const struct conf_field *fields;
	size_t nfields;
	struct conf_track track[CONF_MAX_FIELDS];
	struct conf_ctx *sub; /* the file's: the context of its section */
	const char *section;  /* a section's: its name */
	int line;             /* a section's: the line of its name */
	int err_line;         /* the line of libconfuse's last error, or 0 */
};

/* conf-ctx.c: reading one file. */
void conf_ctx_init(struct conf_ctx *, const char *, struct conf_errors *,
    void *, const struct conf_field *, size_t);
int conf_ctx_parse(struct conf_ctx *);
void conf_ctx_apply(struct conf_ctx *);
void conf_ctx_sort(struct conf_ctx *);
void conf_ctx_clear(struct conf_ctx *);
int conf_ctx_failed(struct conf_ctx *);
int conf_ctx_given(struct conf_ctx *, const char *);
int conf_ctx_line(struct conf_ctx *, const char *);
void conf_ctx_error(struct conf_ctx *, const char *, const char *, ...)
    __attribute__((format(printf, 3, 4)));

/* conf-field.c: the options of each file type, and what parsers share. */
int conf_words_has(char *const *, const char *);
void *conf_ptr(struct conf_ctx *, const struct conf_field *);
const char *conf_str(cfg_opt_t *);
int conf_word_index(const char *const *, const char *);
int conf_number(const char *, long, long, long *, char **);
extern const char *const conf_ready_words[];

/* conf-run.c: the parsers of what a job runs and how it is watched. */
int conf_parse_command(
    struct conf_ctx *, const struct conf_field *, cfg_opt_t *, char **);
int conf_parse_hook_command(
    struct conf_ctx *, const struct conf_field *, cfg_opt_t *, char **);
int conf_parse_event_command(
    struct conf_ctx *, const struct conf_field *, cfg_opt_t *, char **);
int conf_parse_ready(
    struct conf_ctx *, const struct conf_field *, cfg_opt_t *, char **);
int conf_parse_health(
    struct conf_ctx *, const struct conf_field *, cfg_opt_t *, char **);
int conf_parse_watch(
    struct conf_ctx *, const struct conf_field *, cfg_opt_t *, char **);

/* conf-proc.c: the parsers of how a job's process is set up. */
int conf_parse_user(
    struct conf_ctx *, const struct conf_field *, cfg_opt_t *, char **);
int conf_parse_group(
    struct conf_ctx *, const struct conf_field *, cfg_opt_t *, char **);
int conf_gid(const char *, gid_t *, char **);
int conf_parse_mode(
    struct conf_ctx *, const struct conf_field *, cfg_opt_t *, char **);
int conf_parse_nice(
    struct conf_ctx *, const struct conf_field *, cfg_opt_t *, char **);
int conf_parse_env(
    struct conf_ctx *, const struct conf_field *, cfg_opt_t *, char **);
int conf_parse_limit(
    struct conf_ctx *, const struct conf_field *, cfg_opt_t *, char **);

extern const struct conf_field conf_field_job[];
extern const size_t conf_field_njob;
extern const struct conf_field conf_field_main[];
extern const size_t conf_field_nmain;
extern const struct conf_field conf_field_cluster[];
extern const size_t conf_field_ncluster;
extern const char *const conf_field_kind_words[];

/* job-spec.c: one job file, with the line of its depends option. */
struct job_spec *job_spec_load_line(
    const char *, const char *, struct conf_errors *, int *);

#endif
