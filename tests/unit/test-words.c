/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/* Unit tests for lib/words.c: splitting with quotes, and joining. */

#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "words.h"

/*
 * Split s and compare with the expected words (a NULL-terminated list);
 * returns 1 if they match.
 */
static int
split_is(const char *s, ...)
{
	va_list ap;
	char **argv, *cause = NULL;
	const char *want;
	size_t n, i = 0;
	int ok = 1;

	if ((argv = words_split(s, &n, &cause)) == NULL) {
		fprintf(stderr, "  split \"%s\": %s\n", s, cause);
		free(cause);
		return (0);
	}
	va_start(ap, s);
	while ((want = va_arg(ap, const char *)) != NULL) {
		if (i >= n || strcmp(argv[i], want) != 0) {
			fprintf(stderr,
			    "  split \"%s\": word %zu \"%s\" != "
			    "\"%s\"\n",
			    s, i, i < n ? argv[i] : "(none)", want);
			ok = 0;
			break;
		}
		i++;
	}
	va_end(ap);
	if (ok && (i != n || argv[n] != NULL)) {
		fprintf(
		    stderr, "  split \"%s\": %zu words, want %zu\n", s, n, i);
		ok = 0;
	}
	words_free(argv);
	return (ok);
}

/* Split s, which must fail with cause want. */
static int
split_fails(const char *s, const char *want)
{
	char **argv, *cause = NULL;
	size_t n = 99;
	int ok;

	if ((argv = words_split(s, &n, &cause)) != NULL) {
		words_free(argv);
		return (0);
	}
	ok = cause != NULL && strcmp(cause, want) == 0;
	free(cause);
	return (ok);
}

TEST(plain)
{
	ASSERT_OK(split_is("sleep 10", "sleep", "10", (char *)NULL));
	ASSERT_OK(split_is("  a\t b \n c  ", "a", "b", "c", (char *)NULL));
	ASSERT_OK(split_is("/usr/bin/env", "/usr/bin/env", (char *)NULL));
	return (0);
}

TEST(empty)
{
	char **argv;
	size_t n = 99;

	argv = words_split("", &n, NULL);
	ASSERT_OK(argv != NULL);
	ASSERT_EQ(n, 0);
	ASSERT_OK(argv[0] == NULL);
	words_free(argv);
	argv = words_split(" \t\n", NULL, NULL);
	ASSERT_OK(argv != NULL && argv[0] == NULL);
	words_free(argv);
	words_free(NULL);
	return (0);
}

TEST(single_quotes)
{
	ASSERT_OK(split_is("echo 'a b'", "echo", "a b", (char *)NULL));
	ASSERT_OK(split_is(
	    "'a\\b' '$HOME' '\"'", "a\\b", "$HOME", "\"", (char *)NULL));
	ASSERT_OK(split_is("x'y z'w", "xy zw", (char *)NULL));
	ASSERT_OK(split_is("'' a", "", "a", (char *)NULL));
	return (0);
}

TEST(double_quotes)
{
	ASSERT_OK(split_is("echo \"a b\"", "echo", "a b", (char *)NULL));
	ASSERT_OK(split_is("\"\\\" \\\\ \\$ \\`\"", "\" \\ $ `", (char *)NULL));
	ASSERT_OK(split_is("\"\\n\\a\"", "\\n\\a", (char *)NULL));
	ASSERT_OK(split_is("\"a\\\nb\"", "ab", (char *)NULL));
	ASSERT_OK(split_is("\"it's\"", "it's", (char *)NULL));
	ASSERT_OK(split_is("\"\"", "", (char *)NULL));
	ASSERT_OK(split_is("a\"\"b", "ab", (char *)NULL));
	ASSERT_OK(split_is("\"a\nb\"", "a\nb", (char *)NULL));
	return (0);
}

TEST(backslash)
{
	ASSERT_OK(split_is("a\\ b", "a b", (char *)NULL));
	ASSERT_OK(split_is("\\'x\\\"", "'x\"", (char *)NULL));
	ASSERT_OK(split_is("a\\\nb", "ab", (char *)NULL));
	ASSERT_OK(split_is("\\\\", "\\", (char *)NULL));
	return (0);
}

TEST(no_expansion)
{
	ASSERT_OK(
	    split_is("echo $HOME ~ * ${X} `id` $(id) a;b |", "echo", "$HOME",
	        "~", "*", "${X}", "`id`", "$(id)", "a;b", "|", (char *)NULL));
	ASSERT_OK(split_is("\"$HOME\"", "$HOME", (char *)NULL));
	return (0);
}

TEST(errors)
{
	ASSERT_OK(split_fails("echo 'abc", "unterminated single quote"));
	ASSERT_OK(split_fails("echo \"abc", "unterminated double quote"));
	ASSERT_OK(split_fails("echo \"abc\\\"", "unterminated double quote"));
	ASSERT_OK(split_fails("echo abc\\", "trailing backslash"));
	ASSERT_OK(words_split("'", NULL, NULL) == NULL);
	return (0);
}

TEST(join)
{
	char *argv[] = { "sh", "-c", "echo 'hi' $X", "", "a b", "plain/x.y",
		NULL };
	char *none[] = { NULL };
	char *s, **back;
	size_t n, i;

	s = words_join(argv);
	ASSERT_STREQ(s, "sh -c 'echo '\\''hi'\\'' $X' '' 'a b' plain/x.y");
	back = words_split(s, &n, NULL);
	free(s);
	ASSERT_OK(back != NULL);
	ASSERT_EQ(n, 6);
	for (i = 0; i < n; i++)
		ASSERT_STREQ(back[i], argv[i]);
	words_free(back);
	s = words_join(none);
	ASSERT_STREQ(s, "");
	free(s);
	s = words_join(NULL);
	ASSERT_STREQ(s, "");
	free(s);
	return (0);
}

TEST(join_round_trip)
{
	char *argv[] = { "\\", "\"", "'", "''", "$", "\t\n", "~", "#", "*",
		"a'b\"c\\d", NULL };
	char *s, **back;
	size_t n, i;

	s = words_join(argv);
	back = words_split(s, &n, NULL);
	free(s);
	ASSERT_OK(back != NULL);
	ASSERT_EQ(n, sizeof argv / sizeof argv[0] - 1);
	for (i = 0; i < n; i++)
		ASSERT_STREQ(back[i], argv[i]);
	words_free(back);
	return (0);
}

int
main(void)
{
	RUN(plain);
	RUN(empty);
	RUN(single_quotes);
	RUN(double_quotes);
	RUN(backslash);
	RUN(no_expansion);
	RUN(errors);
	RUN(join);
	RUN(join_round_trip);
	TEST_MAIN_END();
}
