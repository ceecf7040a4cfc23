/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * A streaming JSON writer (see json.h).  json-c and jansson build a tree
 * of allocated values before printing, one allocation per value on the
 * path of a status of thousands of jobs; yajl's generator streams but is
 * no longer maintained.  This one writes each token to a callback at once
 * and keeps only a comma flag per nesting level.
 */

#include "config.h"

#include <stdio.h>
#include <string.h>

#include "json.h"
#include "log.h"

/*
 * Start a writer that sends its text to write(arg, p, n).  Nothing is
 * allocated: a writer needs no clearing.
 */
void
json_init(struct json *j, json_write_fn write, void *arg)
{
	memset(j, 0, sizeof(*j));
	j->write = write;
	j->arg = arg;
}

static void
json_put(struct json *j, const char *s)
{
	j->write(j->arg, s, strlen(s));
}

/* Before a value or a key: the comma its place needs, if any. */
static void
json_sep(struct json *j)
{
	if (j->after_key) {
		j->after_key = 0;
		return;
	}
	if (j->more[j->depth])
		j->write(j->arg, ",", 1);
	j->more[j->depth] = 1;
}

static void
json_open(struct json *j, const char *c)
{
	json_sep(j);
	if (j->depth == JSON_DEPTH_MAX)
		fatalx("%s: nested too deep", __func__);
	j->more[++j->depth] = 0;
	json_put(j, c);
}

static void
json_close(struct json *j, const char *c)
{
	if (j->depth == 0)
		fatalx("%s: nothing open", __func__);
	j->depth--;
	json_put(j, c);
}

/* Open an object; its members are json_key() then a value, in turn. */
void
json_object_begin(struct json *j)
{
	json_open(j, "{");
}

/* Close the innermost object. */
void
json_object_end(struct json *j)
{
	json_close(j, "}");
}

/* Open an array. */
void
json_array_begin(struct json *j)
{
	json_open(j, "[");
}

/* Close the innermost array. */
void
json_array_end(struct json *j)
{
	json_close(j, "]");
}

/*
 * The length of the valid UTF-8 sequence at p (n bytes left), or 0 if
 * p does not start one (RFC 3629: no overlong forms, no surrogates).
 */
static size_t
json_utf8_len(const unsigned char *p, size_t n)
{
	size_t len, i;
	unsigned char lo = 0x80, hi = 0xbf;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4;
	else
		return (0);
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (n < len || p[1] < lo || p[1] > hi)
		return (0);
	for (i = 2; i < len; i++) {
		if (p[i] < 0x80 || p[i] > 0xbf)
			return (0);
	}
	return (len);
}

/* The escape for byte c, or NULL if it goes out as it is. */
static const char *
json_escape(unsigned char c, char *buf, size_t len)
{
	switch (c) {
	case '"':
		return ("\\\"");
	case '\\':
		return ("\\\\");
	case '\n':
		return ("\\n");
	case '\t':
		return ("\\t");
	case '\r':
		return ("\\r");
	}
	if (c >= 0x20)
		return (NULL);
	snprintf(buf, len, "\\u%04x", c);
	return (buf);
}

/* Write n bytes of s as a string's content: runs of plain bytes at once. */
static void
json_chars(struct json *j, const unsigned char *s, size_t n)
{
	const char *esc;
	char buf[8];
	size_t i = 0, run = 0, u;

	while (i < n) {
		esc = NULL;
		u = 1;
		if (s[i] >= 0x80 && (u = json_utf8_len(s + i, n - i)) == 0) {
			esc = "\\ufffd";
			u = 1;
		} else if (s[i] < 0x80)
			esc = json_escape(s[i], buf, sizeof(buf));
		if (esc == NULL) {
			i += u;
			continue;
		}
		if (i > run)
			j->write(j->arg, s + run, i - run);
		json_put(j, esc);
		i += u;
		run = i;
	}
	if (n > run)
		j->write(j->arg, s + run, n - run);
}

/* Write an object's member name; its value must follow. */
void
json_key(struct json *j, const char *key)
{
	json_sep(j);
	j->write(j->arg, "\"", 1);
	json_chars(j, (const unsigned char *)key, strlen(key));
	j->write(j->arg, "\":", 2);
	j->after_key = 1;
}

/* Write n bytes at s as a string (s may hold NUL bytes: \u0000). */
void
json_string_len(struct json *j, const char *s, size_t n)
{
	json_sep(j);
	j->write(j->arg, "\"", 1);
	json_chars(j, (const unsigned char *)s, n);
	j->write(j->arg, "\"", 1);
}

/* Write s as a string, or null when s is NULL. */
void
json_string(struct json *j, const char *s)
{
	if (s == NULL)
		json_null(j);
	else
		json_string_len(j, s, strlen(s));
}

/* Write a signed integer. */
void
json_int(struct json *j, long long v)
{
	char buf[32];

	json_sep(j);
	snprintf(buf, sizeof(buf), "%lld", v);
	json_put(j, buf);
}

/* Write an unsigned integer. */
void
json_uint(struct json *j, unsigned long long v)
{
	char buf[32];

	json_sep(j);
	snprintf(buf, sizeof(buf), "%llu", v);
	json_put(j, buf);
}

/* Write v with decimals digits after the point ("%.3f" for 3). */
void
json_fixed(struct json *j, double v, int decimals)
{
	char buf[64];

	json_sep(j);
	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	json_put(j, buf);
}

/* Write true (v != 0) or false. */
void
json_bool(struct json *j, int v)
{
	json_sep(j);
	json_put(j, v ? "true" : "false");
}

/* Write null. */
void
json_null(struct json *j)
{
	json_sep(j);
	json_put(j, "null");
}

/*
 * A value that is JSON text already (n bytes at s, a complete value such
 * as another writer's output): written as it is, not checked.
 */
void
json_raw(struct json *j, const char *s, size_t n)
{
	json_sep(j);
	j->write(j->arg, s, n);
}
