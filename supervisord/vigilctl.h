/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * vigilctl's files: vigilctl.c reads the command line and hands on the
 * rest.  vigilctl-conn.c finds vigild and talks to it.  The commands that
 * work without vigild are each in a file of their own: vigilctl.c hands
 * them the command line from the command's name on.
 */

#ifndef VIGIL_VIGILCTL_H
#define VIGIL_VIGILCTL_H

#include <stdint.h>

struct proto_buf;

/* Where the socket and the state directory are to be found. */
struct vigilctl_where {
	const char *socket;
	const char *config;
	const char *state_dir;
};

/* vigilctl-conn.c: the socket's path, or with QUIET NULL on errors. */
char *vigilctl_socket_path(const struct vigilctl_where *, int);
/* vigilctl-conn.c: state.db's directory. */
char *vigilctl_state_dir(const struct vigilctl_where *);
/* vigilctl-conn.c: how the replies are written (RAW, JSON). */
void vigilctl_escape_init(int, int);
/* vigilctl-conn.c: send the request, relay the reply, return its code. */
int vigilctl_exchange(const char *, const struct proto_buf *, uint64_t);
/* vigilctl-conn.c: after enqueue --direct, wake a running vigild's job. */
void vigilctl_kick(const struct vigilctl_where *, const char *, const char *);

/* vigilctl import supervisord ...: ARGV from "import", CONFIG from -c. */
int vigilctl_import(int, char **, const char *);

#endif
