/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The jobs by name: the tree in struct vigild (registry.c adds and
 * removes them) and job_find.  It calls no other file of vigild.
 */

#include "config.h"

#include <string.h>

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
