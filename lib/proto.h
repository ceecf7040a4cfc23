/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The wire format between vigilctl and vigild over the unix socket.  Every
 * message is an 8-byte header {version, type, len} in host byte order
 * (both ends are on one machine) followed by len bytes of payload.  The
 * length is checked against PROTO_MAX_PAYLOAD before any payload is read.
 *
 * Bump PROTO_VERSION when any message layout changes.
 */

#ifndef VIGIL_PROTO_H
#define VIGIL_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define PROTO_VERSION 1
#define PROTO_HEADER_SIZE 8
#define PROTO_MAX_PAYLOAD (256 * 1024)
#define PROTO_MAX_ARGS 4096

/* Flags of a PROTO_COMMAND. */
#define PROTO_F_JSON 0x1
#define PROTO_F_ACK 0x2 /* answer PROTO_ACK as soon as the request is read */

enum proto_type {
	PROTO_COMMAND = 1, /* client: u32 flags, then argv as NUL-ended words */
	PROTO_STDOUT,      /* server: bytes for the client's stdout */
	PROTO_STDERR,      /* server: bytes for the client's stderr */
	PROTO_EXIT,        /* server: i32 exit code; the reply is complete */
	/*
	 * client: raw payload bytes for the next PROTO_COMMAND (enqueue -),
	 * sent before it; the bytes of several frames are concatenated.
	 */
	PROTO_DATA,
	/*
	 * server: the request was read and is being handled; sent only to a
	 * client that set PROTO_F_ACK, before anything else.  No payload.
	 */
	PROTO_ACK,
	PROTO_TYPE_MAX,
};

struct proto_header {
	uint16_t version;
	uint16_t type;
	uint32_t len;
};

/* A growable byte buffer with a read offset. */
struct proto_buf {
	uint8_t *data;
	size_t off; /* first unread byte */
	size_t len; /* end of valid bytes */
	size_t cap;
};

void proto_buf_init(struct proto_buf *);
void proto_buf_clear(struct proto_buf *);
size_t proto_buf_pending(const struct proto_buf *);
void proto_buf_consume(struct proto_buf *, size_t);
uint8_t *proto_buf_reserve(struct proto_buf *, size_t);
void proto_buf_commit(struct proto_buf *, size_t);
void proto_buf_add(struct proto_buf *, const void *, size_t);

void proto_append(struct proto_buf *, enum proto_type, const void *, size_t);
int proto_next(struct proto_buf *, struct proto_header *, const uint8_t **);
int proto_peek(const struct proto_buf *, struct proto_header *);
void proto_command_pack(struct proto_buf *, uint32_t, int, char *const *);
int proto_command_unpack(const uint8_t *, size_t, uint32_t *, int *, char ***);

#endif
