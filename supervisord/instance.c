/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * An instance's life carried out.  Every event (an operator's start or
 * stop, a timer, a reaped leader, READY=1, a slot, a message) goes through
 * inst_feed(): life_step() (lib/life.c) decides, and this file only does
 * what it said, in the order of the action bits: signals, timers, the lock
 * (claim.c), a run (run.c), the kind's own effects (kind_ops: periodic.c,
 * dispatch.c), and the visible state with what hangs on it (waiters, the
 * dependency wait list, the reload swap, systemd's STATUS=).
 *
 * The modules that carry actions out and feed the lifecycle back (run.c,
 * run-end.c, ready.c, prober.c, deps.c) are reached through inst_hooks,
 * filled in at start (vigild.c), so that they may call this file; the
 * others (claim.c, poststart.c, alert.c, joblog.c, state.c) by name.
 * Those that hang on a state change (STATUS=, waiters, the reload swap,
 * hooks, alerts, ...) are observers (inst_observe), called in order.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "effects.h"
#include "evloop.h"
#include "inst.h"
#include "jobs.h"
#include "log.h"
#include "monotime.h"
#include "proc.h"
#include "signame.h"
#include "state.h"
#include "vigild.h"
#include "xmalloc.h"

/* Quick looks at a lock that a child about to exec may still hold. */
#define INST_QUICK_RETRY (1 * DURATION_USEC_PER_MSEC)
#define INST_QUICK_RETRIES 50
/* Poll interval bounds while BLOCKED or waiting for a killed group. */
#define INST_RECHECK_MIN (50 * DURATION_USEC_PER_MSEC)
#define INST_RECHECK_MAX (2 * DURATION_USEC_PER_SEC)
/* Timer slack of a run's timeout. */
#define INST_DEADLINE_ACCURACY (1000ULL)

struct inst_hooks inst_hooks;

#define INST_OBSERVERS_MAX 16
static const struct inst_observer *inst_observers[INST_OBSERVERS_MAX];
static size_t inst_nobservers;

/* o hears of every instance's changes from now on, after those before. */
void
inst_observe(const struct inst_observer *o)
{
	if (inst_nobservers == INST_OBSERVERS_MAX)
		fatalx(
		    "inst_observe: more than %d observers", INST_OBSERVERS_MAX);
	inst_observers[inst_nobservers++] = o;
}

static void
inst_changed(struct inst *in, enum job_state was)
{
	size_t i;

	for (i = 0; i < inst_nobservers; i++) {
		if (inst_observers[i]->changed != NULL)
			inst_observers[i]->changed(in, was);
	}
}

static void
inst_gone(struct inst *in)
{
	size_t i;

	for (i = 0; i < inst_nobservers; i++) {
		if (inst_observers[i]->gone != NULL)
			inst_observers[i]->gone(in);
	}
}

static TAILQ_HEAD(, inst) inst_group_waits = TAILQ_HEAD_INITIALIZER(
    inst_group_waits);

static void inst_do(
    struct inst *, const struct inst_event *, const struct life_step *);

/* The effects of a kind of job: service, periodic or queue. */
const struct kind_ops *
inst_kind_of(const struct job_spec *spec)
{
	switch (spec->kind) {
	case CONF_KIND_PERIODIC:
		return (&periodic_kind);
	case CONF_KIND_QUEUE:
		return (&queue_kind);
	default:
		return (&service_kind);
	}
}

/* How many instances a spec makes: copies, or a queue's slots. */
int
inst_kind_ninsts(const struct job_spec *spec)
{
	const struct kind_ops *k = inst_kind_of(spec);

	return (k->ninsts != NULL ? k->ninsts(spec) : spec->instances);
}

/* How long a stop of the spec's runs may take before SIGKILL. */
uint64_t
inst_kind_stop_time(const struct job_spec *spec)
{
	const struct kind_ops *k = inst_kind_of(spec);

	return (k->stop_time != NULL ? k->stop_time(spec) : spec->stop_timeout);
}

/* The kind's effects of an instance. */
const struct kind_ops *
inst_kind(const struct inst *in)
{
	return (in->job->kind);
}

/*
 * Show the state life is in: keep the counts of active instances and
 * tell the modules above (waiters, dependencies, reload, STATUS=).
 */
static void
inst_show_state(struct inst *in)
{
	enum job_state was = in->state, s = life_state(in->life.phase);

	if (was == s)
		return;
	log_debug("%s: %s -> %s (%s)", in->label, job_state_name(was),
	    job_state_name(s), life_phase_name(in->life.phase));
	vigild.nstate[was]--;
	vigild.nstate[s]++;
	in->state = s;
	in->since = monotime_now();
	if (job_state_is_active(was) && !job_state_is_active(s)) {
		vigild.nactive--;
		in->job->nactive--;
	} else if (!job_state_is_active(was) && job_state_is_active(s)) {
		vigild.nactive++;
		in->job->nactive++;
	}
	inst_changed(in, was);
}

static int
inst_timer_fired(sd_event_source *s, uint64_t usec, void *arg)
{
	struct inst *in = arg;

	in->timer = sd_event_source_disable_unref(in->timer);
	inst_feed(in, life_timer_event(in->life.timer));
	return (0);
}

/* Arm the instance's timer for usec (0 with LIFE_TIMER_NONE: cancel). */
static void
inst_timer_set(struct inst *in, enum life_timer t, uint64_t usec)
{
	in->timer = sd_event_source_disable_unref(in->timer);
	if (t == LIFE_TIMER_NONE)
		return;
	evloop_timer_in(
	    &in->timer, CLOCK_MONOTONIC, usec, 1, inst_timer_fired, in);
}

static int
inst_stage_timer_fired(sd_event_source *s, uint64_t usec, void *arg)
{
	struct inst *in = arg;

	in->run.stage_timer =
	    sd_event_source_disable_unref(in->run.stage_timer);
	inst_feed(in, life_timer_event(in->life.stage_timer));
	return (0);
}

/* Arm the timer of the run's stage (LIFE_TIMER_NONE: cancel it). */
static void
inst_stage_timer_set(struct inst *in, enum life_timer t, uint64_t usec)
{
	in->run.stage_timer =
	    sd_event_source_disable_unref(in->run.stage_timer);
	if (t == LIFE_TIMER_NONE)
		return;
	evloop_timer_in(&in->run.stage_timer, CLOCK_MONOTONIC, usec, 1000,
	    inst_stage_timer_fired, in);
}

static int
inst_deadline_fired(sd_event_source *s, uint64_t usec, void *arg)
{
	struct inst *in = arg;

	in->deadline = sd_event_source_disable_unref(in->deadline);
	inst_feed(in, LIFE_EV_TIMEOUT);
	return (0);
}

/* A periodic or queue run's timeout, from its exec. */
static void
inst_deadline_arm(struct inst *in)
{
	in->deadline = sd_event_source_disable_unref(in->deadline);
	evloop_timer_at(&in->deadline, CLOCK_MONOTONIC,
	    in->run.started + in->job->spec->timeout, INST_DEADLINE_ACCURACY,
	    inst_deadline_fired, in);
}

static int
inst_watchdog_fired(sd_event_source *s, uint64_t usec, void *arg)
{
	struct inst *in = arg;

	in->watchdog = sd_event_source_disable_unref(in->watchdog);
	inst_feed(in, LIFE_EV_WATCHDOG);
	return (0);
}

/* (Re)arm the watchdog of a ready = "notify" run with watchdog set. */
void
inst_watchdog_arm(struct inst *in)
{
	if (in->job->spec->watchdog == 0)
		return;
	in->watchdog = sd_event_source_disable_unref(in->watchdog);
	evloop_timer_in(&in->watchdog, CLOCK_MONOTONIC, in->job->spec->watchdog,
	    1000, inst_watchdog_fired, in);
}

/* stop_signal (and CONT, so that a stopped group sees it) to the run. */
static void
inst_term(struct inst *in)
{
	const struct job_spec *spec = in->job->spec;

	if (in->cg_fd != -1)
		joblog_mark(in, "stopping: sending %s to its cgroup",
		    signame_name(spec->stop_signal));
	else
		joblog_mark(in, "stopping: sending %s to %s %ld",
		    signame_name(spec->stop_signal),
		    spec->kill_group ? "process group" : "pid",
		    (long)(in->run.pgid != 0 ? in->run.pgid : in->run.pid));
	inst_hooks.signal(in, spec->stop_signal);
	if (spec->stop_signal != SIGKILL && spec->stop_signal != SIGCONT)
		inst_hooks.signal(in, SIGCONT);
}

/* LIFE_A_DRAIN: the message may finish, or (drain_timeout 0) cancel. */
static void
inst_drain(struct inst *in)
{
	char buf[32];

	if (in->job->spec->drain_timeout == 0) {
		joblog_mark(in,
		    "stopping: asking message %" PRId64 " to cancel",
		    in->q.msg.id);
		return;
	}
	duration_format(in->job->spec->drain_timeout, buf, sizeof(buf));
	joblog_mark(in,
	    "stopping: letting message %" PRId64 " finish (up to %s)",
	    in->q.msg.id, buf);
}

/* The run's group is over (or was never waited for). */
static void
inst_group_done(struct inst *in)
{
	if (in->gw_entry.tqe_prev != NULL) {
		TAILQ_REMOVE(&inst_group_waits, in, gw_entry);
		in->gw_entry.tqe_prev = NULL;
	}
	inst_hooks.session_remove(in);
	in->run.pgid = 0;
}

/* Recheck every instance whose leader is gone but whose group was not. */
void
inst_check_groups(void)
{
	struct inst *in, *tmp;

	TAILQ_FOREACH_SAFE(in, &inst_group_waits, gw_entry, tmp) {
		if (!inst_hooks.alive(in))
			inst_feed(in, LIFE_EV_GROUP_GONE);
	}
}

/*
 * The run is stopped for a reason of its own (an event of a timer or a
 * probe): say so.  Return 0 if e is not such an event.
 */
static int
inst_said_stop(struct inst *in, const struct inst_event *e)
{
	const struct job_spec *spec = in->job->spec;
	char buf[32];

	switch (e->in.ev) {
	case LIFE_EV_READY_TIMEOUT:
		log_warnx("%s: no %s within ready_timeout (%s): stopping it",
		    in->label,
		    spec->forking ? "daemon pid" :
		        spec->ready == CONF_READY_PROBE ?
		                    "answer to its ready probe" :
		                    "READY=1",
		    duration_format(spec->ready_timeout, buf, sizeof(buf)));
		inst_reason(in, "ready timeout");
		return (1);
	case LIFE_EV_WATCHDOG:
		if (e->trigger)
			log_warnx(
			    "%s: WATCHDOG=trigger: stopping it", in->label);
		else
			log_warnx("%s: no WATCHDOG=1 within %s: stopping it",
			    in->label,
			    duration_format(spec->watchdog, buf, sizeof(buf)));
		inst_reason(in, "watchdog");
		return (1);
	case LIFE_EV_UNHEALTHY:
		log_warnx("%s: %d health checks failed in a row (%s): "
		          "restarting it",
		    in->label, spec->health_failures, spec->health.text);
		joblog_mark(in,
		    "unhealthy: %d health checks failed in a row "
		    "(%s): stopping it",
		    spec->health_failures, spec->health.text);
		inst_reason(in, "unhealthy");
		return (1);
	case LIFE_EV_TIMEOUT:
		duration_format(spec->timeout, buf, sizeof(buf));
		log_warnx("%s: still running after timeout (%s): stopping it",
		    in->label, buf);
		joblog_mark(in, "timeout (%s): stopping the run", buf);
		return (1);
	case LIFE_EV_DRAIN_TIMEOUT:
		duration_format(spec->drain_timeout, buf, sizeof(buf));
		log_warnx("%s: message %" PRId64 " still running after "
		          "drain_timeout (%s): stopping it",
		    in->label, in->q.msg.id, buf);
		return (1);
	case LIFE_EV_STOP_TIMEOUT:
		log_warnx("%s: still running after stop_timeout, sending KILL",
		    in->label);
		joblog_mark(in,
		    "still running after stop_timeout (%s): sending KILL",
		    duration_format(spec->stop_timeout, buf, sizeof(buf)));
		return (1);
	default:
		return (0);
	}
}

/*
 * The run failed to start (cause): its reason, and vigild's log unless
 * it was said where it was found (quiet).
 */
void
inst_exec_said(struct inst *in, const char *cause, int quiet)
{
	if (!quiet)
		log_warnx("%s: %s", in->label, cause);
	inst_reason(in, "%s", cause);
}

/* Logs and reasons that belong to an event rather than to an action. */
static void
inst_said(
    struct inst *in, const struct inst_event *e, const struct life_step *st)
{
	if (inst_said_stop(in, e))
		return;
	switch (e->in.ev) {
	case LIFE_EV_READY:
		if (in->job->spec->ready != CONF_READY_PROBE) /* prober.c */
			log_info("%s: ready", in->label);
		break;
	case LIFE_EV_EXEC_FAILED:
		if (st->actions & LIFE_A_EXEC_FAILED) /* else a step's */
			inst_exec_said(in, e->cause, e->quiet);
		break;
	case LIFE_EV_LOCK_OK:
		if (life_state(st->from) == JOB_BLOCKED)
			log_info("%s: lock reclaimed", in->label);
		memset(&in->leftover, 0, sizeof(in->leftover));
		break;
	case LIFE_EV_EXIT:
		if (st->from == LIFE_SPAWNED || st->from == LIFE_RUNNING) {
			if (in->life.run == LIFE_RUN_GROUP && in->cg_fd != -1)
				log_info("%s: stopping what is left of its "
				         "cgroup",
				    in->label);
			else if (in->life.run == LIFE_RUN_GROUP)
				log_info("%s: stopping what is left of process "
				         "group %ld",
				    in->label, (long)in->run.pgid);
		}
		break;
	default:
		break;
	}
}

/*
 * A start failed before fork (or without its lock): say why; when vigild
 * ran out of descriptors, say that first, with its limit (status lists
 * such jobs: INST_NO_FDS).
 */
static void
inst_start_failed(struct inst *in, const char *cause)
{
	struct rlimit rl;
	char *why = NULL;

	inst_hooks.close_stdin(in);
	/* ENFILE's text begins with EMFILE's. */
	if (cause != NULL && strstr(cause, strerror(EMFILE)) != NULL) {
		if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
			rl.rlim_cur = RLIM_INFINITY;
		if (rl.rlim_cur == RLIM_INFINITY)
			xasprintf(&why, "%s: %s", INST_NO_FDS, cause);
		else
			xasprintf(&why, "%s (vigild may open %llu): %s",
			    INST_NO_FDS, (unsigned long long)rl.rlim_cur,
			    cause);
		cause = why;
	}
	log_warnx("%s: cannot start: %s", in->label, cause);
	joblog_mark(in, "cannot start: %s", cause);
	inst_reason(in, "%s", cause);
	free(why);
	alert_failed(in, -1, 0);
}

/* The effects of the actions in the first half: before the run's. */
static void
inst_do_early(
    struct inst *in, const struct inst_event *e, const struct life_step *st)
{
	const struct kind_ops *k = inst_kind(in);
	unsigned int a = st->actions;

	if (a & LIFE_A_CANCEL_WATCHDOG)
		in->watchdog = sd_event_source_disable_unref(in->watchdog);
	if ((a & LIFE_A_DISARM_SLOT) && k->slot_disarm != NULL)
		k->slot_disarm(in);
	if ((a & LIFE_A_ARM_SLOT) && k->slot_arm != NULL)
		k->slot_arm(in);
	if ((a & LIFE_A_NEXT_SLOT) && k->slot_next != NULL)
		k->slot_next(in);
	if ((a & LIFE_A_SKIP) && k->slot_skip != NULL)
		k->slot_skip(in);
	if (a & LIFE_A_RECORD_END)
		inst_hooks.ended(in, e->in.status, e->in.uptime, st);
	if (a & LIFE_A_DEPS_UNWAIT)
		inst_hooks.let_go(in);
	if ((a & LIFE_A_MSG_DROP) && k->msg_drop != NULL)
		k->msg_drop(in);
	if (a & LIFE_A_START_FAILED)
		inst_start_failed(in, e->cause);
	if (a & LIFE_A_HANDOVER)
		claim_failed(in);
	if (a & LIFE_A_RELEASE)
		claim_release(in);
	if (a & LIFE_A_LEFTOVER_TERM)
		claim_leftover_term(in, e->holder);
	if (a & LIFE_A_LEFTOVER_KILL)
		claim_leftover_kill(in, e->holder);
	if (a & LIFE_A_NAME_HOLDER)
		claim_name_holder(in, e->lock_fd);
	if (a & LIFE_A_GROUP_DONE)
		inst_group_done(in);
}

/* The effects of the actions in the second half: the run's. */
static void
inst_do_late(struct inst *in, const struct life_step *st)
{
	unsigned int a = st->actions;

	if (a & LIFE_A_CANCEL_DEADLINE)
		in->deadline = sd_event_source_disable_unref(in->deadline);
	if (a & LIFE_A_DRAIN)
		inst_drain(in);
	if (a & LIFE_A_TERM)
		inst_term(in);
	if (a & LIFE_A_KILL)
		inst_hooks.signal(in, SIGKILL);
	if (a & LIFE_A_REASON_CLEAR)
		inst_reason(in, NULL);
	if (a & LIFE_A_REASON_STOPPED)
		inst_reason(in, "stopped while %s",
		    job_state_name(life_state(st->from)));
	if (a & LIFE_A_RECORD_READY) {
		state_run_ready(in);
		poststart_run(in);
	}
	if (a & LIFE_A_ARM_WATCHDOG)
		inst_watchdog_arm(in);
	if (a & LIFE_A_ARM_DEADLINE)
		inst_deadline_arm(in);
	if (st->timer_set)
		inst_timer_set(in, st->timer, st->usec);
	if (st->stage_timer_set)
		inst_stage_timer_set(in, st->stage_timer, st->stage_usec);
}

/* What a new phase says in vigild's log. */
static void
inst_log_phase(struct inst *in, const struct life_step *st)
{
	char buf[32];

	if (st->timer_set && st->timer == LIFE_TIMER_BACKOFF) {
		in->next_start = monotime_now() + in->life.delay;
		log_info("%s: restarting in %s (failed start %u)", in->label,
		    duration_format(in->life.delay, buf, sizeof(buf)),
		    in->life.failures);
	} else if (in->life.phase == LIFE_FATAL && st->from != LIFE_FATAL)
		log_warnx("%s: FATAL after %u failed starts in a row: %s",
		    in->label, in->life.failures, in->reason ? in->reason : "");
}

/* The answer to LIFE_A_DEPS: held back by a dependency, or free to go. */
static void
inst_ask_deps(struct inst *in)
{
	inst_feed(
	    in, inst_hooks.held_back(in) ? LIFE_EV_DEPS_WAIT : LIFE_EV_DEPS_OK);
}

/* The answer to LIFE_A_LOCK: the claim's result. */
static void
inst_ask_lock(struct inst *in)
{
	struct inst_event e;
	struct claim_result r;

	memset(&e, 0, sizeof(e));
	e.in.now = monotime_now();
	e.lock_fd = -1;
	switch (claim_take(in, &r)) {
	case CLAIM_TAKEN:
		e.in.ev = LIFE_EV_LOCK_OK;
		break;
	case CLAIM_LEFTOVER:
		e.in.ev = LIFE_EV_LOCK_LEFTOVER;
		e.in.same = r.same;
		e.holder = r.holder;
		break;
	case CLAIM_FOREIGN:
		e.in.ev = LIFE_EV_LOCK_FOREIGN;
		e.in.spawning = inst_hooks.nforking() > 0;
		e.lock_fd = r.fd;
		break;
	case CLAIM_WAIT:
		e.in.ev = LIFE_EV_LOCK_WAIT;
		break;
	default:
		e.in.ev = LIFE_EV_LOCK_ERROR;
		e.cause = r.cause;
		break;
	}
	inst_feed_event(in, &e);
	claim_result_clear(&r);
}

/* The answer to LIFE_A_SPAWN: the run began, or could not. */
static void
inst_ask_spawn(struct inst *in)
{
	struct inst_event e;
	char *cause = NULL, *exec_cause = NULL;
	int done = 0;

	memset(&e, 0, sizeof(e));
	if (!claim_trusted(in, &cause) ||
	    inst_hooks.fork(in, in->life.stage, &cause, &done, &exec_cause) ==
	        -1) {
		e.in.ev = LIFE_EV_SPAWN_FAILED;
		e.cause = cause;
		inst_feed_event(in, &e);
		free(cause);
		return;
	}
	inst_feed(in, LIFE_EV_SPAWNED);
	if (!done)
		return;
	if (exec_cause == NULL) {
		inst_feed(in, LIFE_EV_EXEC_OK);
		return;
	}
	e.in.ev = LIFE_EV_EXEC_FAILED;
	e.cause = exec_cause;
	inst_feed_event(in, &e);
	free(exec_cause);
}

static void
inst_do(struct inst *in, const struct inst_event *e, const struct life_step *st)
{
	inst_do_early(in, e, st);
	inst_do_late(in, st);
	inst_log_phase(in, st);
	inst_show_state(in);
	if (st->actions & LIFE_A_KICK && inst_kind(in)->kick != NULL)
		inst_kind(in)->kick(in->job);
	if (st->sactions != 0)
		inst_hooks.stage(in, e, st); /* never with the three below */
	if (st->actions & LIFE_A_DEPS)
		inst_ask_deps(in);
	else if (st->actions & LIFE_A_LOCK)
		inst_ask_lock(in);
	else if (st->actions & LIFE_A_SPAWN)
		inst_ask_spawn(in);
}

/* The numbers life_step() decides from. */
static void
inst_params(const struct inst *in, struct life_params *p)
{
	p->spec = in->job->spec;
	p->shutdown = vigild.shutting_down;
	p->quick_retry = INST_QUICK_RETRY;
	p->quick_max = INST_QUICK_RETRIES;
	p->recheck_min = INST_RECHECK_MIN;
	p->recheck_max = INST_RECHECK_MAX;
	/* A cluster service (its claim made the lease slot): hands over. */
	p->handover_after =
	    in->lease != NULL && in->job->spec->kind == CONF_KIND_SERVICE ?
	    (unsigned int)in->job->spec->cluster_handover_after :
	    0;
}

/* Put an event with its facts through the lifecycle, and carry it out. */
void
inst_feed_event(struct inst *in, struct inst_event *e)
{
	struct life_params p;
	struct life_step st;

	inst_params(in, &p);
	if (e->in.now == 0)
		e->in.now = monotime_now();
	life_step(&in->life, &p, &e->in, &st);
	if (st.ignored) {
		log_debug("%s: %s ignored in %s", in->label,
		    life_event_name(e->in.ev), life_phase_name(st.from));
		return;
	}
	inst_said(in, e, &st);
	inst_do(in, e, &st);
	inst_hooks.probe_sync(in);
}

/* Put an event without facts of its own through the lifecycle. */
void
inst_feed(struct inst *in, enum life_event ev)
{
	struct inst_event e;

	memset(&e, 0, sizeof(e));
	e.in.ev = ev;
	if (ev == LIFE_EV_KILL_POLL && in->life.run == LIFE_RUN_GROUP)
		e.in.group_alive = inst_hooks.alive(in);
	inst_feed_event(in, &e);
}

/*
 * The leader of the run was reaped with wait status status: decide, and
 * wait for what is left of its group before the decision is applied.
 */
void
inst_exited(struct inst *in, int status, uint64_t uptime)
{
	struct inst_event e;

	memset(&e, 0, sizeof(e));
	e.in.ev = LIFE_EV_EXIT;
	e.in.status = status;
	e.in.uptime = uptime;
	e.in.limit_reached = alert_limit_reached(in);
	e.in.rnd = arc4random();
	e.in.group_left = inst_hooks.alive(in);
	if (e.in.group_left)
		TAILQ_INSERT_TAIL(&inst_group_waits, in, gw_entry);
	inst_feed_event(in, &e);
}

/* The run's exec failed (cause), known at the reap or from the report. */
void
inst_exec_failed(struct inst *in, const char *cause, int quiet)
{
	struct inst_event e;

	memset(&e, 0, sizeof(e));
	e.in.ev = LIFE_EV_EXEC_FAILED;
	e.cause = cause;
	e.quiet = quiet;
	inst_feed_event(in, &e);
}

/* WATCHDOG=trigger from the job: as a late WATCHDOG=1. */
void
inst_watchdog_trigger(struct inst *in)
{
	struct inst_event e;

	memset(&e, 0, sizeof(e));
	e.in.ev = LIFE_EV_WATCHDOG;
	e.trigger = 1;
	inst_feed_event(in, &e);
}

/*
 * Start an instance (operator: the operator asked): the operator's stop
 * is forgotten (life_intent_start).  During a reload the new spec starts
 * it once the old one is down.
 */
static void
inst_start_by(struct inst *in, int operator)
{
	struct inst_event e;

	if (in->job->retiring)
		return;
	if (in->job->next_spec != NULL) {
		life_intent_start(&in->life, operator);
		in->reload_start = 1;
		return;
	}
	memset(&e, 0, sizeof(e));
	e.in.ev = LIFE_EV_START;
	e.in.operator= operator;
	inst_feed_event(in, &e);
}

/* Start an instance: a dependent's pull, a watch, a peer's word. */
void
inst_start(struct inst *in)
{
	inst_start_by(in, 0);
}

/* The operator starts an instance: it stays up (autostart or not). */
void
inst_start_operator(struct inst *in)
{
	inst_start_by(in, 1);
}

/* Autostart: a periodic job waits for its slot (or catches up). */
void
inst_arm(struct inst *in)
{
	const struct kind_ops *k = inst_kind(in);
	struct inst_event e;

	memset(&e, 0, sizeof(e));
	e.in.ev = LIFE_EV_ARM;
	if (!vigild.started && in->job->spec->catch_up && k->missed != NULL &&
	    k->missed(in)) {
		log_info("%s: a slot passed while vigild was down: running it",
		    in->label);
		e.in.missed = 1;
	}
	inst_feed_event(in, &e);
}

/* Stop an instance; a pending restart or reclaim is called off. */
void
inst_stop(struct inst *in)
{
	inst_feed(in, LIFE_EV_STOP);
}

/*
 * The operator stops an instance: it stays down, across reloads and
 * restarts of vigild, until a start.
 */
void
inst_stop_operator(struct inst *in)
{
	struct inst_event e;

	memset(&e, 0, sizeof(e));
	e.in.ev = LIFE_EV_STOP;
	e.in.operator= 1;
	inst_feed_event(in, &e);
}

/* Send a signal to an instance's processes, if it has any. */
void
inst_signal(struct inst *in, int sig)
{
	if (in->run.pid > 0)
		inst_hooks.signal(in, sig);
}

/* Make instance index of job j, STOPPED. */
void
inst_init(struct inst *in, struct job *j, int index)
{
	memset(in, 0, sizeof(*in));
	in->job = j;
	in->index = index;
	if (j->ninsts > 1)
		xasprintf(&in->label, "%s@%d", j->name, index);
	else
		in->label = xstrdup(j->name);
	life_init(&in->life);
	in->lock_fd = in->record_fd = in->run.stdin_fd = in->cg_fd = -1;
	in->state = JOB_STOPPED;
	vigild.nstate[JOB_STOPPED]++;
	in->since = monotime_now();
	TAILQ_INIT(&in->waiters);
}

/* Free what an inactive instance holds. */
void
inst_clear(struct inst *in)
{
	const struct kind_ops *k = inst_kind(in);

	vigild.nstate[in->state]--;
	inst_hooks.let_go(in);
	inst_gone(in);
	inst_group_done(in);
	in->timer = sd_event_source_disable_unref(in->timer);
	in->deadline = sd_event_source_disable_unref(in->deadline);
	in->watchdog = sd_event_source_disable_unref(in->watchdog);
	inst_hooks.forget(in);
	claim_release(in);
	if (k->slot_disarm != NULL)
		k->slot_disarm(in);
	if (k->msg_drop != NULL)
		k->msg_drop(in);
	free(in->label);
	free(in->reason);
}
