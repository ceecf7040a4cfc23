/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Tests of a periodic job's slot arithmetic (slot.c): every cell of small
 * ranges of clocks and periods, checked against the properties the
 * design promises (no drift, no slot queued, the grid shared by nodes)
 * rather than against a copy of the formulas.
 */

#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "schedule.h"
#include "slot.h"
#include "test.h"

static const uint64_t periods[] = { 1, 2, 3, 7, 10, 60 };

#define NPERIODS (sizeof(periods) / sizeof(periods[0]))

/* The first slot is a whole period from now, whatever the clock. */
TEST(every_first)
{
	uint64_t now;
	size_t p;

	for (p = 0; p < NPERIODS; p++)
		for (now = 0; now < 200; now++)
			ASSERT_EQ(slot_every_next(0, now, periods[p]),
			    now + periods[p]);
	ASSERT_EQ(slot_every_next(0, 5000000, 60000000), 65000000);
	return (0);
}

/*
 * Each slot is whole periods after the one before (no drift), still to
 * come, and the first such: a slot missed is skipped, not queued.
 */
TEST(every_next_cells)
{
	uint64_t prev, now, e, next;
	size_t p;

	for (p = 0; p < NPERIODS; p++) {
		e = periods[p];
		for (prev = 1; prev < 150; prev++)
			for (now = 0; now < 300; now++) {
				next = slot_every_next(prev, now, e);
				ASSERT_OK(next > now);
				ASSERT_OK(next >= prev + e);
				ASSERT_EQ((next - prev) % e, 0);
				/* The first such: one period less is past. */
				ASSERT_OK(next - e <= now || next == prev + e);
			}
	}
	return (0);
}

/* On time: the next slot is exactly one period on, late or early. */
TEST(every_on_time)
{
	/* Fired a little late: still one period after the last slot. */
	ASSERT_EQ(slot_every_next(10000000, 10000900, 10000000), 20000000);
	/* Armed early (the timer's accuracy): the same. */
	ASSERT_EQ(slot_every_next(10000000, 9999000, 10000000), 20000000);
	/* vigild stopped for 35 s of a 10 s period: 3 slots not queued. */
	ASSERT_EQ(slot_every_next(10000000, 45000000, 10000000), 50000000);
	/* Exactly on a missed slot: it is past, the next one counts. */
	ASSERT_EQ(slot_every_next(10000000, 40000000, 10000000), 50000000);
	return (0);
}

/* The grid: multiples of the period since the epoch, shared by nodes. */
TEST(grid_cells)
{
	int64_t wall, last, next;
	uint64_t e;
	size_t p;

	for (p = 0; p < NPERIODS; p++) {
		e = periods[p];
		for (wall = 0; wall < 400; wall++) {
			last = slot_grid_last(wall, e);
			ASSERT_EQ(last % (int64_t)e, 0);
			ASSERT_OK(last <= wall && wall - last < (int64_t)e);
			ASSERT_EQ(slot_wall_next(e, NULL, wall, &next), 0);
			ASSERT_EQ(next % (int64_t)e, 0);
			ASSERT_OK(next > wall && next - wall <= (int64_t)e);
			ASSERT_EQ(next, last + (int64_t)e);
		}
	}
	/* Two nodes that started 17 s apart agree on the minute. */
	ASSERT_EQ(slot_wall_next(60000000, NULL, 1796000017000000LL, &next), 0);
	ASSERT_EQ(next, 1796000040000000LL);
	ASSERT_EQ(slot_wall_next(60000000, NULL, 1796000034000000LL, &next), 0);
	ASSERT_EQ(next, 1796000040000000LL);
	return (0);
}

/* A parsed schedule, or abort: the expressions here are all valid. */
static struct schedule
cron(const char *expr)
{
	struct schedule s;

	if (schedule_parse(expr, &s, NULL) != 0)
		abort();
	return (s);
}

/* A schedule's slots are schedule_next's, in microseconds. */
TEST(wall_schedule)
{
	struct schedule s = cron("*/5 * * * *");
	int64_t next;

	/* 2026-12-07 12:01:30 UTC, and on a slot exactly. */
	ASSERT_EQ(slot_wall_next(0, &s, 1796644890000000LL, &next), 0);
	ASSERT_EQ(next, 1796645100000000LL);
	ASSERT_EQ(slot_wall_next(0, &s, 1796645100000000LL, &next), 0);
	ASSERT_EQ(next, 1796645400000000LL);
	/* 30 February never comes. */
	s = cron("0 0 30 2 *");
	ASSERT_EQ(slot_wall_next(0, &s, 1796644890000000LL, &next), -1);
	return (0);
}

/* A slot missed while vigild was down: every cell of last and now. */
TEST(missed_every_cells)
{
	int64_t last, now, slot;
	uint64_t e;
	size_t p;
	int m;

	for (p = 0; p < NPERIODS; p++) {
		e = periods[p];
		for (now = 0; now < 200; now++) {
			for (last = -2; last < 200; last++) {
				slot = -1;
				m = slot_missed(e, NULL, last, now, &slot);
				if (last <= 0) {
					ASSERT_EQ(m, 0); /* never ran */
					continue;
				}
				ASSERT_EQ(slot, last + (int64_t)e);
				ASSERT_EQ(m, last + (int64_t)e <= now);
			}
		}
	}
	return (0);
}

TEST(missed_schedule)
{
	struct schedule s = cron("0 * * * *");
	int64_t slot = 0;
	const int64_t h = 3600000000LL, t = 1796644800000000LL; /* 12:00 */

	/* Ran at 12:00; at 12:59 the 13:00 slot has not come. */
	ASSERT_EQ(slot_missed(0, &s, t, t + h - 60000000, &slot), 0);
	ASSERT_EQ(slot, t + h);
	/* At 13:00 and at 15:30 it has: the one after the last run. */
	ASSERT_EQ(slot_missed(0, &s, t, t + h, &slot), 1);
	ASSERT_EQ(slot, t + h);
	ASSERT_EQ(slot_missed(0, &s, t, t + 3 * h + h / 2, &slot), 1);
	ASSERT_EQ(slot, t + h);
	/* Never ran: nothing missed. */
	ASSERT_EQ(slot_missed(0, &s, 0, t, &slot), 0);
	/* A schedule that never comes due misses nothing. */
	s = cron("0 0 30 2 *");
	ASSERT_EQ(slot_missed(0, &s, t, t + 100 * h, &slot), 0);
	return (0);
}

/*
 * The slots between two on the grid: every cell of small clocks; off the
 * grid, none (the interval changed, or a start moved the slot).
 */
TEST(between_every_cells)
{
	int64_t prev, slot, first, n;
	uint64_t e;
	size_t p;

	for (p = 0; p < NPERIODS; p++) {
		e = periods[p];
		for (prev = -3; prev < 150; prev++)
			for (slot = 0; slot < 150; slot++) {
				n = slot_between(
				    e, NULL, prev, slot, 10, &first);
				if (prev <= 0 || slot <= prev ||
				    prev % (int64_t)e != 0 ||
				    slot % (int64_t)e != 0) {
					ASSERT_EQ(n, 0);
					ASSERT_EQ(first, 0);
					continue;
				}
				/* Every multiple strictly between, counted. */
				ASSERT_EQ(n, (slot - prev) / (int64_t)e - 1);
				ASSERT_EQ(first, n > 0 ? prev + (int64_t)e : 0);
			}
	}
	/* A day of minutes missed: all counted, not capped at max. */
	ASSERT_EQ(slot_between(60000000, NULL, 1796601600000000LL,
	              1796601600000000LL + 1440LL * 60000000, 10, &first),
	    1439);
	return (0);
}

TEST(between_schedule)
{
	struct schedule s = cron("0 * * * *");
	const int64_t h = 3600000000LL, t = 1796644800000000LL; /* 12:00 */
	int64_t first;

	/* 12:00 then 16:00: 13, 14 and 15 ran on no node. */
	ASSERT_EQ(slot_between(0, &s, t, t + 4 * h, 100, &first), 3);
	ASSERT_EQ(first, t + h);
	/* Neighbours: none between. */
	ASSERT_EQ(slot_between(0, &s, t, t + h, 100, &first), 0);
	ASSERT_EQ(first, 0);
	/* A year away: the count stops at max. */
	ASSERT_EQ(slot_between(0, &s, t, t + 8760 * h, 50, &first), 50);
	ASSERT_EQ(first, t + h);
	/* No slot before, or backwards: none. */
	ASSERT_EQ(slot_between(0, &s, 0, t, 100, &first), 0);
	ASSERT_EQ(slot_between(0, &s, t + h, t, 100, &first), 0);
	/* Every cell of a day, against counting the hours by hand. */
	for (int a = 0; a < 24; a++)
		for (int b = 0; b < 24; b++)
			ASSERT_EQ(slot_between(
			              0, &s, t + a * h, t + b * h, 100, &first),
			    b > a + 1 ? b - a - 1 : 0);
	return (0);
}

int
main(void)
{
	if (setenv("TZ", "UTC", 1) != 0)
		return (1);
	tzset();
	RUN(every_first);
	RUN(every_next_cells);
	RUN(every_on_time);
	RUN(grid_cells);
	RUN(wall_schedule);
	RUN(missed_every_cells);
	RUN(missed_schedule);
	RUN(between_every_cells);
	RUN(between_schedule);
	TEST_MAIN_END();
}
