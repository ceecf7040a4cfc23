/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Inside the supervisord importer: the state of one translation
 * (svimport.c), of one program (svimport-prog.c: its options) and of the
 * processes that program makes (svimport-proc.c: command, environment
 * and directory, per instance where they use %(process_num)).
 */

#ifndef VIGIL_SVIMPORT_INT_H
#define VIGIL_SVIMPORT_INT_H

#include <stdio.h>

#include "ini.h"
#include "svimport.h"

/* A growable array of expansions. */
struct svi_vars {
	struct ini_var *v;
	size_t n;
	size_t alloc;
};

/* A whole translation. */
struct svi_ctx {
	const struct ini *ini;
	const struct svimport_in *in;
	struct svimport_out *out;
	struct svi_vars base; /* here, host_node_name, ENV_X */
	char **env;           /* [supervisord] environment, "K=V" */
	const struct ini_entry *env_e;
	size_t nenv;
	char **env_names; /* its ENV_K, owned names of vars in base */
	const struct ini_entry *user;      /* [supervisord] user */
	const struct ini_entry *umask;     /* when supervisord daemonizes */
	const struct ini_entry *directory; /* the same */
	struct svi_prog **progs;           /* translated, for depends */
	size_t nprogs;
};

/* One [program:x] being translated. */
struct svi_prog {
	struct svi_ctx *ctx;
	const struct ini_section *sec;
	char *name;      /* program_name */
	char *group;     /* group_name */
	int group_line;  /* of its [group:x], 0 outside a group */
	long long gprio; /* its group's priority (its own outside a group) */
	long long prio;  /* priority */
	int autostart;
	int numprocs;
	long long numprocs_start;
	struct svi_vars vars; /* what its options expand with */
	char **names;         /* owned names of vars: ENV_X of environment */
	size_t nnames;
	char **pairs; /* its environment, "K=V": owned values of vars */
	FILE *f;      /* the job file's body */
	char *body;
	size_t bodylen;
	int failed;                    /* no job: the command cannot be made */
	char *out_stdout, *out_stderr; /* file, journal, null, inherit */
	int redirect_stderr;
};

/* svimport.c */
void svi_report(struct svi_ctx *, const char *, int, const char *, const char *,
    ...) __attribute__((format(printf, 5, 6)));
void svi_vars_add(struct svi_vars *, const char *, enum ini_var_kind,
    const char *, long long);
void svi_vars_copy(struct svi_vars *, const struct svi_vars *);
void svi_vars_clear(struct svi_vars *);
void svi_line(
    struct svi_prog *, const struct ini_entry *, const char *, const char *);
void svi_line_raw(
    struct svi_prog *, const struct ini_entry *, const char *, const char *);
int svi_number(const char *, long long *);
int svi_boolean(const char *, int *);

/* svimport-prog.c */
void svi_prog_options(struct svi_prog *);
char *svi_get(struct svi_prog *, const char *, const struct ini_entry **);

/* svimport-proc.c */
void svi_prog_process(struct svi_prog *);

#endif
