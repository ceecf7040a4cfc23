/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The life of an instance: the table of (phase, event) -> rule at the end
 * of this file, and the rules above it.  A rule changes struct life and
 * says what to do in struct life_step; it never calls out.  The questions
 * a newcomer asks first, and where their answer is:
 *   where is BLOCKED handled?       rows LIFE_RECLAIM, _RECLAIM_KILL and
 *                                   LIFE_FOREIGN; rules life_leftover and
 *                                   life_foreign (life-lock.c);
 *   what does a start during a stop do?  rows LIFE_DRAIN/_TERM/_KILL,
 *                                   column LIFE_EV_START: life_start_later
 *                                   (then = START), applied once the run
 *                                   is gone: life_gone -> life_apply ->
 *                                   life_settle;
 *   where is readiness decided?     row LIFE_SPAWNED, columns
 *                                   LIFE_EV_EXEC_OK (ready = "exec"),
 *                                   LIFE_EV_READY (ready = "notify" or a
 *                                   probe) and
 *                                   LIFE_EV_MAINPID (type = "forking").
 */

#include "config.h"

#include <stddef.h>
#include <string.h>

#include "conf.h"
#include "life-int.h"

typedef void (*life_rule)(struct life_ctx *);

static void life_apply(struct life_ctx *, struct job_decision);

/* A new instance: STOPPED, not wanted, no lock. */
void
life_init(struct life *l)
{
	memset(l, 0, sizeof(*l));
	l->phase = LIFE_STOPPED;
}

/*
 * Was the end of the current run asked for (a stop, a restart, the
 * shutdown), rather than something the restart policy judges?
 */
int
life_stop_asked(const struct life *l, const struct life_params *p)
{
	return (l->then != LIFE_THEN_POLICY || p->shutdown || !l->want);
}

int
life_kind(const struct life_ctx *c, enum conf_kind k)
{
	return (c->p->spec->kind == k);
}

void
life_do(struct life_ctx *c, unsigned int actions)
{
	c->out->actions |= actions;
}

void
life_timer(struct life_ctx *c, enum life_timer t, uint64_t usec)
{
	c->out->timer_set = 1;
	c->out->timer = t;
	c->out->usec = t == LIFE_TIMER_NONE ? 0 : usec;
	c->l->timer = t;
}

void
life_phase(struct life_ctx *c, enum life_phase ph)
{
	c->l->phase = ph;
}

/* Is the run being stopped (DRAIN, TERM, KILL)? */
int
life_stopping(const struct life_ctx *c)
{
	return (life_state(c->l->phase) == JOB_STOPPING);
}

/* Fork a run (its lock is held), from its first command. */
static void
life_spawn(struct life_ctx *c)
{
	life_stage_begin(c);
	life_do(c, LIFE_A_SPAWN);
}

int
life_blocked(enum life_phase ph)
{
	return (ph == LIFE_RECLAIM || ph == LIFE_RECLAIM_KILL ||
	    ph == LIFE_FOREIGN);
}

/* Into STOPPED from a phase without a run: nothing may be left held. */
static void
life_abandon(struct life_ctx *c)
{
	life_do(c, LIFE_A_MSG_DROP | LIFE_A_DEPS_UNWAIT | LIFE_A_RELEASE);
	c->l->msg = 0;
	c->l->lock = 0;
	life_timer(c, LIFE_TIMER_NONE, 0);
	life_phase(c, LIFE_STOPPED);
}

/* Begin stopping the run: stop_signal, SIGKILL after stop_timeout. */
static void
life_terminate(struct life_ctx *c)
{
	if (c->l->phase == LIFE_KILL)
		return; /* SIGKILL was sent already */
	life_phase(c, LIFE_TERM);
	life_do(c, LIFE_A_TERM);
	life_timer(c, LIFE_TIMER_STOP, c->p->spec->stop_timeout);
}

/* Stop a queue run gently: its message may finish within drain_timeout. */
void
life_drain(struct life_ctx *c)
{
	life_do(c, LIFE_A_DRAIN);
	if (c->p->spec->drain_timeout == 0) {
		c->l->cause = LIFE_CAUSE_DRAIN; /* asked to cancel */
		life_terminate(c);
		return;
	}
	life_phase(c, LIFE_DRAIN);
	life_timer(c, LIFE_TIMER_DRAIN, c->p->spec->drain_timeout);
}

/* Stop the run for a reason of its own (timeouts, watchdog). */
void
life_stop_for(struct life_ctx *c, enum life_cause cause)
{
	if (c->l->cause == LIFE_CAUSE_NONE)
		c->l->cause = cause;
	life_terminate(c);
}

/* The lock is ours: a run, or for a queue slot without message, WAITING. */
static void
life_locked_start(struct life_ctx *c)
{
	life_timer(c, LIFE_TIMER_NONE, 0);
	c->l->quick = 0;
	if (life_kind(c, CONF_KIND_QUEUE) && !c->l->msg) {
		life_phase(c, LIFE_WAITING);
		life_do(c, LIFE_A_REASON_CLEAR | LIFE_A_KICK);
		return;
	}
	life_spawn(c);
}

/* Check the dependencies, then the lock, then run. */
void
life_try_start(struct life_ctx *c)
{
	if (!c->l->want || c->p->shutdown) {
		life_abandon(c);
		return;
	}
	life_do(c, LIFE_A_DEPS);
}

/* Run now if the lock is held (a restart), else take it first. */
static void
life_respawn(struct life_ctx *c)
{
	if (c->l->lock)
		life_spawn(c);
	else
		life_try_start(c);
}

/* A start of an instance with no run: from the top. */
static void
life_launch(struct life_ctx *c)
{
	c->l->want = 1;
	c->l->failures = 0;
	c->l->then = LIFE_THEN_POLICY;
	life_do(c, LIFE_A_REASON_CLEAR);
	life_try_start(c);
}

/* The decision of a start that failed before fork (or without a lock). */
void
life_start_failed(struct life_ctx *c)
{
	struct job_outcome o;
	struct job_decision d;

	life_do(c, LIFE_A_START_FAILED);
	c->l->stage = LIFE_STAGE_NONE;
	memset(&o, 0, sizeof(o));
	o.exec_failed = 1;
	o.failures = c->l->failures;
	o.limit_reached = c->in->limit_reached;
	o.stop_requested = !c->l->want || c->p->shutdown;
	job_decide(c->p->spec, &o, c->in->rnd, &d);
	c->l->failures = d.failures;
	if (life_kind(c, CONF_KIND_QUEUE)) {
		/* Not the message's fault: it goes back; the slot rests. */
		life_do(c, LIFE_A_MSG_DROP);
		c->l->msg = 0;
		if (d.state == JOB_WAITING)
			d.state = JOB_STARTING;
	}
	if (d.state == JOB_STARTING) {
		/* Never retry a start that failed before fork in a loop. */
		d.state = JOB_BACKOFF;
		d.delay = c->p->recheck_max;
	}
	c->out->decided = 1;
	c->out->decision = d;
	life_apply(c, d);
}

/* After the run: STOPPED, EXITED or WAITING, or a start asked meanwhile. */
static void
life_settle(struct life_ctx *c, enum job_state s)
{
	static const enum life_phase to[JOB_STATE_COUNT] = {
		[JOB_STOPPED] = LIFE_STOPPED,
		[JOB_EXITED] = LIFE_EXITED,
		[JOB_WAITING] = LIFE_WAITING,
	};
	int start = c->l->then == LIFE_THEN_START && !c->p->shutdown;

	c->l->then = LIFE_THEN_POLICY;
	if (start) {
		c->l->failures = 0;
		life_try_start(c);
		return;
	}
	if (s == JOB_WAITING && life_kind(c, CONF_KIND_QUEUE)) {
		/* A free slot keeps its lock: the next message. */
		life_phase(c, LIFE_WAITING);
		life_do(c, LIFE_A_REASON_CLEAR | LIFE_A_KICK);
		return;
	}
	life_do(c, LIFE_A_RELEASE);
	c->l->lock = 0;
	if (s == JOB_EXITED)
		c->l->want = 0;
	life_phase(c, to[s]);
}

/*
 * Does a failed start make a cluster service hand its lease over?  At
 * handover_after failed starts in a row here, or when the policy gives up
 * here (max_restarts, start_limit): FATAL is this node's, never the
 * cluster's.
 */
static int
life_hands_over(const struct life_ctx *c, const struct job_decision *d)
{
	unsigned int n = c->p->handover_after;

	if (n == 0 || !d->failed_start || !c->l->want || c->p->shutdown)
		return (0);
	return (d->state == JOB_FATAL ||
	    ((d->state == JOB_BACKOFF || d->state == JOB_STARTING) &&
	        d->failures >= n));
}

/*
 * The lease goes, marked as failed here, and the start waits for it
 * again as a standby: another node, one that has not failed it, takes it
 * first; this one only if none does (cluster.c).
 */
static void
life_handover(struct life_ctx *c)
{
	c->l->restarts++;
	c->l->failures = 0;
	life_do(c, LIFE_A_HANDOVER | LIFE_A_RELEASE);
	c->l->lock = 0;
	life_try_start(c);
}

/* Carry out a decision taken when a run ended (or failed to begin). */
static void
life_apply(struct life_ctx *c, struct job_decision d)
{
	life_do(c, LIFE_A_CANCEL_DEADLINE);
	if (life_hands_over(c, &d)) {
		life_handover(c);
		return;
	}
	switch (d.state) {
	case JOB_STARTING:
		c->l->restarts++;
		life_respawn(c);
		break;
	case JOB_BACKOFF:
		c->l->restarts++;
		c->l->delay = d.delay;
		life_phase(c, LIFE_BACKOFF);
		life_timer(c, LIFE_TIMER_BACKOFF, d.delay);
		break;
	case JOB_FATAL:
		life_do(c, LIFE_A_RELEASE);
		c->l->lock = 0;
		c->l->want = 0;
		life_phase(c, LIFE_FATAL);
		break;
	default: /* STOPPED, EXITED, WAITING */
		life_settle(c, d.state);
		break;
	}
}

/* The leader and its group are gone: apply what was decided at EXIT. */
static void
life_gone(struct life_ctx *c)
{
	struct job_decision d = c->l->pending;

	c->l->run = LIFE_RUN_NONE;
	life_timer(c, LIFE_TIMER_NONE, 0);
	life_do(c, LIFE_A_GROUP_DONE);
	if (c->l->fenced) {
		/* The lease went with the run: a new one before the next. */
		life_do(c, LIFE_A_RELEASE);
		c->l->lock = 0;
		c->l->fenced = 0;
	}
	if (life_stop_asked(c->l, c->p))
		d.state = JOB_STOPPED; /* a stop, a start, the shutdown came */
	life_apply(c, d);
}

/* ---- the rules of the table ---- */

/* START with no run: periodic arms its schedule too. */
static void
life_start_idle(struct life_ctx *c)
{
	if (life_kind(c, CONF_KIND_PERIODIC))
		life_do(c, LIFE_A_ARM_SLOT);
	if (life_kind(c, CONF_KIND_QUEUE) && c->l->phase == LIFE_WAITING) {
		c->l->want = 1; /* a free slot: look for a message */
		life_do(c, LIFE_A_KICK);
		return;
	}
	life_launch(c);
}

/* START while a stop is under way: start again once it is done. */
static void
life_start_later(struct life_ctx *c)
{
	c->l->want = 1;
	c->l->then = LIFE_THEN_START;
	if (life_kind(c, CONF_KIND_PERIODIC))
		life_do(c, LIFE_A_ARM_SLOT);
}

/* START during BACKOFF: a service starts now; the others wait. */
static void
life_start_backoff(struct life_ctx *c)
{
	c->l->want = 1;
	if (life_kind(c, CONF_KIND_PERIODIC))
		life_do(c, LIFE_A_ARM_SLOT);
	if (!life_kind(c, CONF_KIND_SERVICE) || c->p->shutdown)
		return; /* periodic: the next slot; queue: the slot rests */
	life_timer(c, LIFE_TIMER_NONE, 0);
	life_respawn(c);
}

/* START while starting, running or blocked: it is on its way. */
static void
life_start_busy(struct life_ctx *c)
{
	c->l->want = 1;
	if (life_kind(c, CONF_KIND_PERIODIC))
		life_do(c, LIFE_A_ARM_SLOT);
}

/* ARM (autostart) of a periodic job: wait for the slot, or catch up. */
static void
life_arm(struct life_ctx *c)
{
	c->l->want = 1;
	life_do(c, LIFE_A_ARM_SLOT);
	if (c->in->missed) {
		life_launch(c); /* catch_up: the slot missed runs now */
		return;
	}
	life_do(c, LIFE_A_REASON_CLEAR);
	life_phase(c, LIFE_WAITING);
}

/* STOP: not wanted any more; periodic slots end. */
static void
life_unwant(struct life_ctx *c)
{
	c->l->want = 0;
	life_do(c, LIFE_A_DISARM_SLOT | LIFE_A_CANCEL_DEADLINE);
}

static void
life_stop_idle(struct life_ctx *c)
{
	life_unwant(c);
}

/* STOP before a run began (dependencies, lock): nothing runs. */
static void
life_stop_pending(struct life_ctx *c)
{
	life_unwant(c);
	life_abandon(c);
}

/* STOP in WAITING: a free queue slot gives its lock up. */
static void
life_stop_waiting(struct life_ctx *c)
{
	life_unwant(c);
	life_do(c, LIFE_A_RELEASE | LIFE_A_REASON_CLEAR);
	c->l->lock = 0;
	life_phase(c, LIFE_STOPPED);
}

/* STOP in BACKOFF or BLOCKED: the restart or reclaim is called off. */
static void
life_stop_delayed(struct life_ctx *c)
{
	life_unwant(c);
	life_do(c, LIFE_A_REASON_STOPPED);
	life_abandon(c);
}

/* STOP with a run: stop_signal, or for a queue slot, a drain. */
static void
life_stop_run(struct life_ctx *c)
{
	life_unwant(c);
	c->l->then = LIFE_THEN_STOP;
	if (c->l->cause == LIFE_CAUSE_NONE)
		c->l->cause = LIFE_CAUSE_STOP;
	if (life_kind(c, CONF_KIND_QUEUE))
		life_drain(c);
	else
		life_terminate(c);
}

/* STOP while stopping: a start asked meanwhile is called off. */
static void
life_stop_stopping(struct life_ctx *c)
{
	life_unwant(c);
	c->l->then = LIFE_THEN_STOP;
}

static void
life_deps_wait(struct life_ctx *c)
{
	life_timer(c, LIFE_TIMER_NONE, 0);
	life_phase(c, LIFE_DEPS);
}

static void
life_deps_ok(struct life_ctx *c)
{
	life_do(c, LIFE_A_DEPS_UNWAIT);
	if (c->l->lock)
		life_locked_start(c);
	else
		life_do(c, LIFE_A_LOCK);
}

static void
life_lock_ok(struct life_ctx *c)
{
	c->l->lock = 1;
	life_locked_start(c);
}

/* Queue: a message was claimed for this free slot. */
static void
life_msg(struct life_ctx *c)
{
	c->l->msg = 1;
	c->l->failures = 0;
	c->l->then = LIFE_THEN_POLICY;
	life_do(c, LIFE_A_REASON_CLEAR);
	life_try_start(c);
}

static void
life_spawned(struct life_ctx *c)
{
	const struct job_spec *spec = c->p->spec;

	c->l->run = LIFE_RUN_LIVE;
	c->l->ready = 0;
	c->l->exec_failed = 0;
	c->l->cause = LIFE_CAUSE_NONE;
	c->l->then = LIFE_THEN_POLICY;
	life_phase(c, LIFE_SPAWNED);
	/* notify: READY=1; a probe: its answer; forking: the starter's exit
	 * and the main pid. */
	if ((spec->ready != CONF_READY_EXEC || spec->forking) &&
	    spec->ready_timeout > 0)
		life_timer(c, LIFE_TIMER_READY, spec->ready_timeout);
	else
		life_timer(c, LIFE_TIMER_NONE, 0);
	if (spec->kind != CONF_KIND_SERVICE && spec->timeout > 0)
		life_do(c, LIFE_A_ARM_DEADLINE);
	life_stage_spawned(c);
}

static void
life_spawn_failed(struct life_ctx *c)
{
	life_start_failed(c);
}

/*
 * The child reached exec: with ready = "exec", that is readiness (but a
 * forking job's starter is not the daemon: see life_mainpid).
 */
static void
life_exec_ok(struct life_ctx *c)
{
	if (!life_stage_main(c)) {
		c->out->ignored = 1; /* exec_start_pre's, exec_stop_post's */
		return;
	}
	if (c->p->spec->ready != CONF_READY_EXEC || c->p->spec->forking)
		return;
	c->l->ready = 1;
	life_phase(c, LIFE_RUNNING);
	life_do(c, LIFE_A_REASON_CLEAR | LIFE_A_RECORD_READY);
}

static void
life_exec_failed(struct life_ctx *c)
{
	if (c->l->stage == LIFE_STAGE_PRE || c->l->stage == LIFE_STAGE_POST) {
		life_stage_failed(c);
		return;
	}
	c->l->exec_failed = 1;
	life_do(c, LIFE_A_EXEC_FAILED);
}

/* type = "forking": the starter exited 0 and left its daemon: RUNNING. */
static void
life_mainpid(struct life_ctx *c)
{
	if (!c->p->spec->forking ||
	    (c->l->stage != LIFE_STAGE_MAIN &&
	        c->l->stage != LIFE_STAGE_PIDWAIT)) {
		c->out->ignored = 1;
		return;
	}
	life_stage_found(c);
	c->l->ready = 1;
	life_timer(c, LIFE_TIMER_NONE, 0);
	life_phase(c, LIFE_RUNNING);
	life_do(c, LIFE_A_REASON_CLEAR | LIFE_A_RECORD_READY);
}

/*
 * READY=1 of a ready = "notify" job, or the first answer of its ready
 * probe: RUNNING, the watchdog armed.
 */
static void
life_ready(struct life_ctx *c)
{
	if (c->p->spec->ready == CONF_READY_EXEC || c->l->ready) {
		c->out->ignored = 1;
		return;
	}
	c->l->ready = 1;
	life_timer(c, LIFE_TIMER_NONE, 0);
	life_phase(c, LIFE_RUNNING);
	life_do(
	    c, LIFE_A_REASON_CLEAR | LIFE_A_RECORD_READY | LIFE_A_ARM_WATCHDOG);
}

/*
 * The leader was reaped: decide what follows (job_decide), and apply it
 * once its process group is gone too; stop what is left of the group.
 */
static void
life_exit(struct life_ctx *c)
{
	const struct job_spec *spec = c->p->spec;
	struct job_outcome o;
	struct life *l = c->l;

	l->stage = LIFE_STAGE_NONE;
	memset(&o, 0, sizeof(o));
	o.exec_failed = l->exec_failed;
	o.status = c->in->status;
	o.uptime = c->in->uptime;
	o.failures = l->failures;
	o.limit_reached = c->in->limit_reached;
	o.stop_requested = life_stop_asked(l, c->p);
	c->out->stop_asked = o.stop_requested;
	c->out->then = l->then;
	/* notify without READY=1, forking without its main pid */
	o.never_ready = (spec->ready != CONF_READY_EXEC || spec->forking) &&
	    !l->ready && !l->exec_failed;
	/* Stopped for hanging: a failure, whatever the exit status. */
	o.watchdog =
	    l->cause == LIFE_CAUSE_WATCHDOG || l->cause == LIFE_CAUSE_UNHEALTHY;
	job_decide(spec, &o, c->in->rnd, &l->pending);
	c->out->decided = 1;
	c->out->decision = l->pending;
	l->failures = l->pending.failures;
	life_do(c, LIFE_A_CANCEL_WATCHDOG | LIFE_A_RECORD_END);
	l->msg = 0; /* RECORD_END settles the run's message */
	if (!c->in->group_left) {
		life_gone(c);
		return;
	}
	l->run = LIFE_RUN_GROUP;
	if (l->phase == LIFE_SPAWNED || l->phase == LIFE_RUNNING)
		life_stop_for(c, LIFE_CAUSE_GROUP);
}

static void
life_group_gone(struct life_ctx *c)
{
	if (c->l->run != LIFE_RUN_GROUP) {
		c->out->ignored = 1;
		return;
	}
	life_gone(c);
}

/* The restart delay is over. */
static void
life_backoff_done(struct life_ctx *c)
{
	life_timer(c, LIFE_TIMER_NONE, 0);
	if (c->p->shutdown || !c->l->want) {
		/* A dependency waiting to be stopped at shutdown. */
		life_do(c, LIFE_A_RELEASE);
		c->l->lock = 0;
		life_phase(c, LIFE_STOPPED);
		return;
	}
	if (life_kind(c, CONF_KIND_QUEUE))
		life_try_start(c); /* the slot, then a message */
	else
		life_respawn(c);
}

static void
life_ready_timeout(struct life_ctx *c)
{
	life_stop_for(c, LIFE_CAUSE_READY_TIMEOUT);
}

/* stop_timeout after stop_signal: SIGKILL what is left, then poll. */
static void
life_stop_timeout(struct life_ctx *c)
{
	life_phase(c, LIFE_KILL);
	life_do(c, LIFE_A_KILL);
	life_timer(c, LIFE_TIMER_KILL, c->p->recheck_max);
}

/* After SIGKILL: members that are not vigild's children are polled. */
static void
life_kill_poll(struct life_ctx *c)
{
	if (c->l->run == LIFE_RUN_GROUP && !c->in->group_alive) {
		life_gone(c);
		return;
	}
	life_do(c, LIFE_A_KILL);
	life_timer(c, LIFE_TIMER_KILL, c->p->recheck_max);
}

/* The message outlived drain_timeout: it is stopped, and released. */
static void
life_drain_timeout(struct life_ctx *c)
{
	c->l->cause = LIFE_CAUSE_DRAIN;
	life_terminate(c);
}

static void
life_watchdog(struct life_ctx *c)
{
	life_stop_for(c, LIFE_CAUSE_WATCHDOG);
}

/* health_failures health probes failed in a row: restart it. */
static void
life_unhealthy(struct life_ctx *c)
{
	life_stop_for(c, LIFE_CAUSE_UNHEALTHY);
}

static void
life_timeout(struct life_ctx *c)
{
	life_stop_for(c, LIFE_CAUSE_TIMEOUT);
}

/* A periodic slot: run now, or skip it while the last run goes on. */
static void
life_slot(struct life_ctx *c)
{
	if (!c->l->want || c->p->shutdown) {
		c->out->ignored = 1;
		return;
	}
	if (job_state_is_active(life_state(c->l->phase)))
		life_do(c, LIFE_A_SKIP);
	else
		life_launch(c);
	life_do(c, LIFE_A_NEXT_SLOT);
}

/*
 * The table: for each phase, the rule of each event; an event without a
 * rule means nothing in that phase (life_step says it was ignored).  The
 * answers to LIFE_A_DEPS, _LOCK and _SPAWN (LIFE_ANSWERS) come in the same
 * step as the action, in whatever phase asked: every row takes them.
 */
#define LIFE_ANSWERS                                                           \
	[LIFE_EV_DEPS_WAIT] = life_deps_wait,                                  \
	[LIFE_EV_DEPS_OK] = life_deps_ok, [LIFE_EV_LOCK_OK] = life_lock_ok,    \
	[LIFE_EV_LOCK_LEFTOVER] = life_leftover,                               \
	[LIFE_EV_LOCK_FOREIGN] = life_foreign,                                 \
	[LIFE_EV_LOCK_ERROR] = life_lock_error,                                \
	[LIFE_EV_LOCK_WAIT] = life_lease_wait,                                 \
	[LIFE_EV_SPAWNED] = life_spawned,                                      \
	[LIFE_EV_SPAWN_FAILED] = life_spawn_failed
/* No run: STOPPED, EXITED, FATAL, WAITING. */
#define LIFE_IDLE_ROW                                                          \
	[LIFE_EV_START] = life_start_idle, [LIFE_EV_ARM] = life_arm,           \
	[LIFE_EV_SLOT] = life_slot, LIFE_ANSWERS
/* A start held back: by dependencies, the lock, a leftover. */
#define LIFE_HELD_ROW                                                          \
	[LIFE_EV_START] = life_start_busy, [LIFE_EV_ARM] = life_start_busy,    \
	[LIFE_EV_RECHECK] = life_recheck, [LIFE_EV_SLOT] = life_slot,          \
	[LIFE_EV_FENCE] = life_fence_idle, LIFE_ANSWERS
/* What a run's stage brings (life-run.c), whatever its phase. */
#define LIFE_STAGES                                                            \
	[LIFE_EV_REAPED] = life_reaped,                                        \
	[LIFE_EV_STEP_TIMEOUT] = life_step_timeout,                            \
	[LIFE_EV_PIDWAIT] = life_pidwait,                                      \
	[LIFE_EV_NO_DAEMON] = life_no_daemon,                                  \
	[LIFE_EV_STEP_FAILED] = life_step_spawn_failed
/* A run: SPAWNED, RUNNING. */
#define LIFE_RUN_ROW                                                           \
	[LIFE_EV_START] = life_start_busy, [LIFE_EV_ARM] = life_start_busy,    \
	[LIFE_EV_STOP] = life_stop_run,                                        \
	[LIFE_EV_EXEC_FAILED] = life_exec_failed, [LIFE_EV_EXIT] = life_exit,  \
	[LIFE_EV_TIMEOUT] = life_timeout, [LIFE_EV_SLOT] = life_slot,          \
	[LIFE_EV_FENCE] = life_fence_run, LIFE_ANSWERS, LIFE_STAGES
/* A run being stopped: DRAIN, TERM, KILL. */
#define LIFE_STOPPING_ROW                                                      \
	[LIFE_EV_START] = life_start_later, [LIFE_EV_ARM] = life_start_busy,   \
	[LIFE_EV_STOP] = life_stop_stopping,                                   \
	[LIFE_EV_EXEC_FAILED] = life_exec_failed, [LIFE_EV_EXIT] = life_exit,  \
	[LIFE_EV_GROUP_GONE] = life_group_gone, [LIFE_EV_SLOT] = life_slot,    \
	[LIFE_EV_FENCE] = life_fence_stopping, LIFE_ANSWERS, LIFE_STAGES

static const life_rule life_table[LIFE_PHASE_COUNT][LIFE_EV_COUNT] = {
	[LIFE_STOPPED] = { LIFE_IDLE_ROW, [LIFE_EV_STOP] = life_stop_idle },
	[LIFE_EXITED] = { LIFE_IDLE_ROW, [LIFE_EV_STOP] = life_stop_idle },
	[LIFE_FATAL] = { LIFE_IDLE_ROW, [LIFE_EV_STOP] = life_stop_idle },
	[LIFE_WAITING] = { LIFE_IDLE_ROW, [LIFE_EV_STOP] = life_stop_waiting,
	    [LIFE_EV_MSG] = life_msg },
	[LIFE_DEPS] = { LIFE_HELD_ROW, [LIFE_EV_STOP] = life_stop_pending },
	[LIFE_LOCKWAIT] = { LIFE_HELD_ROW, [LIFE_EV_STOP] = life_stop_pending },
	[LIFE_SPAWNED] = { LIFE_RUN_ROW, [LIFE_EV_EXEC_OK] = life_exec_ok,
	    [LIFE_EV_MAINPID] = life_mainpid, [LIFE_EV_READY] = life_ready,
	    [LIFE_EV_READY_TIMEOUT] = life_ready_timeout },
	[LIFE_RUNNING] = { LIFE_RUN_ROW, [LIFE_EV_WATCHDOG] = life_watchdog,
	    [LIFE_EV_UNHEALTHY] = life_unhealthy },
	[LIFE_BACKOFF] = { [LIFE_EV_START] = life_start_backoff,
	    [LIFE_EV_ARM] = life_start_busy,
	    [LIFE_EV_STOP] = life_stop_delayed,
	    [LIFE_EV_BACKOFF_DONE] = life_backoff_done,
	    [LIFE_EV_SLOT] = life_slot,
	    [LIFE_EV_FENCE] = life_fence_idle,
	    LIFE_ANSWERS },
	[LIFE_DRAIN] = { LIFE_STOPPING_ROW,
	    [LIFE_EV_DRAIN_TIMEOUT] = life_drain_timeout },
	[LIFE_TERM] = { LIFE_STOPPING_ROW,
	    [LIFE_EV_STOP_TIMEOUT] = life_stop_timeout },
	[LIFE_KILL] = { LIFE_STOPPING_ROW,
	    [LIFE_EV_KILL_POLL] = life_kill_poll },
	[LIFE_RECLAIM] = { LIFE_HELD_ROW, [LIFE_EV_STOP] = life_stop_delayed },
	[LIFE_RECLAIM_KILL] = { LIFE_HELD_ROW,
	    [LIFE_EV_STOP] = life_stop_delayed },
	[LIFE_FOREIGN] = { LIFE_HELD_ROW, [LIFE_EV_STOP] = life_stop_delayed },
	[LIFE_LEASE] = { LIFE_HELD_ROW, [LIFE_EV_STOP] = life_stop_delayed },
};

/*
 * A start (operator: 1 if the operator asked): the operator's stop is
 * forgotten, and the operator's start kept.  life_step() applies it to
 * START and ARM; instance.c to a start a pending reload takes over.
 */
void
life_intent_start(struct life *l, int operator)
{
	if (operator)
		l->intent = LIFE_INTENT_UP;
	else if (l->intent == LIFE_INTENT_DOWN)
		l->intent = LIFE_INTENT_NONE;
}

/*
 * The operator's word from before this struct life: state.db's record at
 * start, the old instance's at a reload's swap.
 */
void
life_intent_restore(struct life *l, enum life_intent i)
{
	l->intent = i;
}

/* What the operator's word in a START, ARM or STOP changes. */
static void
life_intent(struct life *l, const struct life_input *in)
{
	if (in->ev == LIFE_EV_START || in->ev == LIFE_EV_ARM)
		life_intent_start(l, in->operator);
	else if (in->ev == LIFE_EV_STOP && in->operator)
		l->intent = LIFE_INTENT_DOWN;
}

/*
 * Apply event in->ev to the lifecycle l of an instance of the job p->spec:
 * l changes, *out says what to do (the actions in the order of their
 * bits, the timer, the decision taken).  Never fails: an event without a
 * rule in l's phase changes nothing and sets out->ignored.
 */
void
life_step(struct life *l, const struct life_params *p,
    const struct life_input *in, struct life_step *out)
{
	struct life_ctx c;
	enum life_event ev = in->ev;
	life_rule rule = NULL;

	memset(out, 0, sizeof(*out));
	out->stage = l->stage;
	c.l = l;
	c.p = p;
	c.in = in;
	c.out = out;
	out->from = l->phase;
	/* Autostart of a service or a queue is a start. */
	if (ev == LIFE_EV_ARM && p->spec->kind != CONF_KIND_PERIODIC)
		ev = LIFE_EV_START;
	if ((unsigned int)l->phase < LIFE_PHASE_COUNT &&
	    (unsigned int)ev < LIFE_EV_COUNT)
		rule = life_table[l->phase][ev];
	if (rule == NULL) {
		out->ignored = 1;
		return;
	}
	life_intent(l, in);
	rule(&c);
}
