/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

#ifndef VIGIL_LINEAGE_H
#define VIGIL_LINEAGE_H

#include <sys/types.h>

#include <stddef.h>

/* A run's processes without a cgroup (lineage.c). */
struct inst;

/* Is pid (of session sid) another's than the instance's run? */
typedef int (*lineage_other_fn)(const struct inst *, pid_t, pid_t);

size_t lineage_find(struct inst *, lineage_other_fn);
int lineage_signal(struct inst *, int, pid_t);
void lineage_clear(struct inst *);

#endif
