/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/* Tests of the wire format: framing, limits, command packing. */

#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "test.h"

static void
free_argv(int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
}

TEST(roundtrip)
{
	struct proto_buf b;
	struct proto_header h;
	const uint8_t *p;
	char *in[] = { "stop", "--no-wait", "web", "" };
	char **argv;
	uint32_t flags;
	int argc;

	proto_buf_init(&b);
	proto_command_pack(&b, PROTO_F_JSON, 4, in);
	ASSERT_EQ(proto_next(&b, &h, &p), 1);
	ASSERT_EQ(h.type, PROTO_COMMAND);
	ASSERT_EQ(proto_command_unpack(p, h.len, &flags, &argc, &argv), 0);
	ASSERT_EQ(flags, PROTO_F_JSON);
	ASSERT_EQ(argc, 4);
	ASSERT_STREQ(argv[0], "stop");
	ASSERT_STREQ(argv[2], "web");
	ASSERT_STREQ(argv[3], "");
	ASSERT_OK(argv[4] == NULL);
	free_argv(argc, argv);
	proto_buf_consume(&b, PROTO_HEADER_SIZE + h.len);
	ASSERT_EQ(proto_buf_pending(&b), 0);
	proto_buf_clear(&b);
	return (0);
}

TEST(partial_input_waits)
{
	struct proto_buf b, whole;
	struct proto_header h;
	const uint8_t *p;
	char *in[] = { "status" };
	size_t i;

	proto_buf_init(&b);
	proto_buf_init(&whole);
	proto_command_pack(&whole, 0, 1, in);
	for (i = 0; i + 1 < whole.len; i++) {
		proto_buf_add(&b, whole.data + i, 1);
		ASSERT_EQ(proto_next(&b, &h, &p), 0);
	}
	proto_buf_add(&b, whole.data + i, 1);
	ASSERT_EQ(proto_next(&b, &h, &p), 1);
	proto_buf_clear(&b);
	proto_buf_clear(&whole);
	return (0);
}

TEST(bad_headers)
{
	struct proto_buf b;
	struct proto_header h, bad;
	const uint8_t *p;

	proto_buf_init(&b);
	bad.version = PROTO_VERSION + 1;
	bad.type = PROTO_COMMAND;
	bad.len = 0;
	proto_buf_add(&b, &bad, sizeof(bad));
	ASSERT_EQ(proto_next(&b, &h, &p), -1);
	ASSERT_EQ(errno, EPROTO);
	proto_buf_clear(&b);

	bad.version = PROTO_VERSION;
	bad.type = PROTO_TYPE_MAX;
	proto_buf_add(&b, &bad, sizeof(bad));
	ASSERT_EQ(proto_next(&b, &h, &p), -1);
	proto_buf_clear(&b);

	/* An oversized length is refused from the header alone. */
	bad.type = PROTO_COMMAND;
	bad.len = PROTO_MAX_PAYLOAD + 1;
	proto_buf_add(&b, &bad, sizeof(bad));
	ASSERT_EQ(proto_next(&b, &h, &p), -1);
	ASSERT_EQ(errno, EMSGSIZE);
	proto_buf_clear(&b);
	return (0);
}

TEST(bad_payloads)
{
	const uint8_t none[] = { 0, 0, 0, 0 };
	const uint8_t unterminated[] = { 0, 0, 0, 0, 'a', 'b' };
	uint32_t flags;
	char **argv;
	int argc;

	ASSERT_EQ(
	    proto_command_unpack(none, sizeof(none), &flags, &argc, &argv), -1);
	ASSERT_EQ(proto_command_unpack(
	              unterminated, sizeof(unterminated), &flags, &argc, &argv),
	    -1);
	ASSERT_EQ(proto_command_unpack(none, 2, &flags, &argc, &argv), -1);
	return (0);
}

TEST(too_many_words)
{
	size_t n = 4 + (PROTO_MAX_ARGS + 1) * 2, i;
	uint8_t *p = calloc(1, n);
	uint32_t flags;
	char **argv;
	int argc;

	for (i = 4; i < n; i += 2)
		p[i] = 'x';
	ASSERT_EQ(proto_command_unpack(p, n, &flags, &argc, &argv), -1);
	free(p);
	return (0);
}

TEST(buffer_compacts)
{
	struct proto_buf b;
	size_t i;

	proto_buf_init(&b);
	for (i = 0; i < 1000; i++) {
		proto_buf_add(&b, "0123456789", 10);
		proto_buf_consume(&b, 10);
	}
	ASSERT_EQ(proto_buf_pending(&b), 0);
	ASSERT_OK(b.cap <= 256);
	proto_buf_clear(&b);
	return (0);
}

/* PROTO_DATA frames, empty or full, come before the command intact. */
TEST(data_frames)
{
	struct proto_buf b;
	struct proto_header h;
	const uint8_t *p;
	uint8_t *big;
	char *in[] = { "enqueue", "q", "-" };

	big = calloc(1, PROTO_MAX_PAYLOAD);
	ASSERT_OK(big != NULL);
	big[PROTO_MAX_PAYLOAD - 1] = 'z';
	proto_buf_init(&b);
	proto_append(&b, PROTO_DATA, "", 0);
	proto_append(&b, PROTO_DATA, big, PROTO_MAX_PAYLOAD);
	proto_command_pack(&b, 0, 3, in);
	free(big);
	ASSERT_EQ(proto_next(&b, &h, &p), 1);
	ASSERT_EQ(h.type, PROTO_DATA);
	ASSERT_EQ(h.len, 0);
	proto_buf_consume(&b, PROTO_HEADER_SIZE + h.len);
	ASSERT_EQ(proto_next(&b, &h, &p), 1);
	ASSERT_EQ(h.type, PROTO_DATA);
	ASSERT_EQ(h.len, PROTO_MAX_PAYLOAD);
	ASSERT_EQ(p[PROTO_MAX_PAYLOAD - 1], 'z');
	proto_buf_consume(&b, PROTO_HEADER_SIZE + h.len);
	ASSERT_EQ(proto_next(&b, &h, &p), 1);
	ASSERT_EQ(h.type, PROTO_COMMAND);
	proto_buf_consume(&b, PROTO_HEADER_SIZE + h.len);
	ASSERT_EQ(proto_buf_pending(&b), 0);
	proto_buf_clear(&b);
	return (0);
}

/* A header can be looked at before its payload is there, and not before. */
TEST(peek_header)
{
	struct proto_buf b;
	struct proto_header h, big;

	proto_buf_init(&b);
	ASSERT_EQ(proto_peek(&b, &h), 0);
	big.version = PROTO_VERSION;
	big.type = PROTO_COMMAND;
	big.len = 200000;
	proto_buf_add(&b, &big, PROTO_HEADER_SIZE - 1);
	ASSERT_EQ(proto_peek(&b, &h), 0);
	proto_buf_add(&b, (const uint8_t *)&big + PROTO_HEADER_SIZE - 1, 1);
	ASSERT_EQ(proto_peek(&b, &h), 1);
	ASSERT_EQ(h.type, PROTO_COMMAND);
	ASSERT_EQ(h.len, 200000);
	/* Peeking takes nothing. */
	ASSERT_EQ(proto_buf_pending(&b), PROTO_HEADER_SIZE);
	proto_buf_clear(&b);
	return (0);
}

/* The acknowledgement: an empty message of its own type, then the reply. */
TEST(ack_frame)
{
	struct proto_buf b;
	struct proto_header h;
	const uint8_t *p;
	char *in[] = { "wait", "web" };
	char **argv;
	uint32_t flags;
	int argc;

	proto_buf_init(&b);
	proto_command_pack(&b, PROTO_F_ACK | PROTO_F_JSON, 2, in);
	ASSERT_EQ(proto_next(&b, &h, &p), 1);
	ASSERT_EQ(proto_command_unpack(p, h.len, &flags, &argc, &argv), 0);
	ASSERT_EQ(flags, PROTO_F_ACK | PROTO_F_JSON);
	free_argv(argc, argv);
	proto_buf_consume(&b, PROTO_HEADER_SIZE + h.len);
	proto_append(&b, PROTO_ACK, NULL, 0);
	proto_append(&b, PROTO_STDOUT, "x", 1);
	ASSERT_EQ(proto_next(&b, &h, &p), 1);
	ASSERT_EQ(h.type, PROTO_ACK);
	ASSERT_EQ(h.len, 0);
	proto_buf_consume(&b, PROTO_HEADER_SIZE + h.len);
	ASSERT_EQ(proto_next(&b, &h, &p), 1);
	ASSERT_EQ(h.type, PROTO_STDOUT);
	proto_buf_clear(&b);
	return (0);
}

int
main(void)
{
	RUN(roundtrip);
	RUN(partial_input_waits);
	RUN(bad_headers);
	RUN(bad_payloads);
	RUN(too_many_words);
	RUN(buffer_compacts);
	RUN(data_frames);
	RUN(peek_header);
	RUN(ack_frame);
	TEST_MAIN_END();
}
