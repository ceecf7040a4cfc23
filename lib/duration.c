/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Durations and byte sizes as written in configuration files.  A duration is
 * one or more "NUMBER UNIT" terms without spaces ("1m30s", "1.5s"), counted
 * in microseconds because sd-event's clocks use them.  A size is a number of
 * bytes with an optional binary multiplier ("512K", "10M").
 */

#include "config.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "duration.h"
#include "xmalloc.h"

#define DURATION_USEC_PER_MIN (60 * DURATION_USEC_PER_SEC)
#define DURATION_USEC_PER_HOUR (60 * DURATION_USEC_PER_MIN)
#define DURATION_USEC_PER_DAY (24 * DURATION_USEC_PER_HOUR)

static const struct {
	const char *name;
	uint64_t usec;
} duration_units[] = {
	{ "us", 1 },
	{ "ms", DURATION_USEC_PER_MSEC },
	{ "s", DURATION_USEC_PER_SEC },
	{ "m", DURATION_USEC_PER_MIN },
	{ "h", DURATION_USEC_PER_HOUR },
	{ "d", DURATION_USEC_PER_DAY },
};

/* Find the unit spelled by the len letters at s; 0 if there is none. */
static uint64_t
duration_unit(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof duration_units / sizeof duration_units[0]; i++) {
		if (strlen(duration_units[i].name) == len &&
		    strncmp(duration_units[i].name, s, len) == 0)
			return (duration_units[i].usec);
	}
	return (0);
}

/* Set *cause (if wanted) to a message about the duration s. */
static int
duration_error(const char *s, const char *why, char **cause)
{
	if (cause != NULL) {
		if (why == NULL)
			xasprintf(cause, "invalid duration \"%s\"", s);
		else
			xasprintf(cause, "invalid duration \"%s\": %s", s, why);
	}
	return (-1);
}

/*
 * Parse one "NUMBER[.FRACTION]UNIT" term at *sp, advance *sp past it and
 * store its value in *out.  Returns 0, or -1 with *why set to a reason (or
 * NULL for plain syntax errors).
 */
static int
duration_term(const char **sp, uint64_t *out, const char **why)
{
	const char *s = *sp, *frac = NULL, *unit;
	uint64_t whole = 0, unit_usec, div = 1, v;

	*why = NULL;
	if (!isdigit((unsigned char)*s))
		return (-1);
	for (; isdigit((unsigned char)*s); s++) {
		if (whole > (UINT64_MAX - (uint64_t)(*s - '0')) / 10) {
			*why = "too large";
			return (-1);
		}
		whole = whole * 10 + (uint64_t)(*s - '0');
	}
	if (*s == '.') {
		frac = ++s;
		if (!isdigit((unsigned char)*s))
			return (-1);
		while (isdigit((unsigned char)*s))
			s++;
	}
	for (unit = s; isalpha((unsigned char)*s); s++)
		;
	if (s == unit) {
		*why = *s == ' ' || *s == '\t' ?
		    "no space allowed before the unit" :
		    "missing unit";
		return (-1);
	}
	if ((unit_usec = duration_unit(unit, (size_t)(s - unit))) == 0)
		return (-1);
	if (whole > UINT64_MAX / unit_usec) {
		*why = "too large";
		return (-1);
	}
	v = whole * unit_usec;
	for (; frac != NULL && isdigit((unsigned char)*frac); frac++) {
		/* Digits below one microsecond are ignored. */
		if (div > unit_usec / 10)
			break;
		div *= 10;
		v += (uint64_t)(*frac - '0') * (unit_usec / div);
	}
	*out = v;
	*sp = s;
	return (0);
}

/*
 * Parse a duration such as "250ms", "10s", "1m30s" or "1.5h" into
 * microseconds.  Units are us, ms, s, m, h and d; a number needs a unit
 * except a bare "0".  No spaces are allowed.  Returns 0, or -1 and, if
 * cause is not NULL, an owned message in *cause that the caller frees.
 */
int
duration_parse(const char *s, uint64_t *usec, char **cause)
{
	const char *p = s, *why;
	uint64_t total = 0, v;

	if (s == NULL)
		return (duration_error("", NULL, cause));
	if (strcmp(s, "0") == 0) {
		*usec = 0;
		return (0);
	}
	if (*s == '\0')
		return (duration_error(s, NULL, cause));
	while (*p != '\0') {
		if (duration_term(&p, &v, &why) != 0)
			return (duration_error(s, why, cause));
		if (v > UINT64_MAX - total)
			return (duration_error(s, "too large", cause));
		total += v;
	}
	*usec = total;
	return (0);
}

/*
 * Append whole units plus a fraction of frac/unit, trimmed of trailing
 * zeros, and the suffix to the len bytes at buf.
 */
static void
duration_append(char *buf, size_t len, uint64_t whole, uint64_t frac,
    uint64_t unit, const char *suffix)
{
	char digits[32];
	size_t used = strlen(buf), n;

	if (used >= len)
		return;
	if (frac == 0) {
		snprintf(buf + used, len - used, "%llu%s",
		    (unsigned long long)whole, suffix);
		return;
	}
	/* unit is 1000 or 1000000: its decimal digits less one. */
	n = (unit == DURATION_USEC_PER_SEC) ? 6 : 3;
	snprintf(
	    digits, sizeof digits, "%0*llu", (int)n, (unsigned long long)frac);
	while (n > 0 && digits[n - 1] == '0')
		digits[--n] = '\0';
	snprintf(buf + used, len - used, "%llu.%s%s", (unsigned long long)whole,
	    digits, suffix);
}

/*
 * Write usec in a compact human form ("0s", "250ms", "1.5s", "2m",
 * "1h30m", "1d2h") into buf, which holds len bytes, truncating if needed; the result
 * parses back to the same value with duration_parse.  Returns buf.
 */
char *
duration_format(uint64_t usec, char *buf, size_t len)
{
	uint64_t d, h, m;

	if (len == 0)
		return (buf);
	buf[0] = '\0';
	if (usec == 0) {
		duration_append(buf, len, 0, 0, 1, "s");
		return (buf);
	}
	if (usec < DURATION_USEC_PER_MSEC) {
		duration_append(buf, len, usec, 0, 1, "us");
		return (buf);
	}
	if (usec < DURATION_USEC_PER_SEC) {
		duration_append(buf, len, usec / DURATION_USEC_PER_MSEC,
		    usec % DURATION_USEC_PER_MSEC, DURATION_USEC_PER_MSEC,
		    "ms");
		return (buf);
	}
	d = usec / DURATION_USEC_PER_DAY;
	h = usec % DURATION_USEC_PER_DAY / DURATION_USEC_PER_HOUR;
	m = usec % DURATION_USEC_PER_HOUR / DURATION_USEC_PER_MIN;
	usec %= DURATION_USEC_PER_MIN;
	if (d != 0)
		duration_append(buf, len, d, 0, 1, "d");
	if (h != 0)
		duration_append(buf, len, h, 0, 1, "h");
	if (m != 0)
		duration_append(buf, len, m, 0, 1, "m");
	if (usec != 0) {
		duration_append(buf, len, usec / DURATION_USEC_PER_SEC,
		    usec % DURATION_USEC_PER_SEC, DURATION_USEC_PER_SEC, "s");
	}
	return (buf);
}

/*
 * Parse a byte size: a number, optionally followed by K, M, G or T
 * (powers of 1024, either case).  Returns 0, or -1 and, if cause is not
 * NULL, an owned message in *cause that the caller frees.
 */
int
duration_size_parse(const char *s, uint64_t *bytes, char **cause)
{
	const char *p = s;
	uint64_t v = 0, mult = 1;

	if (s == NULL || !isdigit((unsigned char)*s))
		goto invalid;
	for (; isdigit((unsigned char)*p); p++) {
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			goto invalid;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	/* Each suffix falls through to the next smaller one. */
	switch (*p) { /* NOLINT(bugprone-branch-clone) */
	case '\0':
		break;
	case 'T': /* NOLINT(bugprone-branch-clone) */
	case 't':
		mult <<= 10;
		/* FALLTHROUGH */
	case 'G':
	case 'g':
		mult <<= 10;
		/* FALLTHROUGH */
	case 'M':
	case 'm':
		mult <<= 10;
		/* FALLTHROUGH */
	case 'K':
	case 'k':
		mult <<= 10;
		if (*++p != '\0')
			goto invalid;
		break;
	default:
		goto invalid;
	}
	if (v > UINT64_MAX / mult)
		goto invalid;
	*bytes = v * mult;
	return (0);

invalid:
	if (cause != NULL)
		xasprintf(cause, "invalid size \"%s\"", s == NULL ? "" : s);
	return (-1);
}
