/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * A small streaming JSON writer: values go straight to a callback as they
 * are written, with no tree in between.  The writer keeps the nesting and
 * the commas; strings are escaped (control characters, quotes, invalid
 * UTF-8 as U+FFFD) and valid UTF-8 passes through.
 */

#ifndef VIGIL_JSON_H
#define VIGIL_JSON_H

#include <stddef.h>
#include <stdint.h>

/* Containers nest at most this deep; deeper ones are a caller's bug. */
#define JSON_DEPTH_MAX 32

/* Where the text goes: n bytes at p, in order. */
typedef void (*json_write_fn)(void *, const void *, size_t);

struct json {
	json_write_fn write;
	void *arg;
	int depth;
	int after_key; /* a key was written: its value next */
	unsigned char more[JSON_DEPTH_MAX + 1]; /* a value came at that depth */
};

void json_init(struct json *, json_write_fn, void *);
void json_object_begin(struct json *);
void json_object_end(struct json *);
void json_array_begin(struct json *);
void json_array_end(struct json *);
void json_key(struct json *, const char *);
void json_string(struct json *, const char *);
void json_string_len(struct json *, const char *, size_t);
void json_int(struct json *, long long);
void json_uint(struct json *, unsigned long long);
void json_fixed(struct json *, double, int);
void json_bool(struct json *, int);
void json_null(struct json *);
void json_raw(struct json *, const char *, size_t);

#endif
