/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Control characters made visible for a terminal.  A job's output, or a
 * STATUS= text it sent, may hold escape sequences that set the window
 * title, rewrite the screen, or on some terminals answer back as typed
 * input; vigilctl prints such text to a terminal through this filter.
 * Escaped: C0 controls but newline and tab (carriage return included: it
 * would let a line overwrite itself), DEL, and the C1 controls as UTF-8
 * encodes them (0xc2 0x80 to 0xc2 0x9f; CSI is 0xc2 0x9b).  Everything
 * else, other UTF-8 included, passes unchanged; so does a backslash, so
 * the result is for eyes, not for parsing.  Stateful: a 0xc2 at the end
 * of one chunk waits for the next.
 */

#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ttyesc.h"
#include "xmalloc.h"

/* One escape: "\x1b" (6 bytes for JSON: "\u001b"), NUL included. */
#define TTYESC_MAX 8

/*
 * Start escaping a stream: as text ("\x1b"), or with json as JSON string
 * text ("\u001b"), which keeps a JSON document valid (its controls are
 * all inside strings).
 */
void
ttyesc_init(struct ttyesc *e, int json)
{
	e->json = json;
	e->held = 0;
}

/* Write the escape of byte c (or, with c2, of 0xc2 then c) at out. */
static size_t
ttyesc_one(const struct ttyesc *e, int c2, uint8_t c, char *out)
{
	if (e->json)
		return ((size_t)snprintf(out, TTYESC_MAX + 4, "\\u%04x", c));
	if (c2)
		return (
		    (size_t)snprintf(out, TTYESC_MAX + 4, "\\xc2\\x%02x", c));
	return ((size_t)snprintf(out, TTYESC_MAX + 4, "\\x%02x", c));
}

/*
 * Escape len bytes of p.  Return the text (owned by the caller; not
 * NUL-terminated for the caller's use) with its length in *outlen.
 */
char *
ttyesc_chunk(struct ttyesc *e, const void *p, size_t len, size_t *outlen)
{
	const uint8_t *in = p;
	char *out;
	size_t i, n = 0;
	uint8_t c;

	out = xreallocarray(NULL, len + 1, 2 * TTYESC_MAX);
	for (i = 0; i < len; i++) {
		c = in[i];
		if (e->held) {
			e->held = 0;
			if (c >= 0x80 && c <= 0x9f) {
				n += ttyesc_one(e, 1, c, out + n);
				continue;
			}
			out[n++] = (char)0xc2;
		}
		if (c == 0xc2)
			e->held = 1;
		else if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
			n += ttyesc_one(e, 0, c, out + n);
		else
			out[n++] = (char)c;
	}
	*outlen = n;
	return (out);
}

/* The end of the stream: a held 0xc2, if any (owned; length in *outlen). */
char *
ttyesc_flush(struct ttyesc *e, size_t *outlen)
{
	char *out = xmalloc(1);

	*outlen = 0;
	if (e->held)
		out[(*outlen)++] = (char)0xc2;
	e->held = 0;
	return (out);
}
