/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The jobs and their instances as the layers around the core see them
 * (commands, reload, the state and cluster front doors, sd_notify): by
 * reference and through these reads (jobs.c), not by their layout, which
 * is jobs.h's and the core's.
 */

#ifndef VIGILD_JOBS_VIEW_H
#define VIGILD_JOBS_VIEW_H

#include <sys/types.h>

#include <stdint.h>

#include "job.h"

struct inst;
struct job;
struct job_spec;

/* The job of that name, or NULL. */
struct job *job_find(const char *);

const char *job_name(const struct job *);
/* Its spec; job_spec_next: the one it runs with once a reload is done. */
const struct job_spec *job_spec_of(const struct job *);
const struct job_spec *job_spec_next(const struct job *);
int job_retiring(const struct job *); /* a reload removes it */
int job_ninsts(const struct job *);
struct inst *job_inst(const struct job *, int); /* 0 .. job_ninsts() - 1 */
int64_t job_cluster_id(const struct job *);     /* 0: not seeded yet */

struct job *inst_job(const struct inst *);
const char *inst_label(const struct inst *); /* "name" or "name@index" */
int inst_index(const struct inst *);
enum job_state inst_state(const struct inst *);
const char *inst_why(const struct inst *);       /* why in its state, or NULL */
pid_t inst_pid(const struct inst *);             /* its run's leader, or 0 */
unsigned int inst_restarts(const struct inst *); /* this instance's own */
unsigned int inst_skipped(const struct inst *);  /* periodic: slots */

#endif
