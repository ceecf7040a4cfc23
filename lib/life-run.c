/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The stages of a run, beside its phase (life.c): exec_start_pre, then
 * the command, then exec_stop_post, each bounded by stop_timeout; and for
 * a forking job whose starter exited 0, the wait for its daemon.  Like
 * the phase's rules, these change struct life and say what to do in
 * struct life_step (LIFE_S_*: run.c carries them out); they never call
 * out.  The table in life.c sends the stage's events here:
 *   LIFE_EV_REAPED       the stage's leader ended: what leads next;
 *   LIFE_EV_STEP_TIMEOUT a step outlived stop_timeout: SIGKILL;
 *   LIFE_EV_PIDWAIT      look for the daemon again (or give up);
 *   LIFE_EV_NO_DAEMON    it was not found: wait, or a failed start;
 *   LIFE_EV_STEP_FAILED  the command or exec_stop_post was not forked.
 * The end of the last stage is LIFE_S_END, answered by LIFE_EV_EXIT: the
 * phase's rules take the run's end from there.
 */

#include "config.h"

#include <sys/wait.h>

#include <stddef.h>

#include "life-int.h"

static void
life_sdo(struct life_ctx *c, unsigned int sactions)
{
	c->out->sactions |= sactions;
}

/* Arm (or with LIFE_TIMER_NONE, cancel) the stage's timer. */
static void
life_stage_timer(struct life_ctx *c, enum life_timer t, uint64_t usec)
{
	c->out->stage_timer_set = 1;
	c->out->stage_timer = t;
	c->out->stage_usec = t == LIFE_TIMER_NONE ? 0 : usec;
	c->l->stage_timer = t;
}

/* Did the leader exit 0? */
static int
life_exited_0(const struct life_ctx *c)
{
	return (WIFEXITED(c->in->status) && WEXITSTATUS(c->in->status) == 0);
}

/* A run is forked next (LIFE_A_SPAWN): its first command. */
void
life_stage_begin(struct life_ctx *c)
{
	c->l->stage =
	    c->p->spec->pre_argv != NULL ? LIFE_STAGE_PRE : LIFE_STAGE_MAIN;
	c->l->step_failed = 0;
}

/* The run was forked: exec_start_pre has stop_timeout. */
void
life_stage_spawned(struct life_ctx *c)
{
	if (c->l->stage == LIFE_STAGE_PRE)
		life_stage_timer(c, LIFE_TIMER_STEP, c->p->spec->stop_timeout);
}

/* Is the command the run's leader (not a step, not the daemon's wait)? */
int
life_stage_main(const struct life_ctx *c)
{
	return (c->l->stage == LIFE_STAGE_MAIN);
}

/*
 * An exec report of a step said it failed: a failed start, said when the
 * run is over (LIFE_S_FAILED), unless it was being stopped.
 */
void
life_stage_failed(struct life_ctx *c)
{
	c->l->step_failed = 1;
	life_sdo(c, LIFE_S_CAUSE);
}

/* The forking job's daemon is found: it leads the run. */
void
life_stage_found(struct life_ctx *c)
{
	if (c->l->stage == LIFE_STAGE_PIDWAIT)
		life_stage_timer(c, LIFE_TIMER_NONE, 0);
	c->l->stage = LIFE_STAGE_MAIN;
}

/*
 * The run is over: a step's failure is a failed start (not while the run
 * was being stopped); then the phase's rules take its end (LIFE_EV_EXIT).
 */
static void
life_finish(struct life_ctx *c)
{
	struct life *l = c->l;

	l->stage = LIFE_STAGE_NONE;
	if (l->stage_timer != LIFE_TIMER_NONE)
		life_stage_timer(c, LIFE_TIMER_NONE, 0);
	if (l->step_failed && !life_stopping(c)) {
		l->exec_failed = 1;
		life_sdo(c, LIFE_S_FAILED);
	}
	l->step_failed = 0;
	life_sdo(c, LIFE_S_END);
}

/* The command's part is over: exec_stop_post, if any, then the end. */
static void
life_main_over(struct life_ctx *c)
{
	life_sdo(c, LIFE_S_MAIN_OVER);
	if (c->p->spec->stop_post_argv == NULL) {
		life_finish(c);
		return;
	}
	c->l->stage = LIFE_STAGE_POST;
	life_sdo(c, LIFE_S_POST);
	life_stage_timer(c, LIFE_TIMER_STEP, c->p->spec->stop_timeout);
}

/*
 * exec_start_pre ended: exit 0, no failure said and no stop under way:
 * the command; else the run ends without it (exec_stop_post still runs).
 */
static void
life_pre_reaped(struct life_ctx *c)
{
	life_stage_timer(c, LIFE_TIMER_NONE, 0);
	if (life_exited_0(c) && !c->l->step_failed && !life_stopping(c)) {
		c->l->stage = LIFE_STAGE_MAIN;
		life_sdo(c, LIFE_S_COMMAND);
		return;
	}
	c->l->step_failed = 1;
	life_sdo(c, LIFE_S_PRE_FAILED);
	life_main_over(c);
}

/*
 * The command's leader ended: a MAINPID= of its session carries on; a
 * forking job's starter that exited 0 while starting has left its daemon
 * (looked for); else the command is over.
 */
static void
life_main_reaped(struct life_ctx *c)
{
	if (c->in->mainpid) {
		life_sdo(c, LIFE_S_MAINPID);
		return;
	}
	if (c->p->spec->forking && c->l->phase == LIFE_SPAWNED &&
	    life_exited_0(c)) {
		life_sdo(c, LIFE_S_FIND);
		return;
	}
	life_main_over(c);
}

/* The leader of the run's stage was reaped. */
void
life_reaped(struct life_ctx *c)
{
	switch (c->l->stage) {
	case LIFE_STAGE_PRE:
		life_pre_reaped(c);
		break;
	case LIFE_STAGE_MAIN:
		life_main_reaped(c);
		break;
	case LIFE_STAGE_POST:
		life_stage_timer(c, LIFE_TIMER_NONE, 0);
		life_sdo(c, LIFE_S_POST_ENDED);
		life_finish(c);
		break;
	default:
		c->out->ignored = 1; /* PIDWAIT: the starter was reaped */
		break;
	}
}

/* exec_start_pre or exec_stop_post outlived stop_timeout: SIGKILL. */
void
life_step_timeout(struct life_ctx *c)
{
	if (c->l->stage != LIFE_STAGE_PRE && c->l->stage != LIFE_STAGE_POST) {
		c->out->ignored = 1;
		return;
	}
	life_stage_timer(c, LIFE_TIMER_NONE, 0);
	if (c->l->stage == LIFE_STAGE_PRE)
		c->l->step_failed = 1;
	life_sdo(c, LIFE_S_KILL);
}

/*
 * Time to look for the daemon again, while the run is starting; once a
 * stop or ready_timeout ended the start, the command is over.
 */
void
life_pidwait(struct life_ctx *c)
{
	if (c->l->stage != LIFE_STAGE_PIDWAIT) {
		c->out->ignored = 1;
		return;
	}
	life_stage_timer(c, LIFE_TIMER_NONE, 0);
	if (c->l->phase == LIFE_SPAWNED) {
		life_sdo(c, LIFE_S_FIND);
		return;
	}
	c->l->stage = LIFE_STAGE_MAIN;
	life_main_over(c);
}

/*
 * The daemon is not found: at the starter's end, look again every 10 ms,
 * doubling to 320 ms (a daemon may write its pid_file after its starter
 * exits), until ready_timeout stops the run or, without one, for 10 s;
 * then it is a failed start.
 */
void
life_no_daemon(struct life_ctx *c)
{
	const struct job_spec *spec = c->p->spec;
	struct life *l = c->l;

	if (l->stage == LIFE_STAGE_MAIN) {
		l->stage = LIFE_STAGE_PIDWAIT;
		l->pidwait_step = LIFE_PIDWAIT_FIRST;
		l->pidwait_until = c->in->now +
		    (spec->ready_timeout > 0 ?
		            spec->ready_timeout + LIFE_PIDWAIT_STEP_MAX :
		            LIFE_PIDWAIT_MAX);
		life_stage_timer(c, LIFE_TIMER_PIDWAIT, l->pidwait_step);
		return;
	}
	if (l->stage != LIFE_STAGE_PIDWAIT) {
		c->out->ignored = 1;
		return;
	}
	if (c->in->now < l->pidwait_until) {
		l->pidwait_step *= 2;
		if (l->pidwait_step > LIFE_PIDWAIT_STEP_MAX)
			l->pidwait_step = LIFE_PIDWAIT_STEP_MAX;
		life_stage_timer(c, LIFE_TIMER_PIDWAIT, l->pidwait_step);
		return;
	}
	l->exec_failed = 1;
	l->stage = LIFE_STAGE_MAIN;
	life_sdo(c, LIFE_S_NO_DAEMON);
	life_main_over(c);
}

/*
 * The command (after exec_start_pre) could not be forked: a failed start,
 * and exec_stop_post runs; exec_stop_post could not: the run is over.
 */
void
life_step_spawn_failed(struct life_ctx *c)
{
	switch (c->l->stage) {
	case LIFE_STAGE_MAIN:
		c->l->step_failed = 1;
		life_main_over(c);
		break;
	case LIFE_STAGE_POST:
		life_stage_timer(c, LIFE_TIMER_NONE, 0);
		life_finish(c);
		break;
	default:
		c->out->ignored = 1;
		break;
	}
}
