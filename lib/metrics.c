/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The OpenMetrics text format; see metrics.h.  Label values escape '\\',
 * '"' and newline; HELP escapes '\\' and newline; numbers are written as
 * integers when they are, else with 17 significant digits, and NaN and
 * the infinities as the format spells them.
 */

#include "config.h"

#include <float.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

void
metrics_init(struct metrics *m, metrics_write_fn fn, void *arg)
{
	m->write = fn;
	m->arg = arg;
	m->family[0] = '\0';
}

static void
metrics_put(struct metrics *m, const char *s)
{
	m->write(m->arg, s, strlen(s));
}

/*
 * S with '\\', newline and, when QUOTE, '"' escaped; the runs between
 * them written whole (a scrape writes some 40,000 label values).
 */
static void
metrics_escaped(struct metrics *m, const char *s, int quote)
{
	size_t n;

	for (;;) {
		n = strcspn(s, quote ? "\\\n\"" : "\\\n");
		if (n > 0)
			m->write(m->arg, s, n);
		s += n;
		if (*s == '\0')
			return;
		if (*s == '\\')
			m->write(m->arg, "\\\\", 2);
		else if (*s == '\n')
			m->write(m->arg, "\\n", 2);
		else
			m->write(m->arg, "\\\"", 2);
		s++;
	}
}

void
metrics_family(struct metrics *m, const char *name, const char *type,
    const char *unit, const char *help)
{
	snprintf(m->family, sizeof(m->family), "%s", name);
	metrics_put(m, "# TYPE ");
	metrics_put(m, name);
	metrics_put(m, " ");
	metrics_put(m, type);
	metrics_put(m, "\n");
	if (unit != NULL) {
		metrics_put(m, "# UNIT ");
		metrics_put(m, name);
		metrics_put(m, " ");
		metrics_put(m, unit);
		metrics_put(m, "\n");
	}
	if (help != NULL) {
		metrics_put(m, "# HELP ");
		metrics_put(m, name);
		metrics_put(m, " ");
		metrics_escaped(m, help, 0);
		metrics_put(m, "\n");
	}
}

/* The sample's name and labels, up to the space before the value. */
static void
metrics_head(struct metrics *m, const char *suffix, const char *const *labels)
{
	size_t i;

	metrics_put(m, m->family);
	metrics_put(m, suffix);
	if (labels != NULL && labels[0] != NULL) {
		metrics_put(m, "{");
		for (i = 0; labels[i] != NULL && labels[i + 1] != NULL;
		     i += 2) {
			if (i > 0)
				metrics_put(m, ",");
			metrics_put(m, labels[i]);
			metrics_put(m, "=\"");
			metrics_escaped(m, labels[i + 1], 1);
			metrics_put(m, "\"");
		}
		metrics_put(m, "}");
	}
	metrics_put(m, " ");
}

/* "-12\n": an integer and a newline, without printf (most samples). */
static void
metrics_integer(char *buf, size_t len, int64_t v)
{
	char tmp[24], *p = tmp + sizeof(tmp);
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	size_t n;

	*--p = '\n';
	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0);
	if (v < 0)
		*--p = '-';
	n = (size_t)(tmp + sizeof(tmp) - p);
	if (n >= len)
		n = len - 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
}

void
metrics_sample(
    struct metrics *m, const char *suffix, const char *const *labels, double v)
{
	char buf[64];

	metrics_head(m, suffix, labels);
	if (v != v) /* NaN */
		snprintf(buf, sizeof(buf), "NaN\n");
	else if (v > DBL_MAX || v < -DBL_MAX)
		snprintf(buf, sizeof(buf), "%sInf\n", v > 0 ? "+" : "-");
	else if (v > -1e15 && v < 1e15 && v == (double)(int64_t)v)
		metrics_integer(buf, sizeof(buf), (int64_t)v);
	else {
		/* The shortest of 15, 16 and 17 digits that reads back. */
		snprintf(buf, sizeof(buf), "%.15g", v);
		if (strtod(buf, NULL) != v)
			snprintf(buf, sizeof(buf), "%.16g", v);
		if (strtod(buf, NULL) != v)
			snprintf(buf, sizeof(buf), "%.17g", v);
		strlcat(buf, "\n", sizeof(buf));
	}
	metrics_put(m, buf);
}

void
metrics_sample_u64(struct metrics *m, const char *suffix,
    const char *const *labels, uint64_t v)
{
	char buf[32];

	metrics_head(m, suffix, labels);
	if (v <= INT64_MAX)
		metrics_integer(buf, sizeof(buf), (int64_t)v);
	else
		snprintf(buf, sizeof(buf), "%" PRIu64 "\n", v);
	metrics_put(m, buf);
}

void
metrics_end(struct metrics *m)
{
	metrics_put(m, "# EOF\n");
	m->family[0] = '\0';
}
