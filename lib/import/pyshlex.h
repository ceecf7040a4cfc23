/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The two ways supervisord splits strings with Python's shlex module:
 * shlex.split() (POSIX mode) for a program's command, and the non-POSIX
 * lexer of supervisor.datatypes.dict_of_key_value_pairs() for its
 * environment option.  Both give what Python gives, byte for byte.
 */

#ifndef VIGIL_PYSHLEX_H
#define VIGIL_PYSHLEX_H

#include <stddef.h>

/*
 * shlex.split(S) (comments=False, posix=True): a NULL-terminated array
 * of N words (free with words_free), or NULL with *CAUSE set to Python's
 * complaint ("No closing quotation", "No escaped character").
 */
char **pyshlex_split(const char *, size_t *, char **);

/*
 * dict_of_key_value_pairs(S): "KEY=value" strings in order (a later KEY
 * replaces an earlier one in place, as a dict does), NULL-terminated, N
 * of them (free with words_free); or NULL with *CAUSE set to
 * supervisord's complaint ("Unexpected end of key/value pairs in value
 * ...", "No closing quotation").
 */
char **pyshlex_pairs(const char *, size_t *, char **);

#endif
