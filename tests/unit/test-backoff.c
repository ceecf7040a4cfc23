/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/* Tests of backoff_next(): growth, cap, jitter bounds. */

#include "config.h"

#include <stdint.h>

#include "backoff.h"
#include "test.h"

static const struct backoff b = { 100000, 30000000 };

TEST(zero_failures)
{
	ASSERT_EQ(backoff_next(&b, 0, 12345), 0);
	return (0);
}

TEST(first_is_base_without_jitter)
{
	/* rnd = 2^31 is the middle of the jitter range: no offset. */
	ASSERT_EQ(backoff_next(&b, 1, 0x80000000U), 100000);
	return (0);
}

TEST(doubles)
{
	ASSERT_EQ(backoff_next(&b, 2, 0x80000000U), 200000);
	ASSERT_EQ(backoff_next(&b, 3, 0x80000000U), 400000);
	ASSERT_EQ(backoff_next(&b, 4, 0x80000000U), 800000);
	return (0);
}

TEST(capped)
{
	ASSERT_EQ(backoff_next(&b, 20, 0x80000000U), 27000000 + 3000000);
	ASSERT_EQ(backoff_next(&b, 1000000, 0xffffffffU), 30000000);
	ASSERT_EQ(backoff_next(&b, 1000000, 0), 27000000);
	return (0);
}

TEST(jitter_bounds)
{
	uint32_t r;
	uint64_t d;

	for (r = 0; r < 0xffff0000U; r += 0x01000193U) {
		d = backoff_next(&b, 1, r);
		ASSERT_OK(d >= 90000 && d <= 110000);
	}
	ASSERT_EQ(backoff_next(&b, 1, 0), 90000);
	ASSERT_OK(backoff_next(&b, 1, 0xffffffffU) >= 109999);
	return (0);
}

TEST(no_overflow)
{
	struct backoff big = { UINT64_MAX / 3, UINT64_MAX };

	ASSERT_OK(backoff_next(&big, 100, 0) >= UINT64_MAX / 3);
	return (0);
}

int
main(void)
{
	RUN(zero_failures);
	RUN(first_is_base_without_jitter);
	RUN(doubles);
	RUN(capped);
	RUN(jitter_bounds);
	RUN(no_overflow);
	TEST_MAIN_END();
}
