/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/* A periodic job's slots: see slot.h. */

#include "config.h"

#include <stdint.h>
#include <time.h>

#include "schedule.h"
#include "slot.h"

/*
 * The monotonic slot that follows prev (0: there is none yet, and the
 * first is every from now), skipped forward past now if it is already
 * due.  every > 0.
 */
uint64_t
slot_every_next(uint64_t prev, uint64_t now, uint64_t every)
{
	uint64_t next = prev == 0 ? now + every : prev + every;

	if (next <= now)
		next += ((now - next) / every + 1) * every;
	return (next);
}

/* The last slot of the grid at or before wall (>= 0).  every > 0. */
int64_t
slot_grid_last(int64_t wall, uint64_t every)
{
	return (wall / (int64_t)every * (int64_t)every);
}

/*
 * The first wall-clock slot after wall, in *next: the grid's if every is
 * set, else the schedule's.  -1 if the schedule never comes due.
 */
int
slot_wall_next(
    uint64_t every, const struct schedule *cron, int64_t wall, int64_t *next)
{
	time_t t;

	if (every > 0) {
		*next = slot_grid_last(wall, every) + (int64_t)every;
		return (0);
	}
	if (schedule_next(cron, (time_t)(wall / 1000000), &t) == -1)
		return (-1);
	*next = (int64_t)t * 1000000;
	return (0);
}

/*
 * Did the slot that followed the run begun at last (<= 0: none yet) come
 * by now?  It is in *slot: every after last, or the schedule's next.
 */
int
slot_missed(uint64_t every, const struct schedule *cron, int64_t last,
    int64_t now, int64_t *slot)
{
	time_t t;

	if (last <= 0)
		return (0);
	if (every > 0)
		*slot = last + (int64_t)every;
	else if (schedule_next(cron, (time_t)(last / 1000000), &t) == 0)
		*slot = (int64_t)t * 1000000;
	else
		return (0);
	return (*slot <= now);
}

/*
 * How many slots come strictly between prev and slot (wall usec): all of
 * an "every" job's, at most max of a schedule's (each is looked for); the
 * first of them in *first (0: none).  Cluster mode counts so the
 * slots that ran on no node.  "every" slots are on the grid: a prev or a
 * slot off it (a start moved it to its time, or the interval changed)
 * counts none.
 */
int64_t
slot_between(uint64_t every, const struct schedule *cron, int64_t prev,
    int64_t slot, int64_t max, int64_t *first)
{
	int64_t n = 0, e = (int64_t)every;
	time_t t = (time_t)(prev / 1000000), next;

	*first = 0;
	if (prev <= 0 || slot <= prev)
		return (0);
	if (every > 0) {
		if (prev % e != 0 || slot % e != 0)
			return (0);
		n = (slot - prev) / e - 1;
		if (n > 0)
			*first = prev + e;
		return (n);
	}
	while (n < max && schedule_next(cron, t, &next) == 0 &&
	    (int64_t)next * 1000000 < slot) {
		if (n++ == 0)
			*first = (int64_t)next * 1000000;
		t = next;
	}
	return (n);
}
