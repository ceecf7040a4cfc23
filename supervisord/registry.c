/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The jobs vigild supervises, by name: each job's instances made from its
 * spec (instances = N, or a queue's concurrency slots), the autostart,
 * the reload swap (a changed job's instances stop, then the new spec
 * replaces the old one and starts what should run; a removed job is
 * freed once down), and the shutdown.
 */

#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "cmd.h"
#include "daemon.h"
#include "effects.h"
#include "evloop.h"
#include "inst.h"
#include "jobs.h"
#include "log.h"
#include "state.h"
#include "vigild.h"
#include "xmalloc.h"

static void registry_settle_later(struct job *);

/* Make the instances of a job from its spec. */
static void
registry_build(struct job *j)
{
	int i;

	j->kind = inst_kind_of(j->spec);
	j->ninsts = inst_kind_ninsts(j->spec);
	j->insts = xcalloc((size_t)j->ninsts, sizeof(*j->insts));
	joblog_job_attach(j);
	for (i = 0; i < j->ninsts; i++) {
		j->insts[i] = xcalloc(1, sizeof(**j->insts));
		inst_init(j->insts[i], j, i);
	}
	watch_job_attach(j);
}

/* Free an array of instances; each must be inactive. */
static void
registry_insts_free(struct inst **insts, int n, int array_too)
{
	int i;

	for (i = 0; i < n; i++) {
		inst_clear(insts[i]);
		free(insts[i]);
	}
	if (array_too)
		free(insts);
}

static void
registry_job_free(struct job *j)
{
	watch_job_detach(j);
	registry_insts_free(j->insts, j->ninsts, 1);
	j->insts = NULL;
	j->ninsts = 0;
	if (j->kind->job_free != NULL)
		j->kind->job_free(j);
	joblog_job_detach(j);
	j->settle = sd_event_source_disable_unref(j->settle);
	RB_REMOVE(job_tree, &vigild.jobs, j);
	vigild.njobs--;
	job_spec_free(j->spec);
	job_spec_free(j->next_spec);
	free(j->name);
	free(j);
}

/* Create the run-time record of a job from its spec (which it now owns). */
void
registry_add(struct job_spec *spec)
{
	struct job *j;

	j = xcalloc(1, sizeof(*j));
	j->name = xstrdup(spec->name);
	j->spec = spec;
	registry_build(j);
	if (RB_INSERT(job_tree, &vigild.jobs, j) != NULL)
		fatalx("%s: duplicate job %s", __func__, j->name);
	vigild.njobs++;
}

/* Start every instance of a job that is meant to start on its own. */
void
registry_autostart(struct job *j)
{
	int i;

	/* The operator's word, kept in state.db, beats autostart. */
	for (i = 0; i < j->ninsts; i++) {
		if (j->insts[i]->life.intent == LIFE_INTENT_DOWN ||
		    (!j->spec->autostart &&
		        j->insts[i]->life.intent != LIFE_INTENT_UP))
			continue;
		inst_arm(j->insts[i]);
	}
}

static int
registry_is_idle(const struct job *j)
{
	return (j->nactive == 0);
}

/*
 * Which instances of the new spec start after a reload swap: instance N
 * starts if the old instance N was running or meant to run, or if it is
 * new and the job starts on its own; never if the operator stopped it.
 */
static int *
registry_swap_starts(const struct job *j, const struct job_spec *next)
{
	const struct inst *old;
	int *start, i, n;

	n = inst_kind_ninsts(next);
	start = xcalloc((size_t)n, sizeof(*start));
	for (i = 0; i < n; i++) {
		if (i >= j->ninsts) {
			start[i] = next->autostart;
			continue;
		}
		old = j->insts[i];
		start[i] = old->life.intent != LIFE_INTENT_DOWN &&
		    (old->reload_start || next->autostart);
	}
	return (start);
}

/* Swap in the job's new spec; instance N keeps the operator's stop. */
static void
registry_swap(struct job *j)
{
	struct inst **old = j->insts;
	const struct kind_ops *oldkind = j->kind;
	int *start, i, oldn = j->ninsts;

	start = registry_swap_starts(j, j->next_spec);
	watch_job_detach(j);
	job_spec_free(j->spec);
	j->spec = j->next_spec;
	j->next_spec = NULL;
	registry_build(j);
	for (i = 0; i < oldn && i < j->ninsts; i++) {
		if (old[i]->life.intent == LIFE_INTENT_DOWN)
			life_intent_restore(
			    &j->insts[i]->life, LIFE_INTENT_DOWN);
		waiters_move(old[i], j->insts[i]);
	}
	/* The old instances go as their kind made them. */
	j->kind = oldkind;
	registry_insts_free(old, oldn, 1);
	j->kind = inst_kind_of(j->spec);
	log_info("%s: new configuration applied", j->name);
	for (i = 0; i < j->ninsts; i++) {
		if (start[i])
			inst_arm(j->insts[i]);
	}
	free(start);
}

/* A shrink's instances past shrink_to are all down: they go. */
static void
registry_shrink(struct job *j)
{
	int i;

	for (i = j->shrink_to; i < j->ninsts; i++) {
		if (job_state_is_active(j->insts[i]->state))
			return;
	}
	log_info("%s: instances %d to %d removed", j->name, j->shrink_to,
	    j->ninsts - 1);
	registry_insts_free(
	    j->insts + j->shrink_to, j->ninsts - j->shrink_to, 0);
	j->ninsts = j->shrink_to;
	j->shrink_to = 0;
}

/*
 * Every instance of a job that reload changed or removed has stopped: swap
 * in the new spec and start what should run, or free the job.  Or the
 * instances a shrink stopped are down: they go.
 */
static int
registry_settle(sd_event_source *s, void *arg)
{
	struct job *j = arg;

	j->settle = sd_event_source_disable_unref(j->settle);
	if (j->shrink_to > 0 && !vigild.shutting_down)
		registry_shrink(j);
	if (!registry_is_idle(j) || vigild.shutting_down)
		return (0);
	if (j->retiring) {
		log_info("%s: removed", j->name);
		registry_job_free(j);
	} else if (j->next_spec != NULL)
		registry_swap(j);
	return (0);
}

/* Settle the job from the event loop, not from deep inside a transition. */
static void
registry_settle_later(struct job *j)
{
	if (j->settle != NULL || (!registry_is_idle(j) && j->shrink_to == 0))
		return;
	evloop_defer(&j->settle, registry_settle, j);
}

/*
 * Reload: replace a job's spec (next != NULL; the job owns it now) or
 * remove the job (next == NULL).  Its instances are stopped; the swap or
 * removal happens once all are down.
 */
void
registry_replace(struct job *j, struct job_spec *next)
{
	struct inst *in;
	int i;

	job_spec_free(j->next_spec);
	j->next_spec = next;
	j->retiring = next == NULL;
	for (i = 0; i < j->ninsts; i++) {
		in = j->insts[i];
		if (!in->reload_start)
			in->reload_start =
			    in->life.want || job_state_is_active(in->state);
		inst_stop(in);
	}
	registry_settle_later(j);
}

/* Can reload apply next by adding or removing instances only? */
static int
registry_resizable(const struct job *j, const struct job_spec *next)
{
	return (j->spec->kind == CONF_KIND_SERVICE && !j->retiring &&
	    j->next_spec == NULL && j->shrink_to == 0 &&
	    j->spec->instances >= 2 && next->instances >= 2 &&
	    job_spec_equal_but_instances(j->spec, next));
}

/* Does the operator or the config want the job's instances to run? */
static int
registry_wanted(const struct job *j)
{
	int i;

	if (j->spec->autostart)
		return (1);
	for (i = 0; i < j->ninsts; i++) {
		if (j->insts[i]->life.intent != LIFE_INTENT_DOWN &&
		    (j->insts[i]->life.want ||
		        job_state_is_active(j->insts[i]->state)))
			return (1);
	}
	return (0);
}

/*
 * Reload changed only `instances` of a service that has two or more
 * before and after (so every instance keeps its name): the new ones are
 * made, and started if the job is meant to run; those past the new count
 * are stopped and go once down (registry_shrink); the others are not
 * touched.  Return 1 (next is the job's now), or 0: not such a change.
 */
int
registry_resize(struct job *j, struct job_spec *next)
{
	int n = j->ninsts, m, i, start;

	if (!registry_resizable(j, next))
		return (0);
	start = registry_wanted(j) || next->autostart;
	m = inst_kind_ninsts(next);
	job_spec_free(j->spec);
	j->spec = next;
	log_info("%s: instances %d -> %d", j->name, n, m);
	if (m < n) {
		j->shrink_to = m;
		for (i = m; i < n; i++)
			inst_stop(j->insts[i]);
		registry_settle_later(j);
		return (1);
	}
	j->insts = xreallocarray(j->insts, (size_t)m, sizeof(*j->insts));
	j->ninsts = m;
	for (i = n; i < m; i++) {
		j->insts[i] = xcalloc(1, sizeof(**j->insts));
		inst_init(j->insts[i], j, i);
		if (start)
			inst_arm(j->insts[i]);
	}
	return (1);
}

static void
registry_exit_now(void)
{
	(void)sd_event_exit(evloop_event(), 0);
}

/* The shutdown is over: the cluster's leases go back, then the loop ends. */
static void
registry_exit(void)
{
	static int once;

	if (once++ == 0)
		cluster_queue_shutdown(registry_exit_now);
}

/*
 * An instance's state changed from was: a job being replaced or removed
 * settles once idle; the shutdown ends with the last active instance.
 */
static void
registry_changed(struct inst *in, enum job_state was)
{
	if (job_state_is_active(was) && !job_state_is_active(in->state) &&
	    (in->job->next_spec != NULL || in->job->retiring ||
	        in->job->shrink_to > 0))
		registry_settle_later(in->job);
	if (vigild.shutting_down && vigild.nactive == 0)
		registry_exit();
}

/* Start every instance of every autostart job. */
void
registry_start_all(void)
{
	struct job *j;

	state_batch_begin(); /* one commit for every run begun */
	RB_FOREACH(j, job_tree, &vigild.jobs)
		registry_autostart(j);
	state_batch_end();
	vigild.started = 1;
}

/*
 * Stop every instance, dependencies last; the loop exits when the last
 * active instance has become inactive.
 */
void
registry_shutdown(void)
{
	if (vigild.shutting_down)
		return;
	vigild.shutting_down = 1;
	log_info(
	    "shutting down: stopping %zu active instances", vigild.nactive);
	sdnotify_stopping();
	deps_shutdown();
	if (vigild.nactive == 0)
		registry_exit();
}

/* Free all jobs (at exit, after every instance stopped). */
void
registry_free_all(void)
{
	struct job *j, *tmp;

	RB_FOREACH_SAFE(j, job_tree, &vigild.jobs, tmp)
		registry_job_free(j);
}

const struct inst_observer registry_observer = { .changed = registry_changed };
