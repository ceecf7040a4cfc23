/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Unit tests for lib/schedule.c: parsing cron expressions, and the next slot
 * in several time zones, across month ends, leap days and DST changes, also
 * checked against a slow reference built on the same definition.
 */

#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "schedule.h"
#include "test.h"

/*
 * Select the time zone tz; -1, loudly, if its zoneinfo file is missing
 * (the C library would quietly use UTC instead).
 */
static int
set_zone(const char *tz)
{
	if (strcmp(tz, "UTC") != 0) {
		char path[256];

		snprintf(path, sizeof path, "/usr/share/zoneinfo/%s", tz);
		if (access(path, R_OK) != 0) {
			fprintf(stderr, "  time zone %s: %s is missing\n", tz,
			    path);
			return (-1);
		}
	}
	if (setenv("TZ", tz, 1) != 0)
		return (-1);
	tzset();
	return (0);
}

/* Write t as "YYYY-MM-DD HH:MM:SS ZONE" in local time into buf. */
static const char *
fmt_time(time_t t, char *buf, size_t len)
{
	struct tm tm;

	if (localtime_r(&t, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%d %H:%M:%S %Z", &tm) == 0)
		snprintf(buf, len, "(bad time %lld)", (long long)t);
	return (buf);
}

/*
 * Whether the formatted local time got matches want, which may leave out
 * the zone ("YYYY-MM-DD HH:MM:SS").
 */
static int
same_time(const char *got, const char *want)
{
	size_t n = strlen(want);

	if (n == 19)
		return (strncmp(got, want, n) == 0 && got[n] == ' ');
	return (strcmp(got, want) == 0);
}

/*
 * Parse s as "@EPOCH" or as a local "YYYY-MM-DD HH:MM:SS", optionally with
 * the zone abbreviation, which picks one of the two readings of a repeated
 * time.  The time must exist.  Returns 0 or -1.
 */
static int
parse_time(const char *s, time_t *t)
{
	static const int isdst[] = { -1, 0, 1 };
	struct tm tm;
	char buf[64];
	size_t i;

	if (s[0] == '@') {
		*t = (time_t)strtoll(s + 1, NULL, 10);
		return (0);
	}
	for (i = 0; i < sizeof isdst / sizeof isdst[0]; i++) {
		time_t v;

		memset(&tm, 0, sizeof tm);
		if (sscanf(s, "%d-%d-%d %d:%d:%d", &tm.tm_year, &tm.tm_mon,
		        &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6)
			return (-1);
		tm.tm_year -= 1900;
		tm.tm_mon--;
		tm.tm_isdst = isdst[i];
		if ((v = mktime(&tm)) == (time_t)-1)
			continue;
		if (same_time(fmt_time(v, buf, sizeof buf), s)) {
			*t = v;
			return (0);
		}
	}
	return (-1);
}

static const struct next_case {
	const char *tz;
	const char *expr;
	const char *after;
	const char *want; /* NULL: no next slot */
} next_cases[] = {
	/* Minutes and hours: ranges, steps, lists. */
	{ "UTC", "* * * * *", "2026-01-01 00:00:00", "2026-01-01 00:01:00" },
	{ "UTC", "* * * * *", "2026-01-01 00:00:30", "2026-01-01 00:01:00" },
	{ "UTC", "0 * * * *", "2026-01-01 00:00:00", "2026-01-01 01:00:00" },
	{ "UTC", "*/15 * * * *", "2026-01-01 00:14:59", "2026-01-01 00:15:00" },
	{ "UTC", "5 4 * * *", "2026-01-01 04:04:59", "2026-01-01 04:05:00" },
	{ "UTC", "5 4 * * *", "2026-01-01 04:05:00", "2026-01-02 04:05:00" },
	{ "UTC", "0 9-17/2 * * *", "2026-01-01 11:00:00",
	    "2026-01-01 13:00:00" },
	{ "UTC", "0 9-17/2 * * *", "2026-01-01 17:00:00",
	    "2026-01-02 09:00:00" },
	{ "UTC", "0,30 8,20 * * *", "2026-01-01 08:30:00",
	    "2026-01-01 20:00:00" },
	{ "UTC", "10-12 0 * * *", "2026-01-01 00:11:00",
	    "2026-01-01 00:12:00" },
	{ "UTC", "10/20 * * * *", "2026-01-01 00:30:00",
	    "2026-01-01 00:50:00" },
	{ "UTC", "10/20 * * * *", "2026-01-01 00:50:00",
	    "2026-01-01 01:10:00" },
	{ "UTC", "1-5,40-59/10 */6 * * *", "2026-01-01 00:05:00",
	    "2026-01-01 00:40:00" },
	{ "UTC", "1-5,40-59/10 */6 * * *", "2026-01-01 00:50:00",
	    "2026-01-01 06:01:00" },
	{ "Europe/Berlin", "0\t12  *\t* *", "2026-07-01 12:00:00",
	    "2026-07-02 12:00:00 CEST" },

	/* Months and names; year rollover. */
	{ "UTC", "0 0 1 jan *", "2026-06-15 12:00:00", "2027-01-01 00:00:00" },
	{ "UTC", "59 23 31 12 *", "2026-12-31 23:59:00",
	    "2027-12-31 23:59:00" },
	{ "UTC", "0 0 * * *", "2026-12-31 23:59:59", "2027-01-01 00:00:00" },
	{ "UTC", "* * * * *", "2026-12-31 23:59:00", "2027-01-01 00:00:00" },
	{ "UTC", "0 12 * mar-may *", "2026-01-10 00:00:00",
	    "2026-03-01 12:00:00" },
	{ "UTC", "0 12 * mar-may *", "2026-05-31 12:00:00",
	    "2027-03-01 12:00:00" },
	{ "UTC", "0 12 * JAN,Jul *", "2026-02-01 00:00:00",
	    "2026-07-01 12:00:00" },
	{ "UTC", "0 0 1 */3 *", "2026-01-01 00:00:00", "2026-04-01 00:00:00" },
	{ "UTC", "0 0 1 2/5 *", "2026-08-01 00:00:00", "2026-12-01 00:00:00" },

	/* Days of the week; 7 and 0 are Sunday (2026-01-01 is a Thursday). */
	{ "UTC", "0 0 * * 7", "2026-01-01 00:00:00", "2026-01-04 00:00:00" },
	{ "UTC", "0 0 * * 0", "2026-01-01 00:00:00", "2026-01-04 00:00:00" },
	{ "UTC", "0 0 * * sun", "2026-01-01 00:00:00", "2026-01-04 00:00:00" },
	{ "UTC", "0 0 * * 5-7", "2026-01-04 00:00:00", "2026-01-09 00:00:00" },
	{ "UTC", "0 0 * * 5-7", "2026-01-09 00:00:00", "2026-01-10 00:00:00" },
	{ "UTC", "0 0 * * mon-fri", "2026-01-02 00:00:00",
	    "2026-01-05 00:00:00" },
	{ "UTC", "0 0 * * MON-wed/2", "2026-01-05 00:00:00",
	    "2026-01-07 00:00:00" },
	{ "UTC", "0 0 * * 1/2", "2026-01-09 00:00:00", "2026-01-11 00:00:00" },
	{ "UTC", "0 0 * * */2", "2026-01-04 00:00:00", "2026-01-06 00:00:00" },

	/* Day of month or of week (2026-02-13 is a Friday, 04-13 not). */
	{ "UTC", "0 0 13 * fri", "2026-02-01 00:00:00", "2026-02-06 00:00:00" },
	{ "UTC", "0 0 13 * fri", "2026-02-06 00:00:00", "2026-02-13 00:00:00" },
	{ "UTC", "0 0 13 * fri", "2026-04-10 00:00:00", "2026-04-13 00:00:00" },
	{ "UTC", "0 0 13 * fri", "2026-04-13 00:00:00", "2026-04-17 00:00:00" },
	{ "UTC", "0 0 * * fri", "2026-04-10 00:00:00", "2026-04-17 00:00:00" },
	{ "UTC", "0 0 13 * *", "2026-04-10 00:00:00", "2026-04-13 00:00:00" },
	{ "UTC", "0 0 13 * *", "2026-04-13 00:00:00", "2026-05-13 00:00:00" },
	{ "UTC", "0 0 1-7 * mon", "2026-04-08 00:00:00",
	    "2026-04-13 00:00:00" },
	{ "UTC", "0 0 */2 * mon", "2026-04-01 00:00:00",
	    "2026-04-13 00:00:00" },
	{ "UTC", "0 0 13 * */1", "2026-04-13 00:00:00", "2026-05-13 00:00:00" },

	/* Month ends and leap days. */
	{ "UTC", "0 0 31 * *", "2026-01-31 00:00:00", "2026-03-31 00:00:00" },
	{ "UTC", "0 0 31 * *", "2026-03-31 00:00:00", "2026-05-31 00:00:00" },
	{ "UTC", "0 0 31 * *", "2026-07-31 00:00:00", "2026-08-31 00:00:00" },
	{ "UTC", "0 0 31 * *", "2026-12-31 00:00:00", "2027-01-31 00:00:00" },
	{ "UTC", "0 0 30 * *", "2026-01-30 00:00:00", "2026-03-30 00:00:00" },
	{ "UTC", "0 0 29 2 *", "2025-01-01 00:00:00", "2028-02-29 00:00:00" },
	{ "UTC", "0 0 29 2 *", "2028-02-29 00:00:00", "2032-02-29 00:00:00" },
	{ "UTC", "0 0 29 2 *", "2097-03-01 00:00:00", "2104-02-29 00:00:00" },
	{ "UTC", "0 0 29 feb mon", "2026-02-01 00:00:00",
	    "2026-02-02 00:00:00" },
	{ "UTC", "0 0 30 2 *", "2026-01-01 00:00:00", NULL },
	{ "UTC", "0 0 31 4,6,9,11 *", "2026-01-01 00:00:00", NULL },

	/* Macros. */
	{ "UTC", "@hourly", "2026-01-01 00:00:00", "2026-01-01 01:00:00" },
	{ "UTC", "@daily", "2026-01-01 00:00:00", "2026-01-02 00:00:00" },
	{ "UTC", "@midnight", "2026-01-01 12:00:00", "2026-01-02 00:00:00" },
	{ "UTC", "@weekly", "2026-01-01 00:00:00", "2026-01-04 00:00:00" },
	{ "UTC", "@monthly", "2026-01-15 00:00:00", "2026-02-01 00:00:00" },
	{ "UTC", "@yearly", "2026-01-01 00:00:00", "2027-01-01 00:00:00" },
	{ "UTC", "@annually", "2026-05-05 00:00:00", "2027-01-01 00:00:00" },

	/* Times given as UTC epochs (1767225600 is 2026-01-01 00:00 UTC). */
	{ "UTC", "0 0 * * *", "@1767225600", "2026-01-02 00:00:00 UTC" },
	{ "Europe/Berlin", "0 0 * * *", "@1767225600",
	    "2026-01-02 00:00:00 CET" },
	{ "America/New_York", "0 0 * * *", "@1767225600",
	    "2026-01-01 00:00:00 EST" },

	/* Berlin, 2026-03-29: 02:00 CET becomes 03:00 CEST. */
	{ "Europe/Berlin", "30 2 * * *", "2026-03-28 02:30:00 CET",
	    "2026-03-29 03:00:00 CEST" },
	{ "Europe/Berlin", "30 2 * * *", "2026-03-29 03:00:00 CEST",
	    "2026-03-30 02:30:00 CEST" },
	{ "Europe/Berlin", "*/15 * * * *", "2026-03-29 01:45:00 CET",
	    "2026-03-29 03:00:00 CEST" },
	{ "Europe/Berlin", "*/15 * * * *", "2026-03-29 03:00:00 CEST",
	    "2026-03-29 03:15:00 CEST" },
	{ "Europe/Berlin", "0 3 * * *", "2026-03-29 01:59:59 CET",
	    "2026-03-29 03:00:00 CEST" },
	{ "Europe/Berlin", "0 2 * * *", "2026-03-28 02:00:00 CET",
	    "2026-03-29 03:00:00 CEST" },
	{ "Europe/Berlin", "59 1 * * *", "2026-03-28 01:59:00 CET",
	    "2026-03-29 01:59:00 CET" },

	/* Berlin, 2026-10-25: 03:00 CEST becomes 02:00 CET again. */
	{ "Europe/Berlin", "30 2 * * *", "2026-10-24 02:30:00 CEST",
	    "2026-10-25 02:30:00 CEST" },
	{ "Europe/Berlin", "30 2 * * *", "2026-10-25 02:30:00 CEST",
	    "2026-10-26 02:30:00 CET" },
	{ "Europe/Berlin", "30 2 * * *", "2026-10-25 02:10:00 CET",
	    "2026-10-26 02:30:00 CET" },
	{ "Europe/Berlin", "*/15 * * * *", "2026-10-25 01:59:00 CEST",
	    "2026-10-25 02:00:00 CEST" },
	{ "Europe/Berlin", "*/15 * * * *", "2026-10-25 02:45:00 CEST",
	    "2026-10-25 03:00:00 CET" },
	{ "Europe/Berlin", "*/15 * * * *", "2026-10-25 02:00:00 CET",
	    "2026-10-25 03:00:00 CET" },
	{ "Europe/Berlin", "*/15 * * * *", "2026-10-25 02:20:00 CET",
	    "2026-10-25 03:00:00 CET" },
	{ "Europe/Berlin", "0 * * * *", "2026-10-25 02:00:00 CEST",
	    "2026-10-25 03:00:00 CET" },
	{ "Europe/Berlin", "0 3 * * *", "2026-10-25 02:59:00 CEST",
	    "2026-10-25 03:00:00 CET" },
	{ "Europe/Berlin", "* * * * *", "2026-10-25 02:59:59 CEST",
	    "2026-10-25 03:00:00 CET" },
	{ "Europe/Berlin", "* * * * *", "2026-10-25 02:00:30 CET",
	    "2026-10-25 03:00:00 CET" },

	/* New York, 2026-03-08: 02:00 EST becomes 03:00 EDT. */
	{ "America/New_York", "30 2 * * *", "2026-03-07 02:30:00 EST",
	    "2026-03-08 03:00:00 EDT" },
	{ "America/New_York", "30 2 * * *", "2026-03-08 03:00:00 EDT",
	    "2026-03-09 02:30:00 EDT" },
	{ "America/New_York", "*/15 * * * *", "2026-03-08 01:45:00 EST",
	    "2026-03-08 03:00:00 EDT" },
	{ "America/New_York", "*/15 * * * *", "2026-03-08 03:00:00 EDT",
	    "2026-03-08 03:15:00 EDT" },

	/* New York, 2026-11-01: 02:00 EDT becomes 01:00 EST again. */
	{ "America/New_York", "30 2 * * *", "2026-10-31 02:30:00 EDT",
	    "2026-11-01 02:30:00 EST" },
	{ "America/New_York", "30 1 * * *", "2026-10-31 01:30:00 EDT",
	    "2026-11-01 01:30:00 EDT" },
	{ "America/New_York", "30 1 * * *", "2026-11-01 01:30:00 EDT",
	    "2026-11-02 01:30:00 EST" },
	{ "America/New_York", "30 1 * * *", "2026-11-01 01:10:00 EST",
	    "2026-11-02 01:30:00 EST" },
	{ "America/New_York", "*/15 * * * *", "2026-11-01 00:59:59 EDT",
	    "2026-11-01 01:00:00 EDT" },
	{ "America/New_York", "*/15 * * * *", "2026-11-01 01:45:00 EDT",
	    "2026-11-01 02:00:00 EST" },
	{ "America/New_York", "*/15 * * * *", "2026-11-01 01:05:00 EST",
	    "2026-11-01 02:00:00 EST" },
	{ "America/New_York", "* 1 * * *", "2026-11-01 01:00:00 EST",
	    "2026-11-02 01:00:00 EST" },

	/* Lord Howe Island moves its clocks by half an hour. */
	{ "Australia/Lord_Howe", "*/15 * * * *", "2026-10-04 01:45:00 +1030",
	    "2026-10-04 02:30:00 +11" },
	{ "Australia/Lord_Howe", "*/15 * * * *", "2026-04-05 01:45:00 +11",
	    "2026-04-05 02:00:00 +1030" },
	{ "Australia/Lord_Howe", "*/15 * * * *", "2026-04-05 01:30:00 +1030",
	    "2026-04-05 02:00:00 +1030" },
};

/* Run one row of next_cases; 0 if it passes, after saying why not. */
static int
next_case(const struct next_case *c)
{
	struct schedule s;
	time_t after, next = 0;
	char *cause = NULL, got[64];
	int r;

	if (set_zone(c->tz) != 0)
		goto fail;
	if (schedule_parse(c->expr, &s, &cause) != 0) {
		snprintf(got, sizeof got, "parse error: %s", cause);
		free(cause);
		goto fail;
	}
	if (parse_time(c->after, &after) != 0) {
		snprintf(got, sizeof got, "bad time in the test");
		goto fail;
	}
	r = schedule_next(&s, after, &next);
	if (c->want == NULL) {
		if (r == -1)
			return (0);
		fmt_time(next, got, sizeof got);
		goto fail;
	}
	if (r != 0) {
		snprintf(got, sizeof got, "none");
		goto fail;
	}
	if (same_time(fmt_time(next, got, sizeof got), c->want))
		return (0);

fail:
	fprintf(stderr, "  TZ=%s \"%s\" after %s: got %s, want %s\n", c->tz,
	    c->expr, c->after, got, c->want == NULL ? "none" : c->want);
	return (1);
}

TEST(next_table)
{
	size_t i;
	int failed = 0;

	for (i = 0; i < sizeof next_cases / sizeof next_cases[0]; i++)
		failed += next_case(&next_cases[i]);
	ASSERT_EQ(failed, 0);
	return (0);
}

/*
 * Call schedule_next repeatedly from start in zone tz and compare the
 * instants with want, terminated by NULL.  0 if they match.
 */
static int
sequence(const char *tz, const char *expr, const char *start,
    const char *const *want)
{
	struct schedule s;
	time_t t;
	char got[64];
	size_t i;

	if (set_zone(tz) != 0 || schedule_parse(expr, &s, NULL) != 0 ||
	    parse_time(start, &t) != 0) {
		fprintf(stderr, "  TZ=%s \"%s\" from %s: bad case\n", tz, expr,
		    start);
		return (1);
	}
	for (i = 0; want[i] != NULL; i++) {
		if (schedule_next(&s, t, &t) != 0)
			snprintf(got, sizeof got, "none");
		else
			fmt_time(t, got, sizeof got);
		if (!same_time(got, want[i])) {
			fprintf(stderr,
			    "  TZ=%s \"%s\" from %s, step %zu: got %s, want %s\n",
			    tz, expr, start, i, got, want[i]);
			return (1);
		}
	}
	return (0);
}

static const char *const berlin_spring[] = { "2026-03-29 01:30:00 CET",
	"2026-03-29 01:45:00 CET", "2026-03-29 03:00:00 CEST",
	"2026-03-29 03:15:00 CEST", NULL };
static const char *const berlin_fall[] = { "2026-10-25 01:45:00 CEST",
	"2026-10-25 02:00:00 CEST", "2026-10-25 02:15:00 CEST",
	"2026-10-25 02:30:00 CEST", "2026-10-25 02:45:00 CEST",
	"2026-10-25 03:00:00 CET", "2026-10-25 03:15:00 CET", NULL };
static const char *const ny_fall[] = { "2026-11-01 00:45:00 EDT",
	"2026-11-01 01:00:00 EDT", "2026-11-01 01:15:00 EDT",
	"2026-11-01 01:30:00 EDT", "2026-11-01 01:45:00 EDT",
	"2026-11-01 02:00:00 EST", NULL };
static const char *const daily_230_spring[] = { "2026-03-27 02:30:00 CET",
	"2026-03-28 02:30:00 CET", "2026-03-29 03:00:00 CEST",
	"2026-03-30 02:30:00 CEST", NULL };
static const char *const daily_230_fall[] = { "2026-10-24 02:30:00 CEST",
	"2026-10-25 02:30:00 CEST", "2026-10-26 02:30:00 CET", NULL };
static const char *const fridays_13[] = { "2026-02-06 00:00:00",
	"2026-02-13 00:00:00", "2026-02-20 00:00:00", "2026-02-27 00:00:00",
	"2026-03-06 00:00:00", "2026-03-13 00:00:00", "2026-03-20 00:00:00",
	NULL };

static const struct {
	const char *tz;
	const char *expr;
	const char *start;
	const char *const *want;
} sequences[] = {
	{ "Europe/Berlin", "*/15 * * * *", "2026-03-29 01:20:00 CET",
	    berlin_spring },
	{ "Europe/Berlin", "*/15 * * * *", "2026-10-25 01:30:00 CEST",
	    berlin_fall },
	{ "America/New_York", "*/15 * * * *", "2026-11-01 00:30:00 EDT",
	    ny_fall },
	{ "Europe/Berlin", "30 2 * * *", "2026-03-26 12:00:00 CET",
	    daily_230_spring },
	{ "Europe/Berlin", "30 2 * * *", "2026-10-23 12:00:00 CEST",
	    daily_230_fall },
	{ "UTC", "0 0 13 * fri", "2026-02-01 00:00:00", fridays_13 },
};

TEST(sequences)
{
	size_t i;
	int failed = 0;

	for (i = 0; i < sizeof sequences / sizeof sequences[0]; i++) {
		failed += sequence(sequences[i].tz, sequences[i].expr,
		    sequences[i].start, sequences[i].want);
	}
	ASSERT_EQ(failed, 0);
	return (0);
}

/* Whether a and b hold the same schedule. */
static int
same_schedule(const struct schedule *a, const struct schedule *b)
{
	return (a->minute == b->minute && a->hour == b->hour &&
	    a->dom == b->dom && a->month == b->month && a->dow == b->dow &&
	    a->dom_star == b->dom_star && a->dow_star == b->dow_star);
}

/* Parse expr, which must be valid, into *s; 0 if it is. */
static int
parse_ok(const char *expr, struct schedule *s)
{
	char *cause = NULL;

	if (schedule_parse(expr, s, &cause) != 0) {
		fprintf(stderr, "  \"%s\": %s\n", expr, cause);
		free(cause);
		return (-1);
	}
	return (0);
}

TEST(parse_fields)
{
	struct schedule s;

	ASSERT_EQ(parse_ok("* * * * *", &s), 0);
	ASSERT_EQ(s.minute, (1ULL << 60) - 1);
	ASSERT_EQ(s.hour, 0xffffff);
	ASSERT_EQ(s.dom, 0xfffffffeU);
	ASSERT_EQ(s.month, 0x1ffe);
	ASSERT_EQ(s.dow, 0x7f);
	ASSERT_EQ(s.dom_star, 1);
	ASSERT_EQ(s.dow_star, 1);

	ASSERT_EQ(parse_ok("*/15 0 1,15 * 1-5", &s), 0);
	ASSERT_EQ(s.minute, 1ULL | 1ULL << 15 | 1ULL << 30 | 1ULL << 45);
	ASSERT_EQ(s.hour, 1);
	ASSERT_EQ(s.dom, 1U << 1 | 1U << 15);
	ASSERT_EQ(s.dow, 0x3e);
	ASSERT_EQ(s.dom_star, 0);
	ASSERT_EQ(s.dow_star, 0);

	ASSERT_EQ(parse_ok(" \t0\t0  */10  Jan-MAR,dec sat-7/2  ", &s), 0);
	ASSERT_EQ(s.minute, 1);
	ASSERT_EQ(s.dom, 1U << 1 | 1U << 11 | 1U << 21 | 1U << 31);
	ASSERT_EQ(s.month, 1U << 1 | 1U << 2 | 1U << 3 | 1U << 12);
	ASSERT_EQ(s.dow, 1U << 6);
	ASSERT_EQ(s.dom_star, 1);
	ASSERT_EQ(s.dow_star, 0);

	ASSERT_EQ(parse_ok("0 0 * * 7", &s), 0);
	ASSERT_EQ(s.dow, 1);
	ASSERT_EQ(parse_ok("0 0 * * 0,7", &s), 0);
	ASSERT_EQ(s.dow, 1);
	ASSERT_EQ(parse_ok("0 0 * * 5-7", &s), 0);
	ASSERT_EQ(s.dow, 0x61);
	ASSERT_EQ(parse_ok("0 0 * * 1/2", &s), 0);
	ASSERT_EQ(s.dow, 0x2b);
	ASSERT_EQ(parse_ok("59 23 31 12 6", &s), 0);
	ASSERT_EQ(s.minute, 1ULL << 59);
	ASSERT_EQ(s.hour, 1U << 23);
	ASSERT_EQ(s.dom, 1U << 31);
	ASSERT_EQ(s.month, 1U << 12);
	ASSERT_EQ(s.dow, 1U << 6);
	return (0);
}

TEST(parse_macros)
{
	struct schedule s, want;

	ASSERT_EQ(parse_ok("@weekly", &s), 0);
	ASSERT_EQ(parse_ok("0 0 * * 0", &want), 0);
	ASSERT_OK(same_schedule(&s, &want));
	ASSERT_EQ(s.dom_star, 1);
	ASSERT_EQ(s.dow_star, 0);
	ASSERT_EQ(parse_ok("@monthly", &s), 0);
	ASSERT_EQ(s.dom, 2);
	ASSERT_EQ(s.dom_star, 0);
	ASSERT_EQ(s.dow_star, 1);
	ASSERT_EQ(parse_ok("  @Daily\t", &s), 0);
	ASSERT_EQ(parse_ok("0 0 * * *", &want), 0);
	ASSERT_OK(same_schedule(&s, &want));
	ASSERT_EQ(parse_ok("@midnight", &s), 0);
	ASSERT_OK(same_schedule(&s, &want));
	ASSERT_EQ(parse_ok("@hourly", &s), 0);
	ASSERT_EQ(parse_ok("0 * * * *", &want), 0);
	ASSERT_OK(same_schedule(&s, &want));
	ASSERT_EQ(parse_ok("@yearly", &s), 0);
	ASSERT_EQ(parse_ok("0 0 1 1 *", &want), 0);
	ASSERT_OK(same_schedule(&s, &want));
	ASSERT_EQ(parse_ok("@annually", &s), 0);
	ASSERT_OK(same_schedule(&s, &want));
	return (0);
}

static const struct {
	const char *expr;
	const char *cause;
} parse_errors[] = {
	{ "", "expected 5 fields, got 0" },
	{ " \t ", "expected 5 fields, got 0" },
	{ "* * * *", "expected 5 fields, got 4" },
	{ "* * * * * *", "expected 5 fields, got 6" },
	{ "61 * * * *", "minute field \"61\": value out of range 0-59" },
	{ "1,60 * * * *", "minute field \"1,60\": value out of range 0-59" },
	{ "99999999999 * * * *",
	    "minute field \"99999999999\": value out of range 0-59" },
	{ "* 24 * * *", "hour field \"24\": value out of range 0-23" },
	{ "* * 0 * *", "day-of-month field \"0\": value out of range 1-31" },
	{ "* * 32 * *", "day-of-month field \"32\": value out of range 1-31" },
	{ "* * * 0 *", "month field \"0\": value out of range 1-12" },
	{ "* * * 13 *", "month field \"13\": value out of range 1-12" },
	{ "* * * * 8", "day-of-week field \"8\": value out of range 0-7" },
	{ "*/0 * * * *", "minute field \"*/0\": step 0" },
	{ "* 1-5/0 * * *", "hour field \"1-5/0\": step 0" },
	{ "*/60 * * * *", "minute field \"*/60\": step 60 out of range 1-59" },
	{ "* * * * */8", "day-of-week field \"*/8\": step 8 out of range 1-7" },
	{ "*/99999999999 * * * *",
	    "minute field \"*/99999999999\": step 99999999999 out of range 1-59" },
	{ "*/00 * * * *", "minute field \"*/00\": step 0" },
	{ "* 5-3 * * *", "hour field \"5-3\": range 5-3 is reversed" },
	{ "* * * * fri-mon",
	    "day-of-week field \"fri-mon\": range fri-mon is reversed" },
	{ "* * * * sat-sun",
	    "day-of-week field \"sat-sun\": range sat-sun is reversed" },
	{ "* * * foo *", "month field \"foo\": unknown name \"foo\"" },
	{ "* * * jan-foo *", "month field \"jan-foo\": unknown name \"foo\"" },
	{ "* * * january *",
	    "month field \"january\": unknown name \"january\"" },
	{ "* * * * jan", "day-of-week field \"jan\": unknown name \"jan\"" },
	{ "* * * mon *", "month field \"mon\": unknown name \"mon\"" },
	{ "mon * * * *", "minute field \"mon\": unknown name \"mon\"" },
	{ "1,,2 * * * *", "minute field \"1,,2\": empty list item" },
	{ "1, * * * *", "minute field \"1,\": empty list item" },
	{ ",1 * * * *", "minute field \",1\": empty list item" },
	{ "5- * * * *", "minute field \"5-\": invalid item \"5-\"" },
	{ "*/ * * * *", "minute field \"*/\": invalid item \"*/\"" },
	{ "*/x * * * *", "minute field \"*/x\": invalid item \"*/x\"" },
	{ "*-5 * * * *", "minute field \"*-5\": invalid item \"*-5\"" },
	{ "1-2-3 * * * *", "minute field \"1-2-3\": invalid item \"1-2-3\"" },
	{ "1,5x * * * *", "minute field \"1,5x\": invalid item \"5x\"" },
	{ "-1 * * * *", "minute field \"-1\": invalid item \"-1\"" },
	{ "? * * * *", "minute field \"?\": invalid item \"?\"" },
	{ "1/2/3 * * * *", "minute field \"1/2/3\": invalid item \"1/2/3\"" },
	{ "** * * * *", "minute field \"**\": invalid item \"**\"" },
	{ "@reboot", "unknown macro \"@reboot\"" },
	{ "@daily 5", "unknown macro \"@daily 5\"" },
	{ "@", "unknown macro \"@\"" },
	{ "0 0 * * * @daily", "expected 5 fields, got 6" },
};

TEST(parse_error_table)
{
	struct schedule s, before;
	char *cause;
	size_t i;
	int failed = 0;

	memset(&before, 0x5a, sizeof before);
	for (i = 0; i < sizeof parse_errors / sizeof parse_errors[0]; i++) {
		s = before;
		cause = NULL;
		if (schedule_parse(parse_errors[i].expr, &s, &cause) != -1 ||
		    cause == NULL ||
		    strcmp(cause, parse_errors[i].cause) != 0 ||
		    !same_schedule(&s, &before)) {
			fprintf(stderr, "  \"%s\": cause \"%s\", want \"%s\"\n",
			    parse_errors[i].expr, cause ? cause : "(none)",
			    parse_errors[i].cause);
			failed++;
		}
		free(cause);
		if (schedule_parse(parse_errors[i].expr, &s, NULL) != -1)
			failed++;
	}
	ASSERT_EQ(failed, 0);
	ASSERT_EQ(schedule_parse(NULL, &s, &cause), -1);
	ASSERT_STREQ(cause, "expected 5 fields, got 0");
	free(cause);
	return (0);
}

/* A slow reference: the local clock at t, in seconds as if it were UTC. */
static long long
ref_wall(time_t t)
{
	struct tm tm;

	localtime_r(&t, &tm);
	return ((long long)timegm(&tm));
}

/*
 * Whether s matches the wall-clock minute w, by gmtime_r: 1 if it does, 0 if
 * not, -1 if no minute of that day does.
 */
static int
ref_match(const struct schedule *s, long long w)
{
	time_t t = (time_t)w;
	struct tm tm;
	int dom, dow;

	gmtime_r(&t, &tm);
	dom = s->dom >> tm.tm_mday & 1;
	dow = s->dow >> tm.tm_wday & 1;
	if (!(s->month >> (tm.tm_mon + 1) & 1) ||
	    !(s->dom_star || s->dow_star ? dom && dow : dom || dow))
		return (-1);
	return ((s->minute >> tm.tm_min & 1) && (s->hour >> tm.tm_hour & 1));
}

/*
 * The reference schedule_next, straight from the definition in schedule.h
 * (for zones whose offsets and changes are whole minutes and whose clocks
 * go back by less than three hours): the clock's highest reading by after
 * is m; the first slot w past m fires at the first instant the clock shows
 * w or more.  Returns 0, or -1 if it would take too long.
 */
static int
ref_next(const struct schedule *s, time_t after, time_t *next)
{
	long long m, w, lim;
	time_t t;
	int r;

	m = ref_wall(after);
	for (t = after - after % 60 - 3 * 3600; t <= after; t += 60) {
		if (ref_wall(t) > m)
			m = ref_wall(t);
	}
	lim = m + 400 * 86400LL;
	for (w = m - m % 60 + 60; (r = ref_match(s, w)) != 1;) {
		if (r == -1)
			w = w - w % 86400 + 86400;
		else
			w += 60;
		if (w > lim)
			return (-1);
	}
	t = after - after % 60 + 60;
	if (t < w - 16 * 3600)
		t = (time_t)(w - 16 * 3600);
	while (ref_wall(t) < w)
		t += 60;
	*next = t;
	return (0);
}

/* A deterministic pseudo-random number (a 64-bit LCG's high bits). */
static size_t
rnd(unsigned long long *seed)
{
	*seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
	return ((size_t)(*seed >> 33));
}

TEST(against_reference)
{
	static const char *const minutes[] = { "*", "*/15", "0", "30", "0,30",
		"5-10", "*/7", "59" };
	static const char *const hours[] = { "*", "2", "1-3", "*/2", "2,3", "1",
		"0" };
	static const char *const doms[] = { "*", "*", "*", "1-15", "*/3", "13",
		"25-31" };
	static const char *const months[] = { "*", "*", "*", "3,10",
		"mar-apr,oct-nov" };
	static const char *const dows[] = { "*", "*", "sun", "1-5", "0,6",
		"fri" };
	static const struct {
		const char *tz;
		time_t change;
	} zones[] = {
		/* Changes at 2026-03-29 01:00 and 2026-10-25 01:00 UTC. */
		{ "Europe/Berlin", 1774746000 },
		{ "Europe/Berlin", 1792890000 },
		/* 2026-03-08 07:00 and 2026-11-01 06:00 UTC. */
		{ "America/New_York", 1772953200 },
		{ "America/New_York", 1793512800 },
		/* 2026-04-04 15:00 and 2026-10-03 15:30 UTC. */
		{ "Australia/Lord_Howe", 1775314800 },
		{ "Australia/Lord_Howe", 1791041400 },
		{ "Asia/Kathmandu", 1775314800 },
		{ "UTC", 1775314800 },
	};
	struct schedule s;
	char expr[128], at[64], got[64], want[64];
	unsigned long long seed = 88172645463325252ULL;
	time_t a, b;
	int i, n, checked = 0, failed = 0, ra;

#define PICK(v) (v)[rnd(&seed) % (sizeof(v) / sizeof((v)[0]))]
	/* A tenth under valgrind (test.h). */
	n = test_under_valgrind() ? 400 : 4000;
	for (i = 0; i < n; i++) {
		size_t z = (size_t)i % (sizeof zones / sizeof zones[0]);
		time_t after;

		if (set_zone(zones[z].tz) != 0)
			return (1);
		snprintf(expr, sizeof expr, "%s %s %s %s %s", PICK(minutes),
		    PICK(hours), PICK(doms), PICK(months), PICK(dows));
		if (schedule_parse(expr, &s, NULL) != 0)
			return (1);
		after = zones[z].change - 2 * 86400 +
		    (time_t)(rnd(&seed) % (4 * 86400));
		if (i % 3 == 0)
			after -= after % 60;
		if (ref_next(&s, after, &b) != 0)
			continue;
		checked++;
		ra = schedule_next(&s, after, &a);
		if (ra != 0 || a != b) {
			fprintf(stderr,
			    "  TZ=%s \"%s\" after %s: got %s, want %s\n",
			    zones[z].tz, expr, fmt_time(after, at, sizeof at),
			    ra == 0 ? fmt_time(a, got, sizeof got) : "none",
			    fmt_time(b, want, sizeof want));
			if (++failed > 10)
				break;
		}
	}
#undef PICK
	ASSERT_EQ(failed, 0);
	ASSERT_OK(checked > n * 3 / 4);
	return (0);
}

TEST(never_and_limits)
{
	struct schedule s;
	time_t next = 42;

	ASSERT_EQ(set_zone("Europe/Berlin"), 0);
	ASSERT_EQ(parse_ok("0 0 30 2 *", &s), 0);
	ASSERT_EQ(schedule_next(&s, 1767225600, &next), -1);
	ASSERT_EQ(next, 42);
	ASSERT_EQ(parse_ok("0 0 31 2,4,6,9,11 *", &s), 0);
	ASSERT_EQ(schedule_next(&s, 1767225600, &next), -1);
	ASSERT_EQ(next, 42);
	/* A day field starting with "*" ANDs: odd days that are Sundays. */
	ASSERT_EQ(parse_ok("0 0 */2 2 sun", &s), 0);
	ASSERT_EQ(schedule_next(&s, 1767225600, &next), 0);
	ASSERT_EQ(next, 1769900400); /* 2026-02-01 00:00 CET */
	ASSERT_EQ(parse_ok("* * * * *", &s), 0);
	ASSERT_EQ(schedule_next(&s, -86400 * 365, &next), 0);
	ASSERT_EQ(next, -86400 * 365 + 60);
	return (0);
}

int
main(void)
{
	RUN(next_table);
	RUN(sequences);
	RUN(parse_fields);
	RUN(parse_macros);
	RUN(parse_error_table);
	RUN(against_reference);
	RUN(never_and_limits);
	TEST_MAIN_END();
}
