/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * A libFuzzer target for the decoding of client input, done as
 * supervisord/server.c does it: bytes arrive in reads of random size (at
 * most 4096, as server_client_read() asks for, and never more than fits
 * in one header plus PROTO_MAX_PAYLOAD) into a struct proto_buf,
 * proto_next() takes each complete message, PROTO_DATA payloads add up
 * to at most QUEUE_PAYLOAD_MAX, and proto_command_unpack() decodes every
 * PROTO_COMMAND payload.  For a peer without control rights, a header
 * whose length passes SERVER_MAX_RO_REQUEST is refused as it comes, as
 * vigild does with proto_peek().  Anything vigild would drop or refuse
 * ends the input.  Two differences from vigild: each payload is first copied
 * to a heap block of exactly its length, so that AddressSanitizer sees a
 * read past its end (in the buffer such a read would land in spare
 * capacity), and the target goes on with the next message where vigild
 * reads nothing after one request, to exercise the buffer's compaction
 * and growth as well.
 *
 * Input layout: the first byte seeds the read sizes (0: reads of 4096,
 * as far as the input goes) and, with its top bit, makes the client a
 * peer without control rights; the rest is what the client sends.
 */

#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "queue.h"

#define FUZZ_READ_MAX 4096
/* SERVER_MAX_RO_REQUEST of supervisord/server.c. */
#define FUZZ_RO_MAX (64 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* The size of the next read: 1 to FUZZ_READ_MAX, small ones favoured. */
static size_t
fuzz_read_size(uint32_t *state)
{
	uint32_t x = *state;

	if (x == 0)
		return (FUZZ_READ_MAX);
	/* xorshift32: cheap, deterministic for one input. */
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	switch (x & 3) {
	case 0:
		return (1 + (x >> 8) % 8);
	case 1:
		return (1 + (x >> 8) % 64);
	default:
		return (1 + (x >> 8) % FUZZ_READ_MAX);
	}
}

/* Decode every complete message; return -1 where vigild would drop. */
static int
fuzz_parse(struct proto_buf *in, size_t *data, int ro)
{
	struct proto_header h;
	const uint8_t *payload;
	uint8_t *copy;
	uint32_t flags;
	char **argv;
	int argc, i, r;

	for (;;) {
		if (ro && proto_peek(in, &h) && h.version == PROTO_VERSION &&
		    h.len > FUZZ_RO_MAX)
			return (-1);
		if ((r = proto_next(in, &h, &payload)) == 0)
			return (0);
		if (r == -1 ||
		    (h.type != PROTO_COMMAND && h.type != PROTO_DATA))
			return (-1);
		if ((copy = malloc(h.len)) == NULL && h.len > 0)
			abort();
		if (h.len > 0)
			memcpy(copy, payload, h.len);
		if (h.type == PROTO_DATA) {
			free(copy);
			if (h.len > QUEUE_PAYLOAD_MAX - *data)
				return (-1);
			*data += h.len;
			proto_buf_consume(in, PROTO_HEADER_SIZE + h.len);
			continue;
		}
		*data = 0;
		r = proto_command_unpack(copy, h.len, &flags, &argc, &argv);
		free(copy);
		if (r == -1)
			return (-1);
		/* The words must be NUL-terminated and argv NULL-ended. */
		for (i = 0; i < argc; i++) {
			if (strlen(argv[i]) > h.len)
				abort();
			free(argv[i]);
		}
		if (argv[argc] != NULL)
			abort();
		free(argv);
		proto_buf_consume(in, PROTO_HEADER_SIZE + h.len);
	}
}

/*
 * libFuzzer's entry point: feed data through the server's decoding.
 * Always return 0; a bug shows as a crash or a sanitizer report.
 */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proto_buf in;
	uint32_t state;
	uint8_t *p;
	size_t n, room, sent = 0;
	int ro;

	if (size == 0)
		return (0);
	state = data[0] == 0 ? 0 : 0x9e3779b9U * data[0];
	ro = (data[0] & 0x80) != 0;
	data++;
	size--;
	proto_buf_init(&in);
	while (size > 0) {
		room = PROTO_HEADER_SIZE + PROTO_MAX_PAYLOAD -
		    proto_buf_pending(&in);
		if (room == 0)
			break;
		n = fuzz_read_size(&state);
		if (n > size)
			n = size;
		if (n > room)
			n = room;
		p = proto_buf_reserve(&in, FUZZ_READ_MAX);
		memcpy(p, data, n);
		proto_buf_commit(&in, n);
		data += n;
		size -= n;
		if (fuzz_parse(&in, &sent, ro) == -1)
			break;
	}
	proto_buf_clear(&in);
	return (0);
}
