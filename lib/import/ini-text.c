/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The text helpers of the supervisord file reader (ini.c, ini-expand.c):
 * errors, growing strings, Python's UTF-8 check of a line, and paths as
 * Python's os.path makes them (normpath, abspath of dirname).
 */

#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ini.h"
#include "ini-int.h"
#include "log.h"
#include "xmalloc.h"

/* Set *cause (if cause is not NULL) and return -1. */
int
ini_fail(char **cause, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) == -1)
		fatal("%s: vasprintf", __func__);
	va_end(ap);
	if (cause != NULL)
		*cause = s;
	else
		free(s);
	return (-1);
}

/* Append n bytes of s to b. */
void
ini_buf_add(struct ini_buf *b, const char *s, size_t n)
{
	size_t cap;

	if (b->cap - b->len <= n) {
		cap = b->cap < 64 ? 64 : b->cap;
		while (cap - b->len <= n)
			cap *= 2;
		b->p = xreallocarray(b->p, 1, cap);
		b->cap = cap;
	}
	if (n > 0)
		memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

/* Append n copies of c to b. */
void
ini_buf_fill(struct ini_buf *b, char c, size_t n)
{
	char chunk[64];
	size_t k;

	memset(chunk, c, sizeof chunk);
	ini_buf_add(b, "", 0);
	while (n > 0) {
		k = n < sizeof chunk ? n : sizeof chunk;
		ini_buf_add(b, chunk, k);
		n -= k;
	}
}

/*
 * Check a line as Python's UTF-8 decoder would: no overlong forms, no
 * surrogates, nothing above U+10FFFF; and no NUL.  Returns NULL or what
 * is wrong.
 */
const char *
ini_check_line(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	unsigned char lo, hi;
	size_t k, i;

	while (p < end) {
		if (*p == 0)
			return ("NUL byte");
		if (*p < 0x80) {
			p++;
			continue;
		}
		lo = 0x80;
		hi = 0xbf;
		if (*p >= 0xc2 && *p <= 0xdf)
			k = 1;
		else if (*p >= 0xe0 && *p <= 0xef) {
			k = 2;
			if (*p == 0xe0)
				lo = 0xa0;
			else if (*p == 0xed)
				hi = 0x9f;
		} else if (*p >= 0xf0 && *p <= 0xf4) {
			k = 3;
			if (*p == 0xf0)
				lo = 0x90;
			else if (*p == 0xf4)
				hi = 0x8f;
		} else
			return ("invalid UTF-8");
		if ((size_t)(end - p) <= k || p[1] < lo || p[1] > hi)
			return ("invalid UTF-8");
		for (i = 2; i <= k; i++) {
			if (p[i] < 0x80 || p[i] > 0xbf)
				return ("invalid UTF-8");
		}
		p += k + 1;
	}
	return (NULL);
}

/* Python's posixpath.normpath() of p; the caller frees. */
char *
ini_normpath(const char *p)
{
	struct ini_buf b = { NULL, 0, 0 };
	size_t *starts = NULL, n = 0, len, root;
	const char *c;

	if (*p == '\0')
		return (xstrdup("."));
	root = *p != '/' ? 0 : (p[1] == '/' && p[2] != '/' ? 2 : 1);
	ini_buf_add(&b, "//", root);
	starts = xreallocarray(NULL, strlen(p) / 2 + 2, sizeof *starts);
	while (*p != '\0') {
		for (c = p; *c != '\0' && *c != '/'; c++)
			continue;
		len = (size_t)(c - p);
		if (len == 0 || (len == 1 && *p == '.')) {
			/* Nothing. */
		} else if (len != 2 || p[0] != '.' || p[1] != '.' ||
		    (root == 0 && n == 0) ||
		    (n > 0 && strcmp(b.p + starts[n - 1], "..") == 0)) {
			if (n > 0)
				ini_buf_add(&b, "/", 1);
			starts[n++] = b.len;
			ini_buf_add(&b, p, len);
		} else if (n > 0) {
			n--;
			b.len = starts[n] - (n > 0 ? 1 : 0);
			b.p[b.len] = '\0';
		}
		p = *c == '/' ? c + 1 : c;
	}
	free(starts);
	if (b.len == 0)
		ini_buf_add(&b, ".", 1);
	return (b.p);
}

/*
 * os.path.abspath(os.path.dirname(path)); see ini.h.  The caller frees
 * the result; NULL (errno set) if getcwd(3) fails.
 */
char *
ini_here(const char *path)
{
	const char *slash;
	char *head, *cwd, *joined, *here;
	size_t hl, i;

	slash = strrchr(path, '/');
	hl = slash == NULL ? 0 : (size_t)(slash - path) + 1;
	/* dirname() keeps "/" and "//", and strips the slashes of "a/". */
	for (i = 0; i < hl && path[i] == '/'; i++)
		continue;
	if (i < hl)
		while (hl > 0 && path[hl - 1] == '/')
			hl--;
	head = xstrndup(path, hl);
	if (*head == '/')
		here = ini_normpath(head);
	else {
		if ((cwd = getcwd(NULL, 0)) == NULL) {
			free(head);
			return (NULL);
		}
		xasprintf(&joined, "%s%s%s", cwd,
		    cwd[0] != '\0' && cwd[strlen(cwd) - 1] == '/' ? "" : "/",
		    head);
		here = ini_normpath(joined);
		free(joined);
		free(cwd);
	}
	free(head);
	return (here);
}
