/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The HTTP server (vigil.conf http_listen): /metrics, /healthz, the JSON
 * API and the dashboard, on vigild's own event loop.  libmicrohttpd does
 * the HTTP: it runs in its external epoll mode, its epoll descriptor is an
 * sd-event I/O source that calls MHD_run(), and its next timeout is an
 * sd-event timer; without a client there is neither a wakeup nor a timer.
 *
 * This file lets a request in (its Host, its route, its peer's rights,
 * its body's size) and reads its body; http-api.c (http-int.h) answers
 * it, most routes with the words of a vigilctl command.  A connection
 * suspended while its command waits is resumed by the API, which has
 * libmicrohttpd run again through http_kick(), given to it at
 * http_open(); it calls nothing of this file.
 *
 * Host.  On a TCP listener, a request whose Host header is neither an
 * address, nor localhost, nor a name of http_allowed_hosts is answered
 * 421: a page of another site that a browser reaches vigild through (DNS
 * rebinding) gets nothing (listen_addr_host_allowed()).  A browser does
 * not reach a unix listener: any Host goes there (curl --unix-socket).
 *
 * Rights.  On a TCP listener, /metrics and /healthz answer anyone, and so
 * do the dashboard's static files once there is a token; every other path
 * needs "Authorization: Bearer TOKEN" with the token of
 * http_token_file (compared in constant time), which gives control
 * rights; without a token file they all get 401.  On a unix listener the
 * peer's credentials decide as on the control socket (read-only peers get
 * 403 for what changes state); a right token gives control rights too.
 *
 * Limits: connections are accepted by httpconn.c, which keeps slow
 * clients from holding the server (a deadline for each request, caps
 * per peer, room for prompt clients); a connection idle for
 * HTTP_IDLE_TIMEOUT is closed, headers within HTTP_MEMORY_LIMIT, a body
 * of at most QUEUE_PAYLOAD_MAX (else 413); replies not read yet are
 * bounded by http-api.c (HTTP_MAX_SENDING, else 503).
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "conf.h"
#include "evloop.h"
#include "http-int.h"
#include "httplisten.h"
#include "listenaddr.h"
#include "log.h"
#include "mhd.h"
#include "peer.h"
#include "proto.h"
#include "server.h"
#include "spare.h"
#include "vigild.h"
#include "xmalloc.h"

/* libmicrohttpd's own cap: httpconn.c's, and those it closed meanwhile. */
#define HTTP_MAX_CONNECTIONS 512
#define HTTP_IDLE_TIMEOUT 10 /* seconds */
#define HTTP_MEMORY_LIMIT (64 * 1024)

static struct {
	struct MHD_Daemon *d;
	sd_event_source *io;
	sd_event_source *timer;
	sd_event_source *kick; /* runs libmicrohttpd after a resume */
	int fd;
	int is_unix;
	char *unix_path;
	char *token; /* NULL: no token file */
	size_t tokenlen;
} http = { .fd = -1 };

static void http_arm(void);
static struct httpconn *http_conn(struct MHD_Connection *);

/*
 * Compare a token with http_token_file's in a time that depends on
 * neither's contents (nor on where they first differ).
 */
static int
http_token_equal(const char *t, size_t len)
{
	volatile unsigned char d = len != http.tokenlen;
	size_t i;

	for (i = 0; i < http.tokenlen; i++)
		d |= (unsigned char)((i < len ? t[i] : 0) ^ http.token[i]);
	return (d == 0);
}

/* Return 1 if the request carries the token of http_token_file. */
static int
http_has_token(struct MHD_Connection *conn)
{
	const char *h;
	size_t len;

	if (http.token == NULL)
		return (0);
	h = mhd.MHD_lookup_connection_value(
	    conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0)
		return (0);
	h += 7;
	while (*h == ' ')
		h++;
	len = strlen(h);
	return (http_token_equal(h, len));
}

/* Who the peer is and what it may do, from its socket and its token. */
static void
http_peer(struct http_req *req)
{
	const union MHD_ConnectionInfo *ci;
	char addr[56];
	int r;

	req->uid = geteuid();
	req->may_act = http_has_token(req->conn);
	if (http.is_unix) {
		ci = mhd.MHD_get_connection_info(
		    req->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		r = ci != NULL ? peer_rights(ci->connect_fd, &req->uid) : -1;
		if (r == 1)
			req->may_act = 1;
		snprintf(req->who, sizeof(req->who), "http uid %ld",
		    r == -1 ? -1L : (long)req->uid);
		return;
	}
	ci = mhd.MHD_get_connection_info(
	    req->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci != NULL && ci->client_addr != NULL)
		listen_addr_format(ci->client_addr,
		    (socklen_t)sizeof(struct sockaddr_in6), addr, sizeof(addr));
	else
		strlcpy(addr, "?", sizeof(addr));
	snprintf(req->who, sizeof(req->who), "http %s", addr);
}

/*
 * A new request, its headers read: route it and check its rights.
 * Return 0 to read on, or the status of the refusal (answered).
 */
static int
http_begin(struct http_req *req, const char *method, const char *url,
    enum MHD_Result *ret)
{
	const char *cl, *host;
	int status, open;

	host = mhd.MHD_lookup_connection_value(
	    req->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
	if (!http.is_unix &&
	    !listen_addr_host_allowed(host, vigild.conf->http_allowed_hosts)) {
		*ret = http_error(req->conn, 421,
		    "Host \"%.100s\" is not vigild's: an address, localhost "
		    "or a name of http_allowed_hosts is",
		    host);
		return (421);
	}
	req->route = http_route(method, url, &req->name, &status);
	if (req->route == NULL) {
		*ret = status == 405 ?
		    http_error(req->conn, 405, "%s: method %s not allowed", url,
		        method) :
		    http_error(req->conn, 404, "%s: no such path", url);
		return (status);
	}
	http_peer(req);
	open = req->route->open == HTTP_OPEN_ALL ||
	    (req->route->open == HTTP_OPEN_PAGE && http.token != NULL);
	if (!open && !req->may_act && !http.is_unix) {
		*ret = http_error(req->conn, 401,
		    http.token == NULL ? "%s: no http_token_file is set: only "
		                         "/metrics and /healthz answer" :
		                         "%s: a bearer token is needed",
		    url);
		return (401);
	}
	if (req->route->verb != NULL && !req->may_act &&
	    !cmd_is_readonly(req->route->verb)) {
		*ret = http_error(req->conn, 403,
		    "%s: permission denied (%s may only read)", url, req->who);
		return (403);
	}
	cl = mhd.MHD_lookup_connection_value(
	    req->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (cl != NULL && strtoull(cl, NULL, 10) > HTTP_MAX_BODY) {
		*ret = http_error(
		    req->conn, 413, "body larger than %d bytes", HTTP_MAX_BODY);
		return (413);
	}
	return (0);
}

static enum MHD_Result
http_access(void *cls, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *upload,
    size_t *upload_size, void **con_cls)
{
	struct http_req *req = *con_cls;
	enum MHD_Result ret = MHD_YES;

	(void)cls;
	(void)version;
	if (req == NULL) {
		req = http_req_new(conn);
		*con_cls = req;
		if (http_begin(req, method, url, &ret) != 0)
			req->answered = 1;
		httpconn_request(http_conn(conn), req->may_act);
		return (ret);
	}
	if (req->answered) {
		*upload_size = 0;
		return (MHD_YES);
	}
	if (*upload_size > 0) {
		if (req->too_big ||
		    *upload_size >
		        HTTP_MAX_BODY - proto_buf_pending(&req->body)) {
			req->too_big = 1;
			proto_buf_clear(&req->body);
		} else
			proto_buf_add(&req->body, upload, *upload_size);
		*upload_size = 0;
		return (MHD_YES);
	}
	return (http_answer(req));
}

/* The record of conn's connection (httpconn.c), or NULL. */
static struct httpconn *
http_conn(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci;

	ci = mhd.MHD_get_connection_info(
	    conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return (ci != NULL ? ci->socket_context : NULL);
}

/* A connection starts or ends: its record, from httpconn.c, goes too. */
static void
http_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
    enum MHD_ConnectionNotificationCode toe)
{
	(void)cls;
	(void)conn;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED)
		*socket_context = httpconn_adding();
	else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		httpconn_gone(*socket_context);
		*socket_context = NULL;
	}
}

/* Give an accepted connection to libmicrohttpd: 0, or -1 (fd closed). */
static int
http_add(int fd, const struct sockaddr *sa, socklen_t len)
{
	return (
	    mhd.MHD_add_connection(http.d, fd, sa, len) == MHD_YES ? 0 : -1);
}

/* Run libmicrohttpd soon, from the loop. */
static void
http_kick(void)
{
	if (http.kick != NULL)
		(void)sd_event_source_set_enabled(http.kick, SD_EVENT_ONESHOT);
}

static void
http_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct http_req *req = *con_cls;

	(void)cls;
	(void)toe;
	if (req == NULL)
		return;
	httpconn_idle(http_conn(conn));
	http_req_free(req);
	*con_cls = NULL;
}

static void __attribute__((format(printf, 2, 0)))
http_log(void *cls, const char *fmt, va_list ap)
{
	char *s;

	(void)cls;
	if (vasprintf(&s, fmt, ap) == -1)
		return;
	s[strcspn(s, "\n")] = '\0';
	log_debug("http: %s", s);
	free(s);
}

static void
http_step(void)
{
	(void)mhd.MHD_run(http.d);
	/* A connection on the spare descriptor may have been closed. */
	spare_give();
	http_arm();
}

static int
http_io(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	(void)s;
	(void)fd;
	(void)revents;
	(void)arg;
	http_step();
	return (0);
}

static int
http_kicked(sd_event_source *s, void *arg)
{
	(void)s;
	(void)arg;
	http_step();
	return (0);
}

static int
http_timer(sd_event_source *s, uint64_t usec, void *arg)
{
	(void)s;
	(void)usec;
	(void)arg;
	http_step();
	return (0);
}

/* Set the timer to libmicrohttpd's next timeout, or turn it off. */
static void
http_arm(void)
{
	MHD_UNSIGNED_LONG_LONG ms;
	uint64_t now;

	if (mhd.MHD_get_timeout(http.d, &ms) != MHD_YES) {
		if (http.timer != NULL)
			(void)sd_event_source_set_enabled(
			    http.timer, SD_EVENT_OFF);
		return;
	}
	if (ms > 24ULL * 3600 * 1000)
		ms = 24ULL * 3600 * 1000;
	(void)sd_event_now(evloop_event(), CLOCK_MONOTONIC, &now);
	now += ms * 1000;
	evloop_timer_at(
	    &http.timer, CLOCK_MONOTONIC, now, 10000, http_timer, NULL);
}

/*
 * Start the HTTP server of vigil.conf's http_listen, if set; each command
 * goes to command.  Return 0, or -1 with *cause set.
 */
int
http_open(server_command_fn command, char **cause)
{
	const union MHD_DaemonInfo *di;
	struct listen_addr a;
	int r;

	if (vigild.conf->http_listen == NULL)
		return (0);
	if (listen_addr_parse(vigild.conf->http_listen, &a, cause) == -1 ||
	    mhd_load(cause) == -1)
		return (-1);
	if (vigild.conf->http_token_file != NULL &&
	    http_token_read(vigild.conf->http_token_file, &http.token,
	        &http.tokenlen, cause) == -1)
		return (-1);
	http.is_unix = a.ss.ss_family == AF_UNIX;
	http_api_open(command, http_kick, http.is_unix, http.token != NULL);
	if ((http.fd = http_listen_open(
	         &a, HTTP_MAX_CONNECTIONS, &http.unix_path, cause)) == -1)
		return (-1);
	http.d = mhd.MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
	        MHD_USE_ERROR_LOG | MHD_USE_NO_LISTEN_SOCKET,
	    0, NULL, NULL, http_access, NULL, MHD_OPTION_EXTERNAL_LOGGER,
	    http_log, NULL, MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned int)HTTP_MAX_CONNECTIONS, MHD_OPTION_NOTIFY_CONNECTION,
	    http_notify, NULL, MHD_OPTION_CONNECTION_TIMEOUT,
	    (unsigned int)HTTP_IDLE_TIMEOUT, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
	    (size_t)HTTP_MEMORY_LIMIT, MHD_OPTION_NOTIFY_COMPLETED,
	    http_completed, NULL, MHD_OPTION_END);
	if (http.d == NULL ||
	    (di = mhd.MHD_get_daemon_info(http.d, MHD_DAEMON_INFO_EPOLL_FD)) ==
	        NULL) {
		xasprintf(cause, "http_listen %s: libmicrohttpd did not start",
		    vigild.conf->http_listen);
		return (-1);
	}
	r = sd_event_add_io(
	    evloop_event(), &http.io, di->epoll_fd, EPOLLIN, http_io, NULL);
	if (r >= 0)
		r = sd_event_add_defer(
		    evloop_event(), &http.kick, http_kicked, NULL);
	if (r >= 0)
		r = sd_event_source_set_enabled(http.kick, SD_EVENT_OFF);
	if (r < 0) {
		xasprintf(cause, "http: sd-event: %s", strerror(-r));
		return (-1);
	}
	http_arm();
	return (
	    httpconn_open(http.fd, http.is_unix, http_add, http_kick, cause));
}

/*
 * Stop the HTTP server: a request still waiting for its command is
 * answered 503 (its wait is dropped), every connection is closed.
 */
void
http_close(void)
{
	httpconn_close();
	if (http.d != NULL) {
		http_api_close();
		mhd.MHD_stop_daemon(http.d);
		http.d = NULL;
	}
	http.io = sd_event_source_disable_unref(http.io);
	http.kick = sd_event_source_disable_unref(http.kick);
	http.timer = sd_event_source_disable_unref(http.timer);
	if (http.fd != -1)
		close(http.fd);
	http.fd = -1;
	if (http.unix_path != NULL)
		(void)unlink(http.unix_path);
	free(http.unix_path);
	http.unix_path = NULL;
	if (http.token != NULL)
		explicit_bzero(http.token, http.tokenlen);
	free(http.token);
	http.token = NULL;
	/*
	 * libmicrohttpd (and gnutls, with its thread-local storage) stays
	 * loaded until the process ends: this runs only at vigild's exit,
	 * where unloading gains nothing, and LeakSanitizer's check after it
	 * crashed now and then (under load) walking what dlclose had freed.
	 */
}
