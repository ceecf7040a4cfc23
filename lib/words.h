/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Split a command line into words with shell-like quoting ('single',
 * "double" with \" \\ \$ \` escapes, backslash outside quotes) but no
 * expansion of any kind.
 */

#ifndef VIGIL_WORDS_H
#define VIGIL_WORDS_H

#include <stddef.h>

char **words_split(const char *, size_t *, char **);
void words_free(char **);
char *words_join(char *const *);

#endif
