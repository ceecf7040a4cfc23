/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Tests of the enqueue request checks: defaults, each option's good and
 * bad values with their messages and errno, the delay's bound against
 * now, and the payload limit.
 */

#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "enqueue.h"
#include "queue.h"
#include "test.h"

#define NOW 1700000000000000LL

/*
 * Check req at now; it must fail with errno e and the message want.
 * Return 0 if it does, 1 (after printing why) if not.
 */
static int
check_refused(
    const struct enqueue_req *req, int64_t now, int e, const char *want)
{
	struct enqueue_opts o;
	char *cause = NULL;
	int rc, got;

	errno = 0;
	rc = enqueue_check(req, now, &o, &cause);
	got = errno;
	if (rc != -1 || got != e || cause == NULL || strcmp(cause, want) != 0) {
		fprintf(stderr, "  want -1, %d, \"%s\"; got %d, %d, \"%s\"\n",
		    e, want, rc, got, cause ? cause : "(null)");
		free(cause);
		return (1);
	}
	free(cause);
	return (0);
}

TEST(defaults)
{
	struct enqueue_req req = { NULL, NULL, NULL, 0 };
	struct enqueue_opts o = { 99, 99 };
	char *cause = NULL;

	ASSERT_EQ(enqueue_check(&req, NOW, &o, &cause), 0);
	ASSERT_EQ(o.delay, 0);
	ASSERT_EQ(o.priority, 0);
	ASSERT_OK(cause == NULL);
	return (0);
}

TEST(good_values)
{
	struct enqueue_req req = { "1m30s", "-3", "k1", QUEUE_PAYLOAD_MAX };
	struct enqueue_opts o;
	char *cause = NULL;

	ASSERT_EQ(enqueue_check(&req, NOW, &o, &cause), 0);
	ASSERT_EQ(o.delay, 90000000LL);
	ASSERT_EQ(o.priority, -3);
	req.priority = "2147483647";
	ASSERT_EQ(enqueue_check(&req, NOW, &o, &cause), 0);
	ASSERT_EQ(o.priority, 2147483647LL);
	req.priority = "-2147483648";
	ASSERT_EQ(enqueue_check(&req, NOW, &o, &cause), 0);
	ASSERT_EQ(o.priority, -2147483648LL);
	ASSERT_OK(cause == NULL);
	return (0);
}

TEST(bad_delay)
{
	struct enqueue_req req = { "soon", NULL, NULL, 0 };

	ASSERT_EQ(check_refused(
	              &req, NOW, EINVAL, "--delay: invalid duration \"soon\""),
	    0);
	req.delay = "";
	ASSERT_EQ(
	    check_refused(&req, NOW, EINVAL, "--delay: invalid duration \"\""),
	    0);
	return (0);
}

TEST(delay_bound)
{
	struct enqueue_req req = { NULL, NULL, NULL, 0 };
	struct enqueue_opts o;
	char *cause = NULL;

	/* 106751991 days is about INT64_MAX usec: over it once now > 0. */
	req.delay = "106751991d";
	ASSERT_EQ(enqueue_check(&req, 0, &o, &cause), 0);
	ASSERT_EQ(check_refused(&req, NOW, EINVAL, "--delay: too large"), 0);
	return (0);
}

TEST(bad_priority)
{
	static const char *const bad[] = { "high", "", "1x", "2147483648",
		"-2147483649", "99999999999999999999" };
	struct enqueue_req req = { NULL, NULL, NULL, 0 };
	char want[64];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		req.priority = bad[i];
		snprintf(want, sizeof(want), "--priority: not an integer: %s",
		    bad[i]);
		ASSERT_EQ(check_refused(&req, NOW, EINVAL, want), 0);
	}
	return (0);
}

TEST(empty_unique)
{
	struct enqueue_req req = { NULL, NULL, "", 0 };

	ASSERT_EQ(check_refused(&req, NOW, EINVAL, "--unique: empty"), 0);
	return (0);
}

TEST(payload_limit)
{
	struct enqueue_req req = { NULL, NULL, NULL, QUEUE_PAYLOAD_MAX + 1 };
	char *cause = NULL;

	ASSERT_EQ(check_refused(&req, NOW, EMSGSIZE,
	              "payload larger than 1 MiB (1048576 bytes)"),
	    0);
	/* A bad option is reported before the size. */
	req.unique = "";
	ASSERT_EQ(check_refused(&req, NOW, EINVAL, "--unique: empty"), 0);
	ASSERT_EQ(enqueue_payload_check(QUEUE_PAYLOAD_MAX, &cause), 0);
	ASSERT_OK(cause == NULL);
	ASSERT_EQ(enqueue_payload_check(0, &cause), 0);
	ASSERT_EQ(enqueue_payload_check(QUEUE_PAYLOAD_MAX + 1, &cause), -1);
	ASSERT_EQ(errno, EMSGSIZE);
	ASSERT_STREQ(cause, "payload larger than 1 MiB (1048576 bytes)");
	free(cause);
	return (0);
}

int
main(void)
{
	RUN(defaults);
	RUN(good_values);
	RUN(bad_delay);
	RUN(delay_bound);
	RUN(bad_priority);
	RUN(empty_unique);
	RUN(payload_limit);
	TEST_MAIN_END();
}
