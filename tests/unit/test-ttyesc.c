/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Tests of control characters made visible for a terminal: C0 but
 * newline and tab, DEL and UTF-8's C1 escaped, as text or as JSON string
 * text; other UTF-8 unchanged; a 0xc2 split between chunks still seen.
 */

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "ttyesc.h"

static char got[1024];

/* Escape the chunks (NULL-terminated) of one stream into got. */
static const char *
esc(int json, const char *const *chunks)
{
	struct ttyesc e;
	size_t n = 0, len;
	char *out;

	ttyesc_init(&e, json);
	for (; *chunks != NULL; chunks++) {
		out = ttyesc_chunk(&e, *chunks, strlen(*chunks), &len);
		memcpy(got + n, out, len);
		n += len;
		free(out);
	}
	out = ttyesc_flush(&e, &len);
	memcpy(got + n, out, len);
	n += len;
	free(out);
	got[n] = '\0';
	return (got);
}

TEST(text)
{
	const char *plain[] = { "a\tb\nc", NULL };
	const char *title[] = { "x\033]0;pwned\007y\r\177\n", NULL };
	const char *utf8[] = { "caf\xc3\xa9 \xc2\xa0 \xe2\x82\xac", NULL };
	const char *csi[] = { "a\xc2\x9b"
		              "31mb",
		NULL };

	ASSERT_STREQ(esc(0, plain), "a\tb\nc");
	ASSERT_STREQ(esc(0, title), "x\\x1b]0;pwned\\x07y\\x0d\\x7f\n");
	ASSERT_STREQ(esc(0, utf8), "caf\xc3\xa9 \xc2\xa0 \xe2\x82\xac");
	ASSERT_STREQ(esc(0, csi), "a\\xc2\\x9b31mb");
	return (0);
}

/* A 0xc2 at the end of a chunk waits for the next, or for the end. */
TEST(split)
{
	const char *csi[] = { "a\xc2",
		"\x9b"
		"b",
		NULL };
	const char *nbsp[] = { "a\xc2", "\xa0", NULL };
	const char *last[] = { "a\xc2", NULL };

	ASSERT_STREQ(esc(0, csi), "a\\xc2\\x9bb");
	ASSERT_STREQ(esc(0, nbsp), "a\xc2\xa0");
	ASSERT_STREQ(esc(0, last), "a\xc2");
	return (0);
}

/* As JSON string text: the document stays valid. */
TEST(json)
{
	const char *doc[] = { "{\"s\":\"\033[2J\xc2\x9b\"}\n", NULL };

	ASSERT_STREQ(esc(1, doc), "{\"s\":\"\\u001b[2J\\u009b\"}\n");
	return (0);
}

int
main(void)
{
	RUN(text);
	RUN(split);
	RUN(json);
	TEST_MAIN_END();
}
