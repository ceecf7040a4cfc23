/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The HTTP server's own structures, shared by its two files (and by no
 * other): http.c (the server: the token, access and Host checks, the
 * peer, the connections, the loop) and http-api.c (the API: routes,
 * replies, the commands run for requests).  Calls go from http.c to
 * http-api.c, never back: the API runs libmicrohttpd again through the
 * kick it is given (http_api_open()).
 */

#ifndef VIGILD_HTTP_INT_H
#define VIGILD_HTTP_INT_H

#include <sys/types.h>

#include <bsd/sys/queue.h>

#include "proto.h"
#include "queue.h"
#include "server.h"

#define HTTP_MAX_BODY QUEUE_PAYLOAD_MAX

/* Who may have a route on a TCP listener, without the token. */
#define HTTP_OPEN_ALL 1  /* anyone */
#define HTTP_OPEN_PAGE 2 /* anyone, once there is a token to log in with */

/* How a route's reply becomes a body. */
enum http_body {
	HTTP_BODY_JSON,    /* the command writes JSON (--json) */
	HTTP_BODY_TEXT,    /* lines of text, wrapped into JSON */
	HTTP_BODY_METRICS, /* OpenMetrics text as is */
};

struct MHD_Connection;
struct http_param;
struct http_req;

struct http_route {
	const char *method;
	const char *path;  /* "*" is one segment: the job's name */
	const char *verb;  /* NULL: answered here (fn) */
	const char *fixed; /* an option always given, or NULL */
	enum http_body body;
	int created; /* success is 201 */
	int quiet3;  /* exit 3 (not running) is a success, as status's */
	int open;    /* on TCP: HTTP_OPEN_* (else it needs the token) */
	const struct http_param *params;
	int (*fn)(struct http_req *); /* answers the route itself */
};

struct http_req {
	struct MHD_Connection *conn;
	const struct http_route *route;
	char *name; /* the "*" of the path, or NULL */
	struct client *client;
	struct proto_buf body; /* the request's body */
	struct proto_buf out;  /* the command's standard output */
	struct proto_buf err;  /* its standard error */
	int may_act;
	uid_t uid;
	char who[64];
	int code;      /* the command's exit code, once finished */
	int finished;  /* the command ended */
	int suspended; /* the connection waits for the command */
	int too_big;   /* the body passed HTTP_MAX_BODY */
	int answered;  /* refused at once: a response is queued */
	TAILQ_ENTRY(http_req) entry;
};

/* http-api.c */
void http_api_open(server_command_fn, void (*)(void), int, int);
void http_api_close(void);
const struct http_route *http_route(const char *, const char *, char **, int *);
int http_error(struct MHD_Connection *, int, const char *, ...)
    __attribute__((format(printf, 3, 4)));
struct http_req *http_req_new(struct MHD_Connection *);
int http_answer(struct http_req *);
void http_req_free(struct http_req *);

#endif
