/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Counters that outlive the instances and the reloads that replace them,
 * by job name, so that the metrics (cmd-metrics.c) never go down while
 * vigild runs: runs by outcome (run-end.c), messages by outcome
 * (dispatch.c), and the restarts and skipped slots of instances that are
 * gone (their live counts are in the instances).  A job removed by a
 * reload keeps its counters, should it come back.
 */

#include "config.h"

#include <sys/tree.h>

#include <stdlib.h>
#include <string.h>

#include "effects.h"
#include "inst.h"
#include "jobs-view.h"
#include "xmalloc.h"

struct counters_job {
	char *name;
	struct counters c;
	RB_ENTRY(counters_job) entry;
};

static int
counters_cmp(struct counters_job *a, struct counters_job *b)
{
	return (strcmp(a->name, b->name));
}

RB_HEAD(counters_tree, counters_job);
RB_PROTOTYPE(counters_tree, counters_job, entry, counters_cmp)
RB_GENERATE(counters_tree, counters_job, entry, counters_cmp)

static struct counters_tree counters_jobs = RB_INITIALIZER(&counters_jobs);

static struct counters_job *
counters_find(const char *name)
{
	struct counters_job key;

	memset(&key, 0, sizeof(key));
	key.name = (char *)name;
	return (RB_FIND(counters_tree, &counters_jobs, &key));
}

/* The counters of job NAME, made on first use. */
static struct counters *
counters_get(const char *name)
{
	struct counters_job *cj;

	if ((cj = counters_find(name)) == NULL) {
		cj = xcalloc(1, sizeof(*cj));
		cj->name = xstrdup(name);
		RB_INSERT(counters_tree, &counters_jobs, cj);
	}
	return (&cj->c);
}

/* The counters of job NAME, or NULL when nothing was counted yet. */
const struct counters *
counters_of(const char *name)
{
	struct counters_job *cj = counters_find(name);

	return (cj != NULL ? &cj->c : NULL);
}

/* A run of in ended with outcome (COUNT_RUN_*). */
void
counters_run(const struct inst *in, enum counters_run outcome)
{
	counters_get(job_name(inst_job(in)))->runs[outcome]++;
}

/* A message worked by in was settled with outcome (COUNT_MSG_*). */
void
counters_msg(const struct inst *in, enum counters_msg outcome)
{
	counters_get(job_name(inst_job(in)))->msgs[outcome]++;
}

/* Instance in goes away: keep what it counted itself. */
static void
counters_retire(struct inst *in)
{
	unsigned int restarts = inst_restarts(in), skipped = inst_skipped(in);
	int index = inst_index(in), n;
	struct counters *c;

	if (restarts == 0 && skipped == 0)
		return;
	c = counters_get(job_name(inst_job(in)));
	if (index >= c->ninsts) {
		n = index + 1;
		c->restarts =
		    xreallocarray(c->restarts, n, sizeof(*c->restarts));
		c->skipped = xreallocarray(c->skipped, n, sizeof(*c->skipped));
		memset(c->restarts + c->ninsts, 0,
		    (size_t)(n - c->ninsts) * sizeof(*c->restarts));
		memset(c->skipped + c->ninsts, 0,
		    (size_t)(n - c->ninsts) * sizeof(*c->skipped));
		c->ninsts = n;
	}
	c->restarts[index] += restarts;
	c->skipped[index] += skipped;
}

/* The restarts of instance in, its own and its predecessors'. */
uint64_t
counters_restarts(const struct inst *in)
{
	const struct counters *c = counters_of(job_name(inst_job(in)));
	uint64_t base = 0;

	if (c != NULL && inst_index(in) < c->ninsts)
		base = c->restarts[inst_index(in)];
	return (base + inst_restarts(in));
}

/* The skipped slots of instance in, its own and its predecessors'. */
uint64_t
counters_skipped(const struct inst *in)
{
	const struct counters *c = counters_of(job_name(inst_job(in)));
	uint64_t base = 0;

	if (c != NULL && inst_index(in) < c->ninsts)
		base = c->skipped[inst_index(in)];
	return (base + inst_skipped(in));
}

void
counters_free_all(void)
{
	struct counters_job *cj, *next;

	RB_FOREACH_SAFE(cj, counters_tree, &counters_jobs, next) {
		RB_REMOVE(counters_tree, &counters_jobs, cj);
		free(cj->c.restarts);
		free(cj->c.skipped);
		free(cj->name);
		free(cj);
	}
}

const struct inst_observer counters_observer = { .gone = counters_retire };
