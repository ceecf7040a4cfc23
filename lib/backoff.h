/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Restart delays: the delay after the Nth consecutive failed start is
 * base * 2^(N-1), capped, with +-10% jitter.  Pure arithmetic; the caller
 * supplies the randomness and never the clock.
 */

#ifndef VIGIL_BACKOFF_H
#define VIGIL_BACKOFF_H

#include <stdint.h>

struct backoff {
	uint64_t base; /* first delay, microseconds */
	uint64_t max;  /* cap, microseconds */
};

uint64_t backoff_next(const struct backoff *, unsigned int, uint32_t);

#endif
