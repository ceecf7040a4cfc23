/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * cluster: the nodes of the cluster (version, last heartbeat, leases
 * held, queue messages running, config drift) and every lease (holder, epoch, time left, pid,
 * held by the operator), as PostgreSQL has them.  Two statements on the
 * work connection; the client waits for their answers (or for the query
 * timeout, after which the connection fails them).  With "drain" or
 * "undrain" [NODE]: maintenance, recorded on the node's row (which needs
 * control rights).
 */

#include "config.h"

#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "cluster.h"
#include "cmd.h"
#include "duration.h"
#include "json.h"
#include "log.h"
#include "pgstate.h"
#include "proto.h"
#include "server.h"
#include "xmalloc.h"

static enum cmd_retval cmd_cluster_exec(struct cmd_ctx *);

const struct cmd_entry cmd_cluster_entry = {
	.name = "cluster",
	.usage = "[drain | undrain [node]]",
	.optstring = "",
	.min_args = 0,
	.max_args = 2,
	.flags = CMD_READONLY, /* the listing; drain checks its rights */
	.help = "list the nodes and leases of the cluster; drain a node for "
	        "maintenance (its cluster work moves), or undrain it",
	.exec = cmd_cluster_exec,
};

/* A cluster request under way: its client (NULL once gone), its output. */
struct cmd_cluster {
	struct client *client;
	int json;
	int answers; /* of the two statements */
	int failed;
	struct proto_buf out;
	struct json jw;
};

/* The end of a line of the table, without the spaces of an empty note. */
static void
cmd_cluster_eol(struct cmd_cluster *cc)
{
	while (cc->out.len > 0 && cc->out.data[cc->out.len - 1] == ' ')
		cc->out.len--;
	proto_buf_add(&cc->out, "\n", 1);
}

/* A column as text, "-" for NULL. */
static const char *
cmd_cluster_col(const struct pgres *res, int row, int col)
{
	const char *s = pgres_value(res, row, col);

	return (s != NULL ? s : "-");
}

/* A duration in ms as status writes it ("1.2s ago"). */
static const char *
cmd_cluster_ms(long long ms, char *buf, size_t len)
{
	if (ms < 0)
		return ("-");
	return (duration_format((uint64_t)ms * 1000, buf, len));
}

/* A drain or undrain on its way to the database. */
struct cmd_drain {
	struct cmd_ctx *later;
	char *node;
	int drain;
};

static void
cmd_drain_done(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct cmd_drain *d = arg;
	struct cmd_ctx *l = d->later;

	(void)sent;
	if (res == NULL) {
		cmd_error(l, "cluster: %s", err);
		l->code = EX_UNAVAILABLE;
	} else if (pgres_ntuples(res) == 0) {
		cmd_error(l, "cluster %s: no node %s in the cluster",
		    d->drain ? "drain" : "undrain", d->node);
		l->code = CMD_EXIT_FAILED;
	} else if (d->drain)
		cmd_print(l,
		    "%s: drained: its cluster instances move to the other "
		    "nodes; it takes no cluster work until undrained\n",
		    d->node);
	else
		cmd_print(l, "%s: undrained\n", d->node);
	cmd_later_end(l);
	free(d->node);
	free(d);
}

/* cluster drain|undrain [NODE]: on the node's row; NOTIFY tells it. */
static enum cmd_retval
cmd_cluster_drain(struct cmd_ctx *ctx)
{
	struct cmd_drain *d;
	const char *verb = ctx->argv[0], *p[2];
	const char *node = ctx->argc > 1 ? ctx->argv[1] : cluster_node_name();
	char *cause = NULL;

	if (strcmp(verb, "drain") != 0 && strcmp(verb, "undrain") != 0) {
		cmd_error(ctx,
		    "cluster: unknown action \"%s\" (drain or "
		    "undrain)",
		    verb);
		ctx->code = CMD_EXIT_USAGE;
		return (CMD_ERROR);
	}
	if (!server_client_may_act(ctx->client)) {
		cmd_error(ctx,
		    "cluster %s: permission denied (%s may only run "
		    "read-only commands)",
		    verb, server_client_who(ctx->client));
		ctx->code = CMD_EXIT_FAILED;
		return (CMD_ERROR);
	}
	if (node == NULL) {
		cmd_error(ctx, "cluster %s: cluster mode is off", verb);
		ctx->code = EX_UNAVAILABLE;
		return (CMD_ERROR);
	}
	log_info(
	    "%s: cluster %s %s", server_client_who(ctx->client), verb, node);
	d = xcalloc(1, sizeof(*d));
	d->node = xstrdup(node);
	d->drain = strcmp(verb, "drain") == 0;
	p[0] = d->node;
	p[1] = d->drain ? "true" : "false";
	if (cluster_ask(pg_node_drain, 2, p, cmd_drain_done, d, &cause) == -1) {
		cmd_error(ctx, "cluster %s: %s", verb, cause);
		ctx->code = EX_UNAVAILABLE;
		free(cause);
		free(d->node);
		free(d);
		return (CMD_ERROR);
	}
	d->later = cmd_later(ctx);
	return (CMD_WAIT);
}

static void
cmd_cluster_nodes(struct cmd_cluster *cc, const struct pgres *res)
{
	const char *me = cluster_node_name(), *name, *drift;
	struct json *jw = &cc->jw;
	char buf[32], hb[48];
	int row, n = pgres_ntuples(res), alive, drained;
	long long ms;

	if (cc->json) {
		json_key(jw, "node");
		json_string(jw, me);
		json_key(jw, "nodes");
		json_array_begin(jw);
	} else
		cmd_buf_printf(&cc->out, "%-16s %-8s %-16s %6s %8s  %s\n",
		    "NODE", "VERSION", "HEARTBEAT", "LEASES", "MESSAGES",
		    "NOTE");
	for (row = 0; row < n; row++) {
		name = cmd_cluster_col(res, row, 0);
		ms = pgres_int(res, row, 2, -1);
		alive = pgres_bool(res, row, 3);
		drift = pgres_value(res, row, 5);
		drained = pgres_bool(res, row, 7);
		if (cc->json) {
			json_object_begin(jw);
			json_key(jw, "name");
			json_string(jw, name);
			json_key(jw, "version");
			json_string(jw, pgres_value(res, row, 1));
			json_key(jw, "heartbeat_ago_s");
			json_fixed(jw, (double)ms / 1e3, 3);
			json_key(jw, "alive");
			json_bool(jw, alive);
			json_key(jw, "leases");
			json_int(jw, pgres_int(res, row, 4, 0));
			json_key(jw, "messages");
			json_int(jw, pgres_int(res, row, 6, 0));
			json_key(jw, "drift");
			json_string(jw, drift);
			json_key(jw, "drained");
			json_bool(jw, drained);
			json_object_end(jw);
			continue;
		}
		snprintf(hb, sizeof(hb), "%s %s", alive ? "" : "lost",
		    cmd_cluster_ms(ms, buf, sizeof(buf)));
		cmd_buf_printf(&cc->out,
		    "%-16s %-8s %-16s %6lld %8lld  %s%s%s%s", name,
		    cmd_cluster_col(res, row, 1),
		    alive ? cmd_cluster_ms(ms, buf, sizeof(buf)) : hb,
		    pgres_int(res, row, 4, 0), pgres_int(res, row, 6, 0),
		    me != NULL && strcmp(name, me) == 0 ? "(this node) " : "",
		    drained ? "drained " : "",
		    drift != NULL ? "spec differs from another node: " : "",
		    drift != NULL ? drift : "");
		cmd_cluster_eol(cc);
	}
	if (cc->json)
		json_array_end(jw);
}

static void
cmd_cluster_leases(struct cmd_cluster *cc, const struct pgres *res)
{
	struct json *jw = &cc->jw;
	char label[160], buf[32];
	int row, n = pgres_ntuples(res), held;
	long long inst, left;

	if (cc->json) {
		json_key(jw, "leases");
		json_array_begin(jw);
	} else
		cmd_buf_printf(&cc->out, "\n%-24s %-16s %14s %10s %8s  %s\n",
		    "LEASE", "HOLDER", "EPOCH", "LEFT", "PID", "NOTE");
	for (row = 0; row < n; row++) {
		inst = pgres_int(res, row, 1, 0);
		left = pgres_int(res, row, 4, -1);
		held = pgres_bool(res, row, 7);
		if (cc->json) {
			json_object_begin(jw);
			json_key(jw, "job");
			json_string(jw, pgres_value(res, row, 0));
			json_key(jw, "instance");
			json_int(jw, inst);
			json_key(jw, "holder");
			json_string(
			    jw, left >= 0 ? pgres_value(res, row, 2) : NULL);
			json_key(jw, "epoch");
			json_int(jw, pgres_int(res, row, 3, 0));
			json_key(jw, "expires_in_s");
			if (left >= 0)
				json_fixed(jw, (double)left / 1e3, 3);
			else
				json_null(jw);
			json_key(jw, "pid");
			if (pgres_value(res, row, 5) != NULL && left >= 0)
				json_int(jw, pgres_int(res, row, 5, 0));
			else
				json_null(jw);
			json_key(jw, "held");
			json_bool(jw, held);
			json_key(jw, "held_by");
			json_string(jw, pgres_value(res, row, 8));
			json_key(jw, "nodes_may_run");
			json_int(jw, pgres_int(res, row, 9, 0));
			json_object_end(jw);
			continue;
		}
		snprintf(label, sizeof(label), "%s@%lld",
		    cmd_cluster_col(res, row, 0), inst);
		cmd_buf_printf(&cc->out, "%-24s %-16s %14s %10s %8s  %s%s%s",
		    label, left >= 0 ? cmd_cluster_col(res, row, 2) : "-",
		    cmd_cluster_col(res, row, 3),
		    cmd_cluster_ms(left, buf, sizeof(buf)),
		    left >= 0 ? cmd_cluster_col(res, row, 5) : "-",
		    held ? "stopped by " : "",
		    held ? cmd_cluster_col(res, row, 8) : "",
		    !held && pgres_int(res, row, 9, 1) == 0 ?
		        "no live node may run it (cluster_nodes, drained)" :
		        "");
		cmd_cluster_eol(cc);
	}
	if (cc->json)
		json_array_end(jw);
}

/* Both answers came (or one failed): the reply, unless the client went. */
static void
cmd_cluster_finish(struct cmd_cluster *cc)
{
	if (cc->client != NULL) {
		if (!cc->failed && cc->json) {
			json_object_end(&cc->jw);
			proto_buf_add(&cc->out, "\n", 1);
		}
		if (cc->out.len > 0)
			server_client_write(cc->client,
			    cc->failed ? PROTO_STDERR : PROTO_STDOUT,
			    cc->out.data, cc->out.len);
		server_client_park(cc->client, NULL, NULL);
		server_client_finish(
		    cc->client, cc->failed ? EX_UNAVAILABLE : CMD_EXIT_OK);
	}
	proto_buf_clear(&cc->out);
	free(cc);
}

static void
cmd_cluster_answer(struct cmd_cluster *cc, const struct pgres *res,
    const char *err, int leases)
{
	if (res == NULL && !cc->failed) {
		cc->failed = 1;
		proto_buf_clear(&cc->out);
		cmd_buf_printf(&cc->out, "vigilctl: cluster: %s\n", err);
	} else if (res != NULL && !cc->failed) {
		if (leases)
			cmd_cluster_leases(cc, res);
		else
			cmd_cluster_nodes(cc, res);
	}
	if (++cc->answers == 2)
		cmd_cluster_finish(cc);
}

static void
cmd_cluster_nodes_done(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	cmd_cluster_answer(arg, res, err, 0);
}

static void
cmd_cluster_leases_done(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	cmd_cluster_answer(arg, res, err, 1);
}

/* The client went before the answers: they are dropped when they come. */
static void
cmd_cluster_gone(struct client *c)
{
	struct cmd_cluster *cc = server_client_parked(c);

	if (cc != NULL)
		cc->client = NULL;
}

static enum cmd_retval
cmd_cluster_exec(struct cmd_ctx *ctx)
{
	struct cmd_cluster *cc;
	char *cause = NULL;

	if (ctx->argc > 0)
		return (cmd_cluster_drain(ctx));
	cc = xcalloc(1, sizeof(*cc));
	cc->client = ctx->client;
	cc->json = ctx->json;
	proto_buf_init(&cc->out);
	json_init(&cc->jw, cmd_json_write, &cc->out);
	if (cc->json)
		json_object_begin(&cc->jw);
	if (cluster_ask(pg_cluster_nodes, 0, NULL, cmd_cluster_nodes_done, cc,
	        &cause) == -1) {
		cmd_error(ctx, "cluster: %s", cause);
		ctx->code = EX_UNAVAILABLE;
		free(cause);
		proto_buf_clear(&cc->out);
		free(cc);
		return (CMD_ERROR);
	}
	(void)cluster_ask(
	    pg_cluster_leases, 0, NULL, cmd_cluster_leases_done, cc, &cause);
	free(cause);
	server_client_park(ctx->client, cmd_cluster_gone, cc);
	return (CMD_WAIT);
}
