/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * A tiny unit-test harness.  TEST(name) defines a test; ASSERT_* print file,
 * line and both values, then fail the current test.  RUN(name) in main runs
 * one test; TEST_MAIN_END prints "N passed, N failed" and sets the exit code.
 */

#ifndef VIGIL_TEST_H
#define VIGIL_TEST_H

#include <sys/stat.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_passed, test_failed;

#define TEST(name) static int test_##name(void)

#define TEST_FAIL_(fmt, ...)                                                   \
	do {                                                                   \
		fprintf(stderr, "  %s:%d: " fmt "\n", __FILE__, __LINE__,      \
		    __VA_ARGS__);                                              \
		return (1);                                                    \
	} while (0)

#define ASSERT_OK(e)                                                           \
	do {                                                                   \
		if (!(e))                                                      \
			TEST_FAIL_("assertion failed: %s", #e);                \
	} while (0)

#define ASSERT_EQ(a, b)                                                        \
	do {                                                                   \
		long long a_ = (long long)(a), b_ = (long long)(b);            \
		if (a_ != b_)                                                  \
			TEST_FAIL_("%s == %s: %lld != %lld", #a, #b, a_, b_);  \
	} while (0)

#define ASSERT_NE(a, b)                                                        \
	do {                                                                   \
		long long a_ = (long long)(a), b_ = (long long)(b);            \
		if (a_ == b_)                                                  \
			TEST_FAIL_("%s != %s: both %lld", #a, #b, a_);         \
	} while (0)

#define ASSERT_STREQ(a, b)                                                     \
	do {                                                                   \
		const char *a_ = (a), *b_ = (b);                               \
		if (a_ == NULL || b_ == NULL || strcmp(a_, b_) != 0)           \
			TEST_FAIL_("%s == %s: \"%s\" != \"%s\"", #a, #b,       \
			    a_ ? a_ : "(null)", b_ ? b_ : "(null)");           \
	} while (0)

#define RUN(name)                                                              \
	do {                                                                   \
		if (test_##name() == 0) {                                      \
			test_passed++;                                         \
			printf("ok - %s\n", #name);                            \
		} else {                                                       \
			test_failed++;                                         \
			printf("FAIL - %s\n", #name);                          \
		}                                                              \
	} while (0)

/* Remove one entry of a tree (for test_rmtree). */
static inline int
test_rm_entry(
    const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return (remove(path));
}

/* Remove the directory tree at dir, as rm -rf: a test's temp dir. */
static inline int
test_rmtree(const char *dir)
{
	return (nftw(dir, test_rm_entry, 16, FTW_DEPTH | FTW_PHYS));
}

/*
 * Does the test run under valgrind (make check-valgrind: its preload)?  A
 * test that loops many thousands of times for a measure or a complexity
 * check loops fewer times there: valgrind is many times slower, and the
 * loop's logic is the same (CI is CPU-bound, issue 43).
 */
static inline int
test_under_valgrind(void)
{
	const char *p = getenv("LD_PRELOAD");

	return (p != NULL && strstr(p, "vgpreload") != NULL);
}

#define TEST_MAIN_END()                                                        \
	do {                                                                   \
		printf("%d passed, %d failed\n", test_passed, test_failed);    \
		return (test_failed == 0 ? 0 : 1);                             \
	} while (0)

#endif
