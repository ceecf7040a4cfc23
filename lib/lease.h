/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The arithmetic of a cluster lease, pure: no clock, no system call.  The
 * caller passes the times (CLOCK_BOOTTIME usec: a suspended host sees its
 * window expired on resume) and carries out what comes back
 * (supervisord/cluster.c).
 *
 * A node trusts a lease until send time of its last answered renew + ttl
 * - margin.  PostgreSQL expires the row at its own now() of that renew +
 * ttl, later than the send, so the copy is gone before anyone else can
 * take the lease: stop_signal at trust - stop_timeout, SIGKILL at trust.
 */

#ifndef VIGIL_LEASE_H
#define VIGIL_LEASE_H

#include <stdint.h>

/* The cluster's timings, usec. */
struct lease_timing {
	uint64_t ttl;           /* lease_ttl */
	uint64_t renew;         /* renew_interval */
	uint64_t query_timeout; /* a statement with no answer by then failed */
	uint64_t margin;        /* fence_margin */
};

/* What the fence of a held lease does at a time. */
enum lease_fence {
	LEASE_FENCE_NONE = 0, /* trusted: nothing */
	LEASE_FENCE_STOP,     /* stop_signal: trust - stop_timeout is past */
	LEASE_FENCE_KILL,     /* SIGKILL: trust is past */
};

/* The first epoch of a WAL timeline: tokens never go back on failover. */
#define LEASE_EPOCH_SHIFT 40

uint64_t lease_trust(const struct lease_timing *, uint64_t);
uint64_t lease_stop_at(uint64_t, uint64_t);
enum lease_fence lease_fence(uint64_t, uint64_t, uint64_t);
uint64_t lease_retry_in(int64_t, int64_t, uint64_t);
int lease_check(const struct lease_timing *, uint64_t, const char *, char **);
int64_t lease_epoch_floor(int);

#endif
