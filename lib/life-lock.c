/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The rules of the lifecycle for a start held back by its lock or its
 * lease (life.c has the table that names them): a proven leftover of a
 * vigild reclaimed (RECLAIM, RECLAIM_KILL), a holder vigild did not
 * start named and polled (FOREIGN), a cluster lease waited for (LEASE)
 * or no longer trusted (FENCE), a lock that cannot be had, and the
 * recheck that starts over.  Like every rule, they change struct life
 * and say what to do in struct life_step; they never call out.
 */

#include "config.h"

#include <stdint.h>

#include "life-int.h"

/* Double the BLOCKED poll interval, up to recheck_max. */
static void
life_recheck_grow(struct life_ctx *c)
{
	c->l->recheck *= 2;
	if (c->l->recheck > c->p->recheck_max)
		c->l->recheck = c->p->recheck_max;
}

/*
 * The lock is held by a proven leftover of a vigild: stop its group
 * (stop_signal, SIGKILL after stop_timeout) and look again, more and more
 * slowly; each look proves it again before any signal.
 */
void
life_leftover(struct life_ctx *c)
{
	struct life *l = c->l;
	uint64_t now = c->in->now, delay;

	if ((l->phase != LIFE_RECLAIM && l->phase != LIFE_RECLAIM_KILL) ||
	    !c->in->same) {
		l->kill_at = now + c->p->spec->stop_timeout;
		l->recheck = c->p->recheck_min;
		life_phase(c, LIFE_RECLAIM);
		life_do(c, LIFE_A_LEFTOVER_TERM);
	} else {
		if (l->phase == LIFE_RECLAIM && now >= l->kill_at) {
			life_phase(c, LIFE_RECLAIM_KILL);
			life_do(c, LIFE_A_LEFTOVER_KILL);
		}
		life_recheck_grow(c);
	}
	delay = l->recheck;
	if (l->phase == LIFE_RECLAIM && l->kill_at - now < delay)
		delay = l->kill_at > now ? l->kill_at - now : 1;
	life_timer(c, LIFE_TIMER_RECHECK, delay);
}

/*
 * The lock is held by a process vigild cannot prove it started: never
 * signal it.  While children of vigild are between fork and exec (they
 * hold copies of its descriptors), look again in a moment first.
 */
void
life_foreign(struct life_ctx *c)
{
	struct life *l = c->l;

	if (c->in->spawning && !life_blocked(l->phase) &&
	    l->quick < c->p->quick_max) {
		l->quick++;
		life_phase(c, LIFE_LOCKWAIT);
		life_timer(c, LIFE_TIMER_RECHECK, c->p->quick_retry);
		return;
	}
	if (l->phase != LIFE_FOREIGN) {
		l->recheck = c->p->recheck_min;
		life_phase(c, LIFE_FOREIGN);
		life_do(c, LIFE_A_NAME_HOLDER);
	} else
		life_recheck_grow(c);
	life_timer(c, LIFE_TIMER_RECHECK, l->recheck);
}

/*
 * A cluster job's lease is asked for: the start waits, without a timer,
 * for the answer (cluster.c feeds RECHECK once the lease is had).
 */
void
life_lease_wait(struct life_ctx *c)
{
	life_timer(c, LIFE_TIMER_NONE, 0);
	life_phase(c, LIFE_LEASE);
}

/*
 * The cluster lease can no longer be trusted (its renews failed up to
 * trust - stop_timeout, or someone else holds it): the run stops, and
 * once it is gone the lease is bid for again.  cluster.c sends SIGKILL
 * itself at the trust deadline, whatever the phase.
 */
void
life_fence_run(struct life_ctx *c)
{
	c->l->fenced = 1;
	/* A service bids again; a periodic run just ends (the next slot). */
	if (c->l->want && c->l->then == LIFE_THEN_POLICY &&
	    !life_kind(c, CONF_KIND_PERIODIC))
		c->l->then = LIFE_THEN_START;
	/* A message may still finish: the fence's stop time has its drain. */
	if (life_kind(c, CONF_KIND_QUEUE) && c->p->spec->drain_timeout > 0) {
		if (c->l->cause == LIFE_CAUSE_NONE)
			c->l->cause = LIFE_CAUSE_FENCE;
		life_drain(c);
		return;
	}
	life_stop_for(c, LIFE_CAUSE_FENCE);
}

/* FENCE while a run is being stopped: its lock goes with it. */
void
life_fence_stopping(struct life_ctx *c)
{
	c->l->fenced = 1;
}

/* FENCE without a run: the lock goes now; a start takes a new lease. */
void
life_fence_idle(struct life_ctx *c)
{
	if (!c->l->lock && c->l->phase != LIFE_RECLAIM &&
	    c->l->phase != LIFE_RECLAIM_KILL && c->l->phase != LIFE_FOREIGN) {
		c->out->ignored = 1;
		return;
	}
	life_do(c, LIFE_A_RELEASE);
	c->l->lock = 0;
}

/* No lock, no run: the start waits in BACKOFF. */
void
life_lock_error(struct life_ctx *c)
{
	life_do(c, LIFE_A_RELEASE);
	c->l->lock = 0;
	life_start_failed(c);
}

/* A timer of DEPS, LOCKWAIT or BLOCKED: try again from the top. */
void
life_recheck(struct life_ctx *c)
{
	life_timer(c, LIFE_TIMER_NONE, 0);
	life_try_start(c);
}
