/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * What the rules of the lifecycle share: life.c (the phases and the
 * table), life-lock.c (a start held back by its lock or lease) and
 * life-run.c (a run's stages); nothing else includes it.
 */

#ifndef VIGIL_LIFE_INT_H
#define VIGIL_LIFE_INT_H

#include <stdint.h>

#include "conf.h"
#include "life.h"

/* One step being decided: the lifecycle, its numbers, the event, the out. */
struct life_ctx {
	struct life *l;
	const struct life_params *p;
	const struct life_input *in;
	struct life_step *out;
};

/* life.c */
int life_kind(const struct life_ctx *, enum conf_kind);
void life_do(struct life_ctx *, unsigned int);
void life_timer(struct life_ctx *, enum life_timer, uint64_t);
void life_phase(struct life_ctx *, enum life_phase);
int life_blocked(enum life_phase);
int life_stopping(const struct life_ctx *);
void life_drain(struct life_ctx *);
void life_stop_for(struct life_ctx *, enum life_cause);
void life_start_failed(struct life_ctx *);
void life_try_start(struct life_ctx *);

/* life-lock.c: a start held back by its lock or lease */
void life_leftover(struct life_ctx *);
void life_foreign(struct life_ctx *);
void life_lease_wait(struct life_ctx *);
void life_fence_run(struct life_ctx *);
void life_fence_stopping(struct life_ctx *);
void life_fence_idle(struct life_ctx *);
void life_lock_error(struct life_ctx *);
void life_recheck(struct life_ctx *);

/* life-run.c: the rules of the stages, and what the phases ask of them */
void life_stage_begin(struct life_ctx *);
void life_stage_spawned(struct life_ctx *);
int life_stage_main(const struct life_ctx *);
void life_stage_failed(struct life_ctx *);
void life_stage_found(struct life_ctx *);
void life_reaped(struct life_ctx *);
void life_step_timeout(struct life_ctx *);
void life_pidwait(struct life_ctx *);
void life_no_daemon(struct life_ctx *);
void life_step_spawn_failed(struct life_ctx *);

#endif
