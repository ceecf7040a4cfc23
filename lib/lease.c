/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The arithmetic of a cluster lease (lease.h): the trust deadline, when
 * the fence stops and kills, how long a standby sleeps, and the rule
 * vigild -t checks between the timings and a job's stop_timeout.
 */

#include "config.h"

#include <stdint.h>

#include "duration.h"
#include "lease.h"
#include "xmalloc.h"

/* A standby wakes this long after the holder's lease could expire. */
#define LEASE_RETRY_SLACK 20000

/*
 * The trust deadline of a lease whose renew (or acquire) was sent at
 * sent and answered: sent + ttl - margin.
 */
uint64_t
lease_trust(const struct lease_timing *t, uint64_t sent)
{
	if (t->ttl <= t->margin)
		return (sent);
	return (sent + t->ttl - t->margin);
}

/* When the graceful part of the fence begins: trust - stop_timeout. */
uint64_t
lease_stop_at(uint64_t trust, uint64_t stop_timeout)
{
	return (trust > stop_timeout ? trust - stop_timeout : 0);
}

/* What the fence of a lease trusted until trust does at now. */
enum lease_fence
lease_fence(uint64_t now, uint64_t trust, uint64_t stop_timeout)
{
	if (now >= trust)
		return (LEASE_FENCE_KILL);
	if (now >= lease_stop_at(trust, stop_timeout))
		return (LEASE_FENCE_STOP);
	return (LEASE_FENCE_NONE);
}

/*
 * How long a standby waits before it bids again, usec: until the holder's
 * lease could expire (ms_left) or the quarantine ends, whichever is later,
 * and a little more; a negative figure is not known (no row, no answer):
 * one renew interval.
 */
uint64_t
lease_retry_in(int64_t ms_left, int64_t quarantine_ms, uint64_t renew)
{
	int64_t ms = ms_left > quarantine_ms ? ms_left : quarantine_ms;

	if (ms < 0)
		return (renew);
	return ((uint64_t)ms * 1000 + LEASE_RETRY_SLACK);
}

/*
 * The rule between the timings and a job's stop time (what names it:
 * "stop_timeout", or a queue's "drain_timeout + stop_timeout"):
 * renew_interval + 2 query_timeout + stop time + fence_margin <=
 * lease_ttl, so that two renews may fail before the fence begins.  Return 0, or -1 with cause.
 */
int
lease_check(const struct lease_timing *t, uint64_t stop_timeout,
    const char *what, char **cause)
{
	char a[32], b[32], c[32], d[32], e[32];
	uint64_t need;

	need = t->renew + 2 * t->query_timeout + stop_timeout + t->margin;
	if (need <= t->ttl)
		return (0);
	xasprintf(cause,
	    "%s %s is too long for the cluster's lease_ttl %s: "
	    "renew_interval %s + 2 x query_timeout %s + %s + "
	    "fence_margin %s must not exceed lease_ttl, so that two renews "
	    "may fail before the fence begins",
	    what, duration_format(stop_timeout, a, sizeof(a)),
	    duration_format(t->ttl, b, sizeof(b)),
	    duration_format(t->renew, c, sizeof(c)),
	    duration_format(t->query_timeout, d, sizeof(d)), what,
	    duration_format(t->margin, e, sizeof(e)));
	return (-1);
}

/* The first epoch issued on WAL timeline tl (1 on timeline 1). */
int64_t
lease_epoch_floor(int tl)
{
	if (tl < 1)
		tl = 1;
	return (((int64_t)(tl - 1) << LEASE_EPOCH_SHIFT) + 1);
}
