/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The front doors: the control socket's clients (server.c) and the HTTP
 * API (http.c, http-api.c, httpconn.c) with the dashboard's embedded files.
 */

#ifndef VIGILD_SERVER_H
#define VIGILD_SERVER_H

#include <sys/types.h>
#include <sys/socket.h>

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

struct client;

/* server.c */
/* Called when a parked client goes away before its reply ended. */
typedef void (*server_gone_fn)(struct client *);
/* Runs a request: flags, argv, and the PROTO_DATA bytes before it. */
typedef void (*server_command_fn)(
    struct client *, uint32_t, int, char **, const uint8_t *, size_t);

/* Where the replies of a sink client go (server_client_attach()). */
struct server_sink {
	void (*write)(void *, enum proto_type, const void *, size_t);
	void (*finish)(void *, int); /* the exit code: the reply ended */
};

int server_open(const char *, int, gid_t, server_command_fn, char **);
void server_close(void);
void server_client_write(
    struct client *, enum proto_type, const void *, size_t);
void server_client_printf(struct client *, enum proto_type, const char *, ...)
    __attribute__((format(printf, 3, 4)));
void server_client_finish(struct client *, int);
uid_t server_client_uid(const struct client *);
int server_client_may_act(const struct client *);
void server_client_hold(struct client *);
void server_client_park(struct client *, server_gone_fn, void *);
void *server_client_parked(const struct client *);
int server_client_may_wait(struct client *);
const char *server_client_who(const struct client *);
struct client *server_client_attach(
    const struct server_sink *, void *, int, uid_t, const char *);
void server_client_detach(struct client *);

/* http.c */
int http_open(server_command_fn, char **);
void http_close(void);

/* httpconn.c */
struct httpconn;
struct sockaddr;
typedef int (*httpconn_add_fn)(int, const struct sockaddr *, socklen_t);
int httpconn_open(int, int, httpconn_add_fn, void (*)(void), char **);
struct httpconn *httpconn_adding(void);
void httpconn_request(struct httpconn *, int);
void httpconn_idle(struct httpconn *);
void httpconn_gone(struct httpconn *);
void httpconn_close(void);

/* The dashboard's files, embedded by the build (contrib/embed.sh). */
struct http_file {
	const char *path;
	const char *type;
	const unsigned char *data;
	size_t len;
};
extern const struct http_file http_files[];

#endif
