/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * A reply that comes later: a command that must wait for an answer from
 * elsewhere (the cluster's database: cluster, history, queue, status of a
 * cluster job) returns CMD_WAIT and answers through a context of its own
 * (cmd_later), which outlives the request's and ends it (cmd_later_end).
 * Its client may go first: the reply then goes nowhere.
 */

#include "config.h"

#include <stdlib.h>

#include "cmd.h"
#include "json.h"
#include "proto.h"
#include "server.h"
#include "xmalloc.h"

/* The client of a later reply went: the reply goes nowhere. */
static void
cmd_later_gone(struct client *c)
{
	struct cmd_ctx *l = server_client_parked(c);

	if (l != NULL)
		l->client = NULL;
}

/*
 * For a handler that answers after the database does (it returns
 * CMD_WAIT): a context for the reply, with its own output and JSON
 * writer; the command's code, options and targets stay with ctx.  End it
 * with cmd_later_end.
 */
struct cmd_ctx *
cmd_later(struct cmd_ctx *ctx)
{
	struct cmd_ctx *l = xcalloc(1, sizeof(*l));

	l->client = ctx->client;
	l->entry = ctx->entry;
	l->json = ctx->json;
	proto_buf_init(&l->out);
	proto_buf_init(&l->err);
	json_init(&l->jw, cmd_json_write, &l->out);
	server_client_park(ctx->client, cmd_later_gone, l);
	return (l);
}

/* The later reply: its output, then the end of the request with l->code. */
void
cmd_later_end(struct cmd_ctx *l)
{
	if (l->client != NULL) {
		cmd_send(l);
		server_client_park(l->client, NULL, NULL);
		server_client_finish(l->client, l->code);
	}
	cmd_targets_free(l);
	proto_buf_clear(&l->out);
	proto_buf_clear(&l->err);
	free(l);
}
