/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The OpenMetrics text format (application/openmetrics-text; version=
 * 1.0.0), written as it goes: a family's "# TYPE", "# UNIT" and "# HELP"
 * lines, then its samples, each with its labels escaped; "# EOF" at the
 * end.  Pure: the text goes through a callback, nothing is kept but the
 * family being written.
 */

#ifndef VIGIL_METRICS_H
#define VIGIL_METRICS_H

#include <stddef.h>
#include <stdint.h>

typedef void (*metrics_write_fn)(void *, const char *, size_t);

struct metrics {
	metrics_write_fn write;
	void *arg;
	char family[128]; /* the family being written, "" before the first */
};

void metrics_init(struct metrics *, metrics_write_fn, void *);

/*
 * Begin family NAME of TYPE ("gauge", "counter", "info", "stateset", ...),
 * with UNIT (NULL: none; NAME must then end in "_UNIT") and HELP.
 */
void metrics_family(
    struct metrics *, const char *, const char *, const char *, const char *);

/*
 * One sample of the family: its name plus SUFFIX ("", "_total", "_info"),
 * the labels given as NULL-terminated name, value pairs (LABELS may be
 * NULL), and the value.
 */
void metrics_sample(
    struct metrics *, const char *, const char *const *, double);
void metrics_sample_u64(
    struct metrics *, const char *, const char *const *, uint64_t);

/* "# EOF": the exposition is complete. */
void metrics_end(struct metrics *);

#endif
