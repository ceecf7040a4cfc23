/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/* Tests of the lease arithmetic: trust, fence times, standby sleep, rule. */

#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lease.h"
#include "test.h"

#define S 1000000ULL
#define MS 1000ULL

/* The prototype's fast timings: TTL 5 s, renew 1 s, margin 1 s. */
static const struct lease_timing fast = { 5 * S, 1 * S, 1 * S, 1 * S };

TEST(trust_from_send_time)
{
	/* sent at 100 s: trusted until 100 + 5 - 1 */
	ASSERT_EQ(lease_trust(&fast, 100 * S), 104 * S);
	return (0);
}

TEST(trust_never_before_send)
{
	struct lease_timing odd = { 1 * S, 1 * S, 1 * S, 2 * S };

	ASSERT_EQ(lease_trust(&odd, 7 * S), 7 * S);
	return (0);
}

TEST(fence_order)
{
	uint64_t trust = lease_trust(&fast, 100 * S), stop = 500 * MS;

	ASSERT_EQ(lease_stop_at(trust, stop), 104 * S - 500 * MS);
	ASSERT_EQ(lease_fence(100 * S, trust, stop), LEASE_FENCE_NONE);
	ASSERT_EQ(lease_fence(trust - stop - 1, trust, stop), LEASE_FENCE_NONE);
	ASSERT_EQ(lease_fence(trust - stop, trust, stop), LEASE_FENCE_STOP);
	ASSERT_EQ(lease_fence(trust - 1, trust, stop), LEASE_FENCE_STOP);
	ASSERT_EQ(lease_fence(trust, trust, stop), LEASE_FENCE_KILL);
	/* a stop_timeout longer than the window: stop at once */
	ASSERT_EQ(lease_stop_at(3 * S, 10 * S), 0);
	ASSERT_EQ(lease_fence(1, 3 * S, 10 * S), LEASE_FENCE_STOP);
	return (0);
}

/*
 * The kill at trust comes at least margin before PostgreSQL expires the
 * row, whatever the round trip: the row's expiry is the server's now()
 * of the renew + ttl, and that now() is after the send.
 */
TEST(kill_before_expiry)
{
	uint64_t sent, server_now, rtt;

	for (rtt = 0; rtt <= 2 * S; rtt += 250 * MS)
		for (sent = 0; sent <= 3 * S; sent += 700 * MS) {
			server_now = sent + rtt / 2;
			ASSERT_OK(lease_trust(&fast, sent) + fast.margin <=
			    server_now + fast.ttl);
		}
	return (0);
}

TEST(standby_sleep)
{
	ASSERT_EQ(lease_retry_in(3200, 0, S), 3200 * MS + 20 * MS);
	ASSERT_EQ(lease_retry_in(100, 5000, S), 5000 * MS + 20 * MS);
	ASSERT_EQ(lease_retry_in(0, 0, S), 20 * MS);
	ASSERT_EQ(lease_retry_in(-1, -1, S), S);
	return (0);
}

TEST(rule)
{
	struct lease_timing t = { 30 * S, 5 * S, 5 * S, 2 * S };
	char *cause = NULL;

	/* 5 + 10 + 10 + 2 = 27 <= 30 */
	ASSERT_EQ(lease_check(&t, 10 * S, "stop_timeout", &cause), 0);
	ASSERT_OK(cause == NULL);
	/* 5 + 10 + 13 + 2 = 30: still fits */
	ASSERT_EQ(lease_check(&t, 13 * S, "stop_timeout", &cause), 0);
	ASSERT_EQ(lease_check(&t, 13 * S + 1, "stop_timeout", &cause), -1);
	ASSERT_OK(cause != NULL);
	ASSERT_OK(strstr(cause, "stop_timeout") != NULL);
	ASSERT_OK(strstr(cause, "lease_ttl 30s") != NULL);
	free(cause);
	/* A queue's stop time is named as such. */
	cause = NULL;
	ASSERT_EQ(
	    lease_check(&t, 14 * S, "drain_timeout + stop_timeout", &cause),
	    -1);
	ASSERT_OK(strstr(cause,
	              "drain_timeout + stop_timeout 14s is too "
	              "long") != NULL);
	free(cause);
	return (0);
}

TEST(epochs_by_timeline)
{
	ASSERT_EQ(lease_epoch_floor(0), 1);
	ASSERT_EQ(lease_epoch_floor(1), 1);
	ASSERT_EQ(lease_epoch_floor(2), (1LL << 40) + 1);
	ASSERT_EQ(lease_epoch_floor(5), 4398046511105LL);
	return (0);
}

int
main(void)
{
	RUN(trust_from_send_time);
	RUN(trust_never_before_send);
	RUN(fence_order);
	RUN(kill_before_expiry);
	RUN(standby_sleep);
	RUN(rule);
	RUN(epochs_by_timeline);
	TEST_MAIN_END();
}
