/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The arithmetic of a periodic job's slots, apart from the clocks and
 * timers that carry it out (supervisord/periodic.c).  Times are in
 * microseconds.
 *  - "every" slots on one node follow each other on CLOCK_MONOTONIC, each
 *    every after the one before: no drift.  A slot already past when the
 *    next is armed (vigild could not run: suspended, stopped) is not
 *    queued: the next is the first one still to come.
 *  - In cluster mode "every" slots are on the wall clock's grid, the
 *    multiples of every since the Unix epoch, so that nodes started at
 *    different times agree on them.
 *  - "schedule" slots are the times schedule_next gives.
 *  - The slots between two that fired (slot_between) are those that ran
 *    on no node, in cluster mode.
 * Pure: the caller supplies the clocks.
 */

#ifndef VIGIL_SLOT_H
#define VIGIL_SLOT_H

#include <stdint.h>

struct schedule;

uint64_t slot_every_next(uint64_t, uint64_t, uint64_t);
int64_t slot_grid_last(int64_t, uint64_t);
int slot_wall_next(uint64_t, const struct schedule *, int64_t, int64_t *);
int slot_missed(uint64_t, const struct schedule *, int64_t, int64_t, int64_t *);
int64_t slot_between(
    uint64_t, const struct schedule *, int64_t, int64_t, int64_t, int64_t *);

#endif
