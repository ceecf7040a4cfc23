/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Dependencies (`depends`): a start is held back until every job it
 * depends on is RUNNING, and pulls those jobs up (as systemd's
 * Requires=); at shutdown a job stops only once no active job needs it
 * (reverse order).  The lifecycle asks through inst_hooks (LIFE_A_DEPS,
 * answered with LIFE_EV_DEPS_WAIT or _DEPS_OK); a held-back instance
 * waits on a list, looked at again whenever some instance becomes RUNNING.
 */

#include "config.h"

#include <inttypes.h>
#include <string.h>

#include <systemd/sd-daemon.h>

#include "daemon.h"
#include "duration.h"
#include "effects.h"
#include "evloop.h"
#include "inst.h"
#include "jobs-view.h"
#include "jobs.h"
#include "log.h"
#include "vigild.h"

static TAILQ_HEAD(, inst) deps_waits = TAILQ_HEAD_INITIALIZER(deps_waits);
static sd_event_source *deps_check; /* deferred recheck */

/*
 * A job needs the job named name: start its instances that are simply
 * stopped (not by the operator, not given up on).
 */
static void
deps_pull(const char *name)
{
	struct job *j;
	int i;

	if ((j = job_find(name)) == NULL || j->retiring)
		return;
	for (i = 0; i < j->ninsts; i++) {
		if (j->insts[i]->state == JOB_STOPPED &&
		    j->insts[i]->life.intent != LIFE_INTENT_DOWN)
			inst_start(j->insts[i]);
	}
}

/* Return 1 if every instance of the job named name is RUNNING. */
static int
deps_is_up(const char *name)
{
	struct job *j;
	int i;

	if ((j = job_find(name)) == NULL || j->retiring)
		return (0);
	for (i = 0; i < j->ninsts; i++) {
		if (j->insts[i]->state != JOB_RUNNING)
			return (0);
	}
	return (1);
}

/* The instance is not held back any more. */
void
deps_unwait(struct inst *in)
{
	if (!in->dep_wait)
		return;
	TAILQ_REMOVE(&deps_waits, in, dep_entry);
	in->dep_wait = 0;
}

/*
 * LIFE_A_DEPS: hold a start back until each job in depends is RUNNING:
 * return 1 (the instance waits on the list), or 0 when it may start.
 */
int
deps_wait(struct inst *in)
{
	const struct job_spec *spec = in->job->spec;
	size_t i;

	for (i = 0; i < spec->ndepends; i++) {
		if (deps_is_up(spec->depends[i]))
			continue;
		/*
		 * On the list before the pull: a dependency that is RUNNING
		 * at once, inside the pull, must find this start waiting.
		 */
		if (!in->dep_wait) {
			in->dep_wait = 1;
			TAILQ_INSERT_TAIL(&deps_waits, in, dep_entry);
			log_info(
			    "%s: waiting for %s", in->label, spec->depends[i]);
		}
		inst_reason(in, "waiting for %s", spec->depends[i]);
		deps_pull(spec->depends[i]);
		return (1);
	}
	deps_unwait(in);
	return (0);
}

/* Some instance became RUNNING: see which waiting starts may go. */
static int
deps_recheck(sd_event_source *s, void *arg)
{
	struct inst *in, *tmp;

	deps_check = sd_event_source_disable_unref(deps_check);
	TAILQ_FOREACH_SAFE(in, &deps_waits, dep_entry, tmp)
		inst_feed(in, LIFE_EV_RECHECK);
	return (0);
}

static void
deps_recheck_later(void)
{
	if (deps_check != NULL || vigild.shutting_down)
		return;
	if (sd_event_add_defer(
	        evloop_event(), &deps_check, deps_recheck, NULL) < 0)
		deps_check = NULL;
}

/*
 * At shutdown, every instance of job j is down: the jobs it depends on
 * may stop once no other active job needs them.
 */
static void
deps_job_down(struct job *j)
{
	struct job *dep;
	size_t d;
	int i;

	for (d = 0; d < j->spec->ndepends; d++) {
		if ((dep = job_find(j->spec->depends[d])) == NULL ||
		    dep->dependents == 0 || --dep->dependents > 0)
			continue;
		for (i = 0; i < dep->ninsts; i++)
			inst_stop(dep->insts[i]);
		/* Each step of a dependency chain may take a stop_timeout. */
		sdnotify_extend_timeout();
	}
}

/* An instance's state changed from was: wake what waits on it. */
static void
deps_changed(struct inst *in, enum job_state was)
{
	if (job_state_is_active(was) && !job_state_is_active(in->state) &&
	    in->job->nactive == 0 && vigild.shutting_down)
		deps_job_down(in->job);
	if (in->state == JOB_RUNNING && !TAILQ_EMPTY(&deps_waits))
		deps_recheck_later();
}

/*
 * Shutdown: stop the jobs no active job needs; the others follow, each
 * once its last dependent is down.
 */
void
deps_shutdown(void)
{
	struct job *j, *dep;
	size_t d;
	int i;

	deps_check = sd_event_source_disable_unref(deps_check);
	RB_FOREACH(j, job_tree, &vigild.jobs)
		j->dependents = 0;
	RB_FOREACH(j, job_tree, &vigild.jobs) {
		if (j->nactive == 0)
			continue;
		for (d = 0; d < j->spec->ndepends; d++) {
			if ((dep = job_find(j->spec->depends[d])) != NULL)
				dep->dependents++;
		}
	}
	RB_FOREACH(j, job_tree, &vigild.jobs) {
		if (j->dependents > 0)
			continue;
		for (i = 0; i < j->ninsts; i++)
			inst_stop(j->insts[i]);
	}
}

void
deps_free(void)
{
	deps_check = sd_event_source_disable_unref(deps_check);
}

const struct inst_observer deps_observer = { .changed = deps_changed };
