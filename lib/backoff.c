/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Capped exponential backoff with jitter.  The jitter keeps many jobs that
 * failed together (a database went away) from restarting in lockstep.
 */

#include "config.h"

#include <stdint.h>

#include "backoff.h"

/*
 * Return the delay in microseconds before the restart that follows the
 * failures'th consecutive failed start (failures >= 1; 0 gives 0).  rnd is
 * any 32-bit random number; it moves the result by up to +-10%.  The result
 * never exceeds max, whatever the jitter.
 */
uint64_t
backoff_next(const struct backoff *b, unsigned int failures, uint32_t rnd)
{
	uint64_t d, span, off;
	unsigned int i;

	if (failures == 0 || b->base == 0)
		return (0);
	d = b->base;
	for (i = 1; i < failures && d < b->max; i++) {
		if (d > UINT64_MAX / 2) {
			d = UINT64_MAX;
			break;
		}
		d *= 2;
	}
	if (d > b->max)
		d = b->max;

	/* Jitter: d * (0.9 + 0.2 * rnd / 2^32). */
	span = d / 5;
	off = (uint64_t)(((unsigned __int128)span * rnd) >> 32);
	d = d - d / 10 + off;
	if (d > b->max)
		d = b->max;
	return (d);
}
