/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/* Unit tests for lib/duration.c: parsing, formatting and sizes. */

#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "test.h"

#define SEC DURATION_USEC_PER_SEC
#define MSEC DURATION_USEC_PER_MSEC

/* Parse s, which must be valid, and return its value. */
static uint64_t
parse_ok(const char *s)
{
	uint64_t v = 12345;

	if (duration_parse(s, &v, NULL) != 0)
		return (UINT64_MAX - 1);
	return (v);
}

/* Parse s, which must be invalid; 1 if the cause matches want. */
static int
parse_fails(const char *s, const char *want)
{
	uint64_t v = 7;
	char *cause = NULL;
	int ok;

	if (duration_parse(s, &v, &cause) != -1 || v != 7 || cause == NULL) {
		free(cause);
		return (0);
	}
	ok = strcmp(cause, want) == 0;
	if (!ok)
		fprintf(stderr, "  cause \"%s\", want \"%s\"\n", cause, want);
	free(cause);
	return (ok);
}

TEST(units)
{
	ASSERT_EQ(parse_ok("0"), 0);
	ASSERT_EQ(parse_ok("0s"), 0);
	ASSERT_EQ(parse_ok("7us"), 7);
	ASSERT_EQ(parse_ok("250ms"), 250 * MSEC);
	ASSERT_EQ(parse_ok("10s"), 10 * SEC);
	ASSERT_EQ(parse_ok("5m"), 300 * SEC);
	ASSERT_EQ(parse_ok("2h"), 7200 * SEC);
	ASSERT_EQ(parse_ok("1d"), 86400 * SEC);
	return (0);
}

TEST(sums_and_fractions)
{
	ASSERT_EQ(parse_ok("1m30s"), 90 * SEC);
	ASSERT_EQ(parse_ok("1h1m1s1ms1us"), 3661 * SEC + MSEC + 1);
	ASSERT_EQ(parse_ok("1.5s"), 1500 * MSEC);
	ASSERT_EQ(parse_ok("0.25h"), 900 * SEC);
	ASSERT_EQ(parse_ok("1.0000001s"), SEC);
	ASSERT_EQ(parse_ok("2s500ms"), 2500 * MSEC);
	return (0);
}

TEST(errors)
{
	uint64_t v;

	ASSERT_OK(parse_fails("abc", "invalid duration \"abc\""));
	ASSERT_OK(parse_fails("10x", "invalid duration \"10x\""));
	ASSERT_OK(parse_fails("10", "invalid duration \"10\": missing unit"));
	ASSERT_OK(
	    parse_fails("1m30", "invalid duration \"1m30\": missing unit"));
	ASSERT_OK(parse_fails("", "invalid duration \"\""));
	ASSERT_OK(parse_fails("1 s",
	    "invalid duration \"1 s\": no space allowed before the unit"));
	ASSERT_OK(parse_fails(" 1s", "invalid duration \" 1s\""));
	ASSERT_OK(parse_fails("-1s", "invalid duration \"-1s\""));
	ASSERT_OK(parse_fails("1.s", "invalid duration \"1.s\""));
	ASSERT_OK(parse_fails("s", "invalid duration \"s\""));
	ASSERT_OK(parse_fails("1S", "invalid duration \"1S\""));
	ASSERT_OK(parse_fails("00", "invalid duration \"00\": missing unit"));
	ASSERT_EQ(duration_parse("bad", &v, NULL), -1);
	ASSERT_EQ(duration_parse(NULL, &v, NULL), -1);
	return (0);
}

TEST(overflow)
{
	ASSERT_EQ(parse_ok("18446744073709551615us"), UINT64_MAX);
	ASSERT_OK(parse_fails("18446744073709551616us",
	    "invalid duration \"18446744073709551616us\": too large"));
	ASSERT_OK(parse_fails(
	    "300000000d", "invalid duration \"300000000d\": too large"));
	ASSERT_OK(parse_fails("18446744073709551615us1us",
	    "invalid duration \"18446744073709551615us1us\": too large"));
	ASSERT_OK(parse_fails("99999999999999999999999s",
	    "invalid duration \"99999999999999999999999s\": too large"));
	return (0);
}

TEST(format)
{
	char buf[64];

	ASSERT_STREQ(duration_format(0, buf, sizeof buf), "0s");
	ASSERT_STREQ(duration_format(500, buf, sizeof buf), "500us");
	ASSERT_STREQ(duration_format(250 * MSEC, buf, sizeof buf), "250ms");
	ASSERT_STREQ(duration_format(1500, buf, sizeof buf), "1.5ms");
	ASSERT_STREQ(duration_format(1500 * MSEC, buf, sizeof buf), "1.5s");
	ASSERT_STREQ(duration_format(10 * SEC, buf, sizeof buf), "10s");
	ASSERT_STREQ(duration_format(120 * SEC, buf, sizeof buf), "2m");
	ASSERT_STREQ(duration_format(90 * SEC, buf, sizeof buf), "1m30s");
	ASSERT_STREQ(duration_format(5400 * SEC, buf, sizeof buf), "1h30m");
	ASSERT_STREQ(duration_format(93600 * SEC, buf, sizeof buf), "1d2h");
	ASSERT_STREQ(duration_format(SEC + 1, buf, sizeof buf), "1.000001s");
	return (0);
}

TEST(format_truncates)
{
	char buf[4];

	ASSERT_STREQ(duration_format(5400 * SEC, buf, sizeof buf), "1h3");
	ASSERT_STREQ(duration_format(250 * MSEC, buf, 1), "");
	ASSERT_OK(duration_format(1, buf, 0) == buf);
	return (0);
}

TEST(round_trip)
{
	static const uint64_t values[] = { 0, 1, 999, 1000, 1001, 999999,
		1000000, 1234567, 59999999, 60000000, 61500000, 3599999999ULL,
		86400000000ULL, 90061000001ULL, UINT64_MAX };
	char buf[64];
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof values / sizeof values[0]; i++) {
		duration_format(values[i], buf, sizeof buf);
		ASSERT_EQ(duration_parse(buf, &v, NULL), 0);
		ASSERT_EQ(v, values[i]);
	}
	return (0);
}

TEST(sizes)
{
	uint64_t v;
	char *cause = NULL;

	ASSERT_EQ(duration_size_parse("4096", &v, NULL), 0);
	ASSERT_EQ(v, 4096);
	ASSERT_EQ(duration_size_parse("512K", &v, NULL), 0);
	ASSERT_EQ(v, 512 * 1024);
	ASSERT_EQ(duration_size_parse("10M", &v, NULL), 0);
	ASSERT_EQ(v, 10 * 1024 * 1024);
	ASSERT_EQ(duration_size_parse("1G", &v, NULL), 0);
	ASSERT_EQ(v, 1024 * 1024 * 1024);
	ASSERT_EQ(duration_size_parse("2t", &v, NULL), 0);
	ASSERT_EQ(v, 2ULL << 40);
	ASSERT_EQ(duration_size_parse("0", &v, NULL), 0);
	ASSERT_EQ(v, 0);
	ASSERT_EQ(duration_size_parse("10MB", &v, &cause), -1);
	ASSERT_STREQ(cause, "invalid size \"10MB\"");
	free(cause);
	ASSERT_EQ(duration_size_parse("", &v, NULL), -1);
	ASSERT_EQ(duration_size_parse("K", &v, NULL), -1);
	ASSERT_EQ(duration_size_parse("-1", &v, NULL), -1);
	ASSERT_EQ(duration_size_parse("1.5M", &v, NULL), -1);
	ASSERT_EQ(duration_size_parse("16777216T", &v, NULL), -1);
	ASSERT_EQ(duration_size_parse("99999999999999999999", &v, NULL), -1);
	ASSERT_EQ(duration_size_parse(NULL, &v, NULL), -1);
	return (0);
}

int
main(void)
{
	RUN(units);
	RUN(sums_and_fractions);
	RUN(errors);
	RUN(overflow);
	RUN(format);
	RUN(format_truncates);
	RUN(round_trip);
	RUN(sizes);
	TEST_MAIN_END();
}
