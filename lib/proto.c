/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Framing and the command payload.  proto_next() is the one place input
 * from a client is decoded: it refuses a wrong version, an unknown type or
 * an oversized length from the header alone, before buffering the payload.
 */

#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "xmalloc.h"

/* Make an empty buffer. */
void
proto_buf_init(struct proto_buf *b)
{
	memset(b, 0, sizeof(*b));
}

/* Free a buffer's memory and make it empty. */
void
proto_buf_clear(struct proto_buf *b)
{
	free(b->data);
	proto_buf_init(b);
}

/* Return how many unread bytes the buffer holds. */
size_t
proto_buf_pending(const struct proto_buf *b)
{
	return (b->len - b->off);
}

/* Mark n unread bytes as read; compact when everything has been read. */
void
proto_buf_consume(struct proto_buf *b, size_t n)
{
	if (n > b->len - b->off)
		n = b->len - b->off;
	b->off += n;
	if (b->off == b->len)
		b->off = b->len = 0;
}

/*
 * Return a pointer to room for at least n more bytes at the end of the
 * buffer; proto_buf_commit() then says how many were written.
 */
uint8_t *
proto_buf_reserve(struct proto_buf *b, size_t n)
{
	size_t want;

	if (b->off > 0 && b->cap - b->len < n) {
		memmove(b->data, b->data + b->off, b->len - b->off);
		b->len -= b->off;
		b->off = 0;
	}
	if (b->cap - b->len < n) {
		want = b->cap > 0 ? b->cap : 256;
		while (want - b->len < n)
			want *= 2;
		b->data = xreallocarray(b->data, want, 1);
		b->cap = want;
	}
	return (b->data + b->len);
}

/* Account for n bytes written after proto_buf_reserve(). */
void
proto_buf_commit(struct proto_buf *b, size_t n)
{
	b->len += n;
}

/* Append n bytes. */
void
proto_buf_add(struct proto_buf *b, const void *p, size_t n)
{
	if (n == 0)
		return;
	memcpy(proto_buf_reserve(b, n), p, n);
	proto_buf_commit(b, n);
}

/* Append one message with a header. */
void
proto_append(struct proto_buf *b, enum proto_type type, const void *p, size_t n)
{
	struct proto_header h;

	h.version = PROTO_VERSION;
	h.type = (uint16_t)type;
	h.len = (uint32_t)n;
	proto_buf_add(b, &h, sizeof(h));
	proto_buf_add(b, p, n);
}

/*
 * Take the next complete message from b.  Return 1 and fill *h and
 * *payload (borrowed from b, valid until b changes; the caller then calls
 * proto_buf_consume(b, PROTO_HEADER_SIZE + h->len)), 0 when more bytes are
 * needed, or -1 with errno EPROTO (bad version or type) or EMSGSIZE (length
 * over PROTO_MAX_PAYLOAD).
 */
int
proto_next(struct proto_buf *b, struct proto_header *h, const uint8_t **payload)
{
	if (proto_buf_pending(b) < PROTO_HEADER_SIZE)
		return (0);
	memcpy(h, b->data + b->off, sizeof(*h));
	if (h->version != PROTO_VERSION || h->type == 0 ||
	    h->type >= PROTO_TYPE_MAX) {
		errno = EPROTO;
		return (-1);
	}
	if (h->len > PROTO_MAX_PAYLOAD) {
		errno = EMSGSIZE;
		return (-1);
	}
	if (proto_buf_pending(b) < PROTO_HEADER_SIZE + (size_t)h->len)
		return (0);
	*payload = b->data + b->off + PROTO_HEADER_SIZE;
	return (1);
}

/*
 * Copy the header of the next message into *h, complete or not, without
 * checking it: return 1, or 0 while fewer than PROTO_HEADER_SIZE bytes are
 * buffered.  Lets a reader refuse a length below PROTO_MAX_PAYLOAD before
 * it buffers the payload.
 */
int
proto_peek(const struct proto_buf *b, struct proto_header *h)
{
	if (proto_buf_pending(b) < PROTO_HEADER_SIZE)
		return (0);
	memcpy(h, b->data + b->off, sizeof(*h));
	return (1);
}

/* Append a PROTO_COMMAND message carrying flags and argv. */
void
proto_command_pack(
    struct proto_buf *b, uint32_t flags, int argc, char *const *argv)
{
	struct proto_buf p;
	int i;

	proto_buf_init(&p);
	proto_buf_add(&p, &flags, sizeof(flags));
	for (i = 0; i < argc; i++)
		proto_buf_add(&p, argv[i], strlen(argv[i]) + 1);
	proto_append(b, PROTO_COMMAND, p.data, p.len);
	proto_buf_clear(&p);
}

/*
 * Decode a PROTO_COMMAND payload.  On success return 0 with *flags, *argc
 * and *argv set (argv is NULL-terminated; free each word and the array).
 * Return -1 with errno EPROTO when the payload is malformed: too short,
 * not NUL-terminated, no words, or more than PROTO_MAX_ARGS words.
 */
int
proto_command_unpack(
    const uint8_t *p, size_t len, uint32_t *flags, int *argc, char ***argv)
{
	const char *s, *end;
	char **v;
	size_t i, n;

	if (len < sizeof(*flags) + 1 || p[len - 1] != '\0') {
		errno = EPROTO;
		return (-1);
	}
	memcpy(flags, p, sizeof(*flags));
	s = (const char *)p + sizeof(*flags);
	end = (const char *)p + len;
	for (n = 0, i = 0; s + i < end; i++) {
		if (s[i] == '\0')
			n++;
	}
	if (n > PROTO_MAX_ARGS) {
		errno = EPROTO;
		return (-1);
	}
	v = xcalloc(n + 1, sizeof(*v));
	for (i = 0; i < n; i++) {
		v[i] = xstrdup(s);
		s += strlen(s) + 1;
	}
	*argc = (int)n;
	*argv = v;
	return (0);
}
