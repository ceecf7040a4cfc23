/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/* The monotonic clock in microseconds. */

#include "config.h"

#include <time.h>

#include "monotime.h"

/* CLOCK_MONOTONIC now, in microseconds. */
uint64_t
monotime_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000);
}
