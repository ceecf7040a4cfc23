/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * What the parts of the supervisord file reader share (ini.c reads,
 * ini-expand.c is Python's "%" operator, ini-text.c the text helpers of
 * both); nothing else includes it.
 */

#ifndef VIGIL_INI_INT_H
#define VIGIL_INI_INT_H

#include <stddef.h>

/* A growing string, always NUL-terminated once anything was added. */
struct ini_buf {
	char *p;
	size_t len;
	size_t cap;
};

int ini_fail(char **, const char *, ...) __attribute__((format(printf, 2, 3)));
void ini_buf_add(struct ini_buf *, const char *, size_t);
void ini_buf_fill(struct ini_buf *, char, size_t);
const char *ini_check_line(const char *, size_t);
char *ini_normpath(const char *);

#endif
