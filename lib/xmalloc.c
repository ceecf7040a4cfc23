/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Allocation wrappers.  Out of memory is the one error vigil does not try to
 * survive: these log and exit instead of returning NULL.
 */

#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xmalloc.h"

/* Allocate size bytes (at least one); the caller frees. */
void *
xmalloc(size_t size)
{
	void *p;

	if ((p = malloc(size == 0 ? 1 : size)) == NULL)
		fatal("xmalloc: %zu bytes", size);
	return (p);
}

/* Allocate a zeroed array; the caller frees. */
void *
xcalloc(size_t n, size_t size)
{
	void *p;

	if (n == 0 || size == 0)
		n = size = 1;
	if ((p = calloc(n, size)) == NULL)
		fatal("xcalloc: %zu * %zu bytes", n, size);
	return (p);
}

/* Resize an array with overflow checking; the caller frees. */
void *
xreallocarray(void *ptr, size_t n, size_t size)
{
	void *p;

	if (size != 0 && n > SIZE_MAX / size)
		fatalx("xreallocarray: %zu * %zu overflows", n, size);
	if (n == 0 || size == 0)
		n = size = 1;
	if ((p = realloc(ptr, n * size)) == NULL)
		fatal("xreallocarray: %zu * %zu bytes", n, size);
	return (p);
}

/* Duplicate a string; the caller frees. */
char *
xstrdup(const char *s)
{
	char *p;

	if ((p = strdup(s)) == NULL)
		fatal("xstrdup");
	return (p);
}

/* Duplicate at most n bytes of a string; the caller frees. */
char *
xstrndup(const char *s, size_t n)
{
	char *p;

	if ((p = strndup(s, n)) == NULL)
		fatal("xstrndup");
	return (p);
}

/* Format into a new string stored in *ret; the caller frees it. */
int
xasprintf(char **ret, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = xvasprintf(ret, fmt, ap);
	va_end(ap);
	return (n);
}

/* xasprintf with the arguments in ap. */
int
xvasprintf(char **ret, const char *fmt, va_list ap)
{
	int n;

	if ((n = vasprintf(ret, fmt, ap)) < 0)
		fatal("xasprintf");
	return (n);
}

/*
 * Replace the string in *slot with one formatted from fmt (fmt NULL:
 * *slot becomes NULL); the old one is freed.
 */
void
xsetf(char **slot, const char *fmt, ...)
{
	va_list ap;

	free(*slot);
	*slot = NULL;
	if (fmt == NULL)
		return;
	va_start(ap, fmt);
	if (vasprintf(slot, fmt, ap) < 0)
		fatal("xsetf");
	va_end(ap);
}
