/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/* A queue message's fate after its run: see msgfate.h. */

#include "config.h"

#include <sys/wait.h>

#include <stdint.h>

#include "backoff.h"
#include "life.h"
#include "msgfate.h"

/* Stopped by a drain or a lost lease, it did not finish: not its fault. */
static int
msg_cancelled(const struct msg_end *e)
{
	if (e->success)
		return (0);
	return (e->cause == LIFE_CAUSE_DRAIN || e->cause == LIFE_CAUSE_FENCE);
}

/*
 * The fate of a message whose run ended as e says, in *v.  rnd is the
 * backoff's randomness (arc4random in vigild).
 */
void
msg_fate(const struct msg_end *e, const struct backoff *b, uint32_t rnd,
    struct msg_verdict *v)
{
	v->code = v->sig = -1;
	v->why = 0;
	v->delay = 0;
	if (e->deleted) {
		v->fate = MSG_FATE_DROP;
		return;
	}
	if (e->status == -1 || msg_cancelled(e)) {
		v->fate = MSG_FATE_RELEASE;
		return;
	}
	if (e->success) {
		v->fate = MSG_FATE_DONE;
		return;
	}
	if (!e->exec_failed && WIFEXITED(e->status))
		v->code = WEXITSTATUS(e->status);
	else if (!e->exec_failed && WIFSIGNALED(e->status))
		v->sig = WTERMSIG(e->status);
	/* The dead list's ERROR: why, unless it simply exited or died. */
	v->why = e->cause != LIFE_CAUSE_NONE || e->exec_failed;
	v->delay = backoff_next(
	    b, e->attempts > 0 ? (unsigned int)e->attempts : 0, rnd);
	v->fate =
	    e->attempts >= e->max_attempts ? MSG_FATE_DEAD : MSG_FATE_RETRY;
}
