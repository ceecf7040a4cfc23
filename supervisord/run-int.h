/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * What run.c (a run's fork, reap and signals) gives run-stage.c (what
 * its stages decide carried out), and no one else: the leader of a stage
 * forked, watched for its reap and its exec outcome, and named in the
 * holder record.  run.c calls nothing of run-stage.c.
 */

#ifndef VIGILD_RUN_INT_H
#define VIGILD_RUN_INT_H

#include "life.h"

struct inst;
struct spawn_result;

int run_spawn(struct inst *, enum life_stage, struct spawn_result *, char **);
void run_leader_watch(struct inst *);
void run_write_holder(struct inst *);
void run_report_watch(struct inst *, const struct spawn_result *);

#endif
