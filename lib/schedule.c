/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Cron expressions and the next time one is due.  Parsing follows Vixie cron
 * (cronie): five fields, each a comma-separated list of "*", "N" or "N-M",
 * any of them followed by "/STEP" ("N/STEP" is "N-max/STEP"); month and day
 * names; 7 for Sunday; and the @hourly..@yearly macros.
 *
 * schedule_next works on the local wall clock written as seconds since
 * 1970-01-01 00:00:00 on that clock ("wall seconds"), which turns dates into
 * plain arithmetic.  A slot W fires at the first instant at which the clock
 * shows W or later; that one rule gives the DST behaviour described in
 * schedule.h.  It finds the first matching slot after the clock reading at
 * "after" by skipping whole months, days and hours, then the instant it fires
 * from the UTC offsets a day either side, which differ only around a change.
 */

#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "schedule.h"
#include "xmalloc.h"

#define SCHEDULE_DAY 86400LL
/* How many years ahead schedule_next looks: enough for any 29 February. */
#define SCHEDULE_YEARS 8
/* Bounds the rounds spent skipping slots that a repeated hour fired. */
#define SCHEDULE_ROUNDS 16

static const char *const schedule_months[] = { "jan", "feb", "mar", "apr",
	"may", "jun", "jul", "aug", "sep", "oct", "nov", "dec" };
static const char *const schedule_days[] = { "sun", "mon", "tue", "wed", "thu",
	"fri", "sat" };

struct schedule_field {
	const char *name;
	int lo;
	int hi;
	const char *const *names; /* names[i] is the value base + i */
	int nnames;
	int base;
};

static const struct schedule_field schedule_fields[] = {
	{ "minute", 0, 59, NULL, 0, 0 },
	{ "hour", 0, 23, NULL, 0, 0 },
	{ "day-of-month", 1, 31, NULL, 0, 0 },
	{ "month", 1, 12, schedule_months, 12, 1 },
	{ "day-of-week", 0, 7, schedule_days, 7, 0 },
};
#define SCHEDULE_NFIELDS (sizeof schedule_fields / sizeof schedule_fields[0])

static const struct {
	const char *name;
	const char *expr;
} schedule_macros[] = {
	{ "@yearly", "0 0 1 1 *" },
	{ "@annually", "0 0 1 1 *" },
	{ "@monthly", "0 0 1 * *" },
	{ "@weekly", "0 0 * * 0" },
	{ "@daily", "0 0 * * *" },
	{ "@midnight", "0 0 * * *" },
	{ "@hourly", "0 * * * *" },
};

/* One field being parsed, for error messages. */
struct schedule_ctx {
	const struct schedule_field *f;
	const char *text; /* the whole field */
	size_t len;
	char **cause;
};

static int schedule_error(struct schedule_ctx *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

/* Set *cause (if wanted) to "NAME field "TEXT": REASON"; returns -1. */
static int
schedule_error(struct schedule_ctx *c, const char *fmt, ...)
{
	char reason[256];
	va_list ap;

	if (c->cause == NULL)
		return (-1);
	va_start(ap, fmt);
	/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
	vsnprintf(reason, sizeof reason, fmt, ap);
	va_end(ap);
	xasprintf(c->cause, "%s field \"%.*s\": %s", c->f->name, (int)c->len,
	    c->text, reason);
	return (-1);
}

/*
 * Parse a number or a name at *pp, before end, and advance *pp past it.
 * Returns 0; 1 if there is neither there; -1 after reporting a bad one.
 */
static int
schedule_value(
    struct schedule_ctx *c, const char **pp, const char *end, int *out)
{
	const char *p = *pp, *word;
	size_t n;
	int i;

	if (p < end && isdigit((unsigned char)*p)) {
		long v = 0;

		for (; p < end && isdigit((unsigned char)*p); p++) {
			if (v < 100000)
				v = v * 10 + (*p - '0');
		}
		if (v < c->f->lo || v > c->f->hi) {
			schedule_error(
			    c, "value out of range %d-%d", c->f->lo, c->f->hi);
			return (-1);
		}
		*out = (int)v;
		*pp = p;
		return (0);
	}
	for (word = p; p < end && isalpha((unsigned char)*p); p++)
		;
	if (p == word)
		return (1);
	n = (size_t)(p - word);
	for (i = 0; i < c->f->nnames && n == 3; i++) {
		if (strncasecmp(word, c->f->names[i], 3) == 0) {
			*out = c->f->base + i;
			*pp = p;
			return (0);
		}
	}
	schedule_error(c, "unknown name \"%.*s\"", n > 32 ? 32 : (int)n, word);
	return (-1);
}

/*
 * Parse the list item from p to end ("*", "N", "N-M", any of them with
 * "/STEP") and set its bits in *bits.  Returns 0 or -1.
 */
static int
schedule_item(
    struct schedule_ctx *c, const char *p, const char *end, uint64_t *bits)
{
	const char *item = p, *digits;
	int lo, hi, step = 1, single = 0, r, v;

	if (p == end)
		return (schedule_error(c, "empty list item"));
	if (*p == '*') {
		lo = c->f->lo;
		hi = c->f->hi;
		p++;
	} else {
		if ((r = schedule_value(c, &p, end, &lo)) != 0)
			goto syntax;
		hi = lo;
		if (p < end && *p == '-') {
			p++;
			if ((r = schedule_value(c, &p, end, &hi)) != 0)
				goto syntax;
			if (hi < lo) {
				r = (int)(p - item);
				return (schedule_error(
				    c, "range %.*s is reversed", r, item));
			}
		} else
			single = 1;
	}
	if (p < end && *p == '/') {
		if (++p == end || !isdigit((unsigned char)*p)) {
			r = 1;
			goto syntax;
		}
		digits = p;
		for (v = 0; p < end && isdigit((unsigned char)*p); p++) {
			if (v < 100000)
				v = v * 10 + (*p - '0');
		}
		if (v == 0)
			return (schedule_error(c, "step 0"));
		if (v > c->f->hi) {
			r = (int)(p - digits);
			return (schedule_error(c, "step %.*s out of range 1-%d",
			    r, digits, c->f->hi));
		}
		step = v;
		if (single)
			hi = c->f->hi; /* "N/S" is "N-max/S" */
	}
	if (p != end) {
		r = 1;
		goto syntax;
	}
	for (v = lo; v <= hi; v += step)
		*bits |= 1ULL << v;
	return (0);

syntax:
	if (r == 1) {
		return (schedule_error(
		    c, "invalid item \"%.*s\"", (int)(end - item), item));
	}
	return (-1);
}

/* Parse the comma-separated list in c into *bits.  Returns 0 or -1. */
static int
schedule_list(struct schedule_ctx *c, uint64_t *bits)
{
	const char *p = c->text, *end = c->text + c->len, *comma;

	*bits = 0;
	for (;;) {
		if ((comma = memchr(p, ',', (size_t)(end - p))) == NULL)
			return (schedule_item(c, p, end, bits));
		if (schedule_item(c, p, comma, bits) != 0)
			return (-1);
		p = comma + 1;
	}
}

/* Parse the macro at s ("@daily"); returns 0 or -1. */
static int
schedule_macro(const char *s, struct schedule *out, char **cause)
{
	size_t len = strlen(s), i;

	while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	for (i = 0; i < sizeof schedule_macros / sizeof schedule_macros[0];
	     i++) {
		if (strlen(schedule_macros[i].name) == len &&
		    strncasecmp(s, schedule_macros[i].name, len) == 0)
			return (schedule_parse(
			    schedule_macros[i].expr, out, cause));
	}
	if (cause != NULL)
		xasprintf(cause, "unknown macro \"%.*s\"", (int)len, s);
	return (-1);
}

/*
 * Parse the cron expression expr: five fields separated by spaces or tabs, or
 * one of the macros @yearly (@annually), @monthly, @weekly, @daily
 * (@midnight) and @hourly.  Returns 0 and fills *out, or -1 and, if cause is
 * not NULL, an owned message in *cause that the caller frees; *out is left
 * alone on error.
 */
int
schedule_parse(const char *expr, struct schedule *out, char **cause)
{
	const char *p, *start[SCHEDULE_NFIELDS];
	size_t len[SCHEDULE_NFIELDS], n = 0, i;
	uint64_t bits[SCHEDULE_NFIELDS];
	struct schedule_ctx c;
	struct schedule s;

	p = expr == NULL ? "" : expr;
	p += strspn(p, " \t");
	if (*p == '@')
		return (schedule_macro(p, out, cause));
	while (*p != '\0') {
		if (n < SCHEDULE_NFIELDS) {
			start[n] = p;
			len[n] = strcspn(p, " \t");
		}
		n++;
		p += strcspn(p, " \t");
		p += strspn(p, " \t");
	}
	if (n != SCHEDULE_NFIELDS) {
		if (cause != NULL)
			xasprintf(cause, "expected 5 fields, got %zu", n);
		return (-1);
	}
	for (i = 0; i < SCHEDULE_NFIELDS; i++) {
		c.f = &schedule_fields[i];
		c.text = start[i];
		c.len = len[i];
		c.cause = cause;
		if (schedule_list(&c, &bits[i]) != 0)
			return (-1);
	}
	memset(&s, 0, sizeof s);
	s.minute = bits[0];
	s.hour = (uint32_t)bits[1];
	s.dom = (uint32_t)bits[2];
	s.month = (uint16_t)bits[3];
	s.dow = (uint8_t)((bits[4] | bits[4] >> 7) & 0x7f); /* 7 is Sunday */
	s.dom_star = start[2][0] == '*';
	s.dow_star = start[4][0] == '*';
	*out = s;
	return (0);
}

/* a / b rounded towards minus infinity, for b > 0. */
static long long
schedule_floordiv(long long a, long long b)
{
	long long q = a / b;

	if (a % b < 0)
		q--;
	return (q);
}

/* Days since 1970-01-01 of the (proleptic Gregorian) date y-m-d. */
static long long
schedule_days_from_civil(long long y, int m, int d)
{
	long long era, yoe, doy, doe;

	if (m <= 2)
		y--;
	era = schedule_floordiv(y, 400);
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return (era * 146097 + doe - 719468);
}

/* The date of day z since 1970-01-01. */
static void
schedule_civil_from_days(long long z, long long *y, int *m, int *d)
{
	long long era, doe, yoe, doy, mp;

	z += 719468;
	era = schedule_floordiv(z, 146097);
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

/* The number of days in month m of year y. */
static int
schedule_mdays(long long y, int m)
{
	static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30,
		31 };

	if (m == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))
		return (29);
	return (mdays[m - 1]);
}

/* The lowest bit from first to last set in mask, or -1. */
static int
schedule_bit(uint64_t mask, int first, int last)
{
	int i;

	for (i = first; i <= last; i++) {
		if (mask & (1ULL << i))
			return (i);
	}
	return (-1);
}

/* Whether s matches the date y-m-d (the Vixie day-of-month/week rule). */
static int
schedule_day(const struct schedule *s, long long y, int m, int d)
{
	long long days = schedule_days_from_civil(y, m, d);
	int dow = (int)((days % 7 + 11) % 7); /* 1970-01-01 was a Thursday */
	int dom_ok = (s->dom >> d) & 1, dow_ok = (s->dow >> dow) & 1;

	if (s->dom_star || s->dow_star)
		return (dom_ok && dow_ok);
	return (dom_ok || dow_ok);
}

/*
 * The first slot of s at or after wall time from (a whole minute), in years
 * up to ylimit, into *w.  Returns 0, or -1 if there is none.
 */
static int
schedule_find(
    const struct schedule *s, long long from, long long ylimit, long long *w)
{
	long long days, secs, y;
	int m, d, h, mi, v;

	days = schedule_floordiv(from, SCHEDULE_DAY);
	secs = from - days * SCHEDULE_DAY;
	schedule_civil_from_days(days, &y, &m, &d);
	h = (int)(secs / 3600);
	mi = (int)(secs % 3600 / 60);
	for (;;) {
		if (y > ylimit)
			return (-1);
		if (m > 12 || (s->month & (1U << m)) == 0) {
			if (m > 12 ||
			    (v = schedule_bit(s->month, m, 12)) == -1) {
				y++;
				v = schedule_bit(s->month, 1, 12);
				if (v == -1)
					return (-1);
			}
			m = v;
			d = 1;
			h = mi = 0;
			continue;
		}
		if (d > schedule_mdays(y, m)) {
			m++;
			d = 1;
			h = mi = 0;
			continue;
		}
		if (h > 23 || !schedule_day(s, y, m, d) ||
		    (v = schedule_bit(s->hour, h, 23)) == -1) {
			d++;
			h = mi = 0;
			continue;
		}
		if (v != h) {
			h = v;
			mi = 0;
		}
		if ((v = schedule_bit(s->minute, mi, 59)) == -1) {
			h++;
			mi = 0;
			continue;
		}
		mi = v;
		break;
	}
	*w = schedule_days_from_civil(y, m, d) * SCHEDULE_DAY + h * 3600LL +
	    mi * 60LL;
	return (0);
}

/* The local wall clock at instant t, in wall seconds.  Returns 0 or -1. */
static int
schedule_wall(long long t, long long *wall)
{
	time_t tt = (time_t)t;
	struct tm tm;
	long long days;

	if ((long long)tt != t || localtime_r(&tt, &tm) == NULL)
		return (-1);
	days = schedule_days_from_civil(
	    tm.tm_year + 1900LL, tm.tm_mon + 1, tm.tm_mday);
	*wall = days * SCHEDULE_DAY + tm.tm_hour * 3600LL + tm.tm_min * 60LL +
	    tm.tm_sec;
	return (0);
}

/* The UTC offset (local minus UTC, in seconds) at instant t. */
static int
schedule_offset(long long t, long long *off)
{
	long long wall;

	if (schedule_wall(t, &wall) != 0)
		return (-1);
	*off = wall - t;
	return (0);
}

/*
 * Search (lo, hi], where the clock shows less than w at lo and w or more at
 * hi, for the instant at which it first shows w or more.  Returns 0 or -1.
 */
static int
schedule_cross(long long lo, long long hi, long long w, long long *t)
{
	while (hi - lo > 1) {
		long long mid = lo + (hi - lo) / 2, wall;

		if (schedule_wall(mid, &wall) != 0)
			return (-1);
		if (wall >= w)
			hi = mid;
		else
			lo = mid;
	}
	*t = hi;
	return (0);
}

/*
 * The instant at which slot w fires: the first at which the clock shows w
 * or later.  That is w itself if it occurs once, its first occurrence if it
 * occurs twice, and the end of the gap if it falls into one.  The offsets
 * a day before and after give the one or two instants that may show w.
 * Returns 0 or -1.
 */
static int
schedule_fire(long long w, long long *t)
{
	long long oa, ob, ta, tb, o, lo, hi, wlo, whi;
	int va, vb;

	if (schedule_offset(w - SCHEDULE_DAY, &oa) != 0 ||
	    schedule_offset(w + SCHEDULE_DAY, &ob) != 0)
		return (-1);
	ta = w - oa;
	tb = w - ob;
	if (schedule_offset(ta, &o) != 0)
		return (-1);
	va = o == oa;
	vb = va;
	if (ob != oa) {
		if (schedule_offset(tb, &o) != 0)
			return (-1);
		vb = o == ob;
	}
	if (va && vb) {
		*t = ta < tb ? ta : tb;
		return (0);
	}
	if (va || vb) {
		*t = va ? ta : tb;
		return (0);
	}

	/* A gap lies between the two; or, in a strange zone, anywhere. */
	lo = ta < tb ? ta : tb;
	hi = ta < tb ? tb : ta;
	if (schedule_wall(lo, &wlo) != 0 || schedule_wall(hi, &whi) != 0)
		return (-1);
	if (wlo >= w || whi < w) {
		lo = w - 2 * SCHEDULE_DAY;
		hi = w + 2 * SCHEDULE_DAY;
	}
	return (schedule_cross(lo, hi, w, t));
}

/*
 * After is in the second pass of a stretch of wall-clock time that repeated,
 * and slot w fired at t in the first.  Set *now to the latest wall time the
 * clock showed by after, so that the slots up to it are skipped: the clock
 * shows w or more from t until it went back, then less.  Returns 0 or -1.
 */
static int
schedule_skip(long long w, long long t, time_t after, long long *now)
{
	long long lo = t, hi = after, wall;

	while (hi - lo > 1) {
		long long mid = lo + (hi - lo) / 2;

		if (schedule_wall(mid, &wall) != 0)
			return (-1);
		if (wall >= w)
			lo = mid;
		else
			hi = mid;
	}
	if (schedule_wall(lo, &wall) != 0)
		return (-1);
	*now = wall > w ? wall : w;
	return (0);
}

/*
 * Find the first instant strictly after after at which s fires, in the local
 * time zone (see schedule.h), looking up to eight years ahead.  Returns 0 and
 * sets *next, or -1 if there is none.
 */
int
schedule_next(const struct schedule *s, time_t after, time_t *next)
{
	long long now, w, t, ylimit, y;
	int round, m, d;

	tzset();
	if (schedule_wall(after, &now) != 0)
		return (-1);
	schedule_civil_from_days(
	    schedule_floordiv(now, SCHEDULE_DAY), &y, &m, &d);
	ylimit = y + SCHEDULE_YEARS;

	/*
	 * Slots up to the clock reading at after fired at or before after;
	 * the first one past it fires next unless after is in the second
	 * pass of a repeated stretch and the slot fired in the first.
	 */
	for (round = 0; round < SCHEDULE_ROUNDS; round++) {
		long long from = (schedule_floordiv(now, 60) + 1) * 60;

		if (schedule_find(s, from, ylimit, &w) != 0 ||
		    schedule_fire(w, &t) != 0)
			return (-1);
		if (t > (long long)after) {
			*next = (time_t)t;
			return (0);
		}
		if (schedule_skip(w, t, after, &now) != 0)
			return (-1);
	}
	return (-1);
}
