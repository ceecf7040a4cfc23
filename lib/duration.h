/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Durations ("250ms", "10s", "5m", "2h", "1d", and sums such as "1m30s")
 * as microseconds, the unit of sd-event's clocks; and byte sizes ("10M").
 */

#ifndef VIGIL_DURATION_H
#define VIGIL_DURATION_H

#include <stddef.h>
#include <stdint.h>

#define DURATION_USEC_PER_MSEC 1000ULL
#define DURATION_USEC_PER_SEC 1000000ULL

int duration_parse(const char *, uint64_t *, char **);
char *duration_format(uint64_t, char *, size_t);
int duration_size_parse(const char *, uint64_t *, char **);

#endif
