/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * A probe of a job (options ready and health): what to try, parsed from
 * "tcp:PORT", "tcp:HOST:PORT", "http:URL" (or the http:// URL alone) or
 * "exec:COMMAND", and how an
 * HTTP answer reads.  Pure: no socket is opened here (supervisord/prober.c
 * runs probes).  HOST is an address or "localhost", never a name to look
 * up: vigild's loop makes no DNS query.
 */

#ifndef VIGIL_PROBE_H
#define VIGIL_PROBE_H

#include <sys/types.h>
#include <sys/socket.h>

#include <stddef.h>

enum probe_kind {
	PROBE_NONE = 0,
	PROBE_TCP,  /* a connect that succeeds */
	PROBE_HTTP, /* GET path answered 2xx or 3xx */
	PROBE_EXEC, /* a command that exits 0 */
};

struct probe_spec {
	enum probe_kind kind;
	char *text; /* as written, for messages */
	struct sockaddr_storage addr;
	socklen_t addrlen;
	char *host;  /* http: the Host header */
	char *path;  /* http: the request target, from "/" */
	char **argv; /* exec */
};

int probe_parse(const char *, struct probe_spec *, char **);
void probe_spec_free(struct probe_spec *);
int probe_spec_equal(const struct probe_spec *, const struct probe_spec *);
size_t probe_http_request(const struct probe_spec *, char *, size_t);
int probe_http_status(const char *, size_t);

#endif
