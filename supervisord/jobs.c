/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The jobs by name: the tree in struct vigild (registry.c adds and
 * removes them) and job_find; the reads of jobs-view.h.  It calls no
 * other file of vigild.
 */

#include "config.h"

#include <string.h>

#include "jobs-view.h"
#include "jobs.h"
#include "vigild.h"

static int
job_cmp(struct job *a, struct job *b)
{
	return (strcmp(a->name, b->name));
}
RB_GENERATE(job_tree, job, entry, job_cmp)

/* The job of that name, or NULL. */
struct job *
job_find(const char *name)
{
	struct job key = { .name = (char *)name };

	return (RB_FIND(job_tree, &vigild.jobs, &key));
}

const char *
job_name(const struct job *j)
{
	return (j->name);
}

const struct job_spec *
job_spec_of(const struct job *j)
{
	return (j->spec);
}

const struct job_spec *
job_spec_next(const struct job *j)
{
	return (j->next_spec != NULL ? j->next_spec : j->spec);
}

int
job_retiring(const struct job *j)
{
	return (j->retiring);
}

int
job_ninsts(const struct job *j)
{
	return (j->ninsts);
}

struct inst *
job_inst(const struct job *j, int i)
{
	return (j->insts[i]);
}

int64_t
job_cluster_id(const struct job *j)
{
	return (j->cluster_id);
}

struct job *
inst_job(const struct inst *in)
{
	return (in->job);
}

const char *
inst_label(const struct inst *in)
{
	return (in->label);
}

int
inst_index(const struct inst *in)
{
	return (in->index);
}

enum job_state
inst_state(const struct inst *in)
{
	return (in->state);
}

const char *
inst_why(const struct inst *in)
{
	return (in->reason);
}

pid_t
inst_pid(const struct inst *in)
{
	return (in->run.pid);
}

unsigned int
inst_restarts(const struct inst *in)
{
	return (in->life.restarts);
}

unsigned int
inst_skipped(const struct inst *in)
{
	return (in->per.skipped);
}
