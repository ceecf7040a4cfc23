/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Cron expressions for periodic jobs: the five fields "minute hour
 * day-of-month month day-of-week" (Vixie cron syntax, names and the
 * @hourly..@yearly macros), and the next time one of them is due.
 *
 * If both day fields are restricted (neither starts with "*"), a day matches
 * when either matches; if one starts with "*", a day must match both, so a
 * plain "*" leaves the other alone.
 *
 * A schedule is a set of local wall-clock times (seconds zero), in the zone
 * of TZ (schedule_next calls tzset).  Each such time W fires once, at the
 * first instant the local clock shows W or later:
 *  - a time that occurs once fires at that instant;
 *  - a time inside a gap (spring forward) fires at the first instant after
 *    the gap, so all the gap's slots coalesce into one run at its end;
 *  - a time that occurs twice (fall back) fires at its first occurrence only;
 *    in the second pass of the repeated hour nothing fires until the clock
 *    passes the latest time it showed before it went back.
 * schedule_next(after) is the earliest firing instant strictly after after;
 * it keeps no state between calls, allocates nothing, and looks up to eight
 * years ahead (enough for any 29 February), returning -1 if nothing fires.
 */

#ifndef VIGIL_SCHEDULE_H
#define VIGIL_SCHEDULE_H

#include <stdint.h>
#include <time.h>

struct schedule {
	uint64_t minute; /* bit m set: minute m (0-59) matches */
	uint32_t hour;   /* bits 0-23 */
	uint32_t dom;    /* bits 1-31 */
	uint16_t month;  /* bits 1-12 */
	uint8_t dow;  /* bits 0-6, Sunday = 0 (7 in input also means Sunday) */
	int dom_star; /* day-of-month field was "*" (or started with "*") */
	int dow_star; /* same for day-of-week */
};

int schedule_parse(const char *, struct schedule *, char **);
int schedule_next(const struct schedule *, time_t, time_t *);

#endif
