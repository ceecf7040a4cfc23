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

/*
 * Is something done at most every usec due: never done (*last 0) or done
 * every usec ago or more?  If so, *last becomes now.  For rate-limited
 * warnings.
 */
int
monotime_due(uint64_t *last, uint64_t every)
{
	uint64_t now = monotime_now();

	if (*last != 0 && now - *last < every)
		return (0);
	*last = now;
	return (1);
}
