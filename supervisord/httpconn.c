/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The connections of the HTTP server (http.c), from accept to close:
 * vigild accepts them itself and hands each to libmicrohttpd, so that no
 * client, however slow, can hold the server from others.
 *
 * Deadline.  A connection must send a whole request line and headers
 * within HTTPCONN_TIMEOUT of its accept (or of the end of its
 * previous request); a request without control rights must also end
 * within it.  A byte now and then does not reset it (libmicrohttpd's
 * idle timeout would).
 *
 * Room.  At most HTTPCONN_MAX connections at once.  A connection still
 * waiting for its headers after HTTPCONN_SLOW is slow: when the server is
 * full, the oldest slow connection is closed for the newcomer, so that a
 * client that sends its request at once is served even while others hold
 * every slot with a trickle of bytes.  A peer (a TCP address, an
 * IPv6 /64, a unix peer's uid) holds at most HTTPCONN_PEER_SLOW slow
 * connections: at its next one, the oldest are closed.  A unix peer with
 * control rights (SO_PEERCRED, as on the control socket) is never closed
 * for room.  With every slot taken by connections that are not slow, a
 * newcomer is answered 503 at once.  A connection closed before its
 * first request is answered 408; a newcomer turned away 503, in one
 * write that a fresh socket always takes.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <netinet/in.h>

#include <bsd/sys/queue.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "duration.h"
#include "evloop.h"
#include "log.h"
#include "peer.h"
#include "server.h"
#include "spare.h"
#include "xmalloc.h"

/* Connections at once. */
#define HTTPCONN_MAX 256
/* A request's headers, and one without control rights, within (usec). */
#define HTTPCONN_TIMEOUT (10 * DURATION_USEC_PER_SEC)
/* Waiting this long for its headers, a connection is slow (usec). */
#define HTTPCONN_SLOW (2 * DURATION_USEC_PER_SEC)
/* Slow connections a peer may hold at once. */
#define HTTPCONN_PEER_SLOW 32
/* After accept ran out of descriptors, try again after this (usec). */
#define HTTPCONN_ACCEPT_RETRY DURATION_USEC_PER_SEC
/* Connections accepted in one go before libmicrohttpd reads them. */
#define HTTPCONN_BATCH 8

struct httpconn {
	int fd;
	int trusted;            /* a unix peer with control rights */
	int head;               /* waiting for a request's headers */
	int served;             /* a request of it ended */
	int cut;                /* closed here; libmicrohttpd has yet to see */
	unsigned char peer[16]; /* address, IPv6 /64 or uid */
	uint64_t since;         /* monotonic usec: the wait began */
	sd_event_source *deadline;
	TAILQ_ENTRY(httpconn) entry;
};

static struct {
	int fd;
	int is_unix;
	httpconn_add_fn add;
	void (*kick)(void);
	sd_event_source *io;
	sd_event_source *retry;
	struct httpconn *adding;
	size_t n; /* not cut */
	unsigned long cut, refused;
	uint64_t logged;
	TAILQ_HEAD(, httpconn) list;
} hc = { .fd = -1 };

static const char httpconn_408[] =
    "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n"
    "Content-Type: application/json\r\nContent-Length: 49\r\n\r\n"
    "{\"error\":\"no whole request in time, or no room\"}\n";
static const char httpconn_503[] =
    "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n"
    "Retry-After: 1\r\nContent-Type: application/json\r\n"
    "Content-Length: 44\r\n\r\n"
    "{\"error\":\"too many connections; try again\"}\n";

static uint64_t
httpconn_now(void)
{
	uint64_t now;

	(void)sd_event_now(evloop_event(), CLOCK_MONOTONIC, &now);
	return (now);
}

/* Log the connections closed and refused, at most every 10 s. */
static void
httpconn_log(void)
{
	uint64_t now = httpconn_now();

	if (hc.logged != 0 && now - hc.logged < 10 * DURATION_USEC_PER_SEC)
		return;
	hc.logged = now;
	log_warnx("http: slow or too many clients: %lu connections closed "
	          "before their request, %lu refused (in all)",
	    hc.cut, hc.refused);
}

/*
 * Close c for libmicrohttpd to see: a 408 first if it is still waiting
 * for its first request (a reply in progress is only cut, and an idle
 * connection closed as libmicrohttpd's idle timeout does).
 */
static void
httpconn_cut(struct httpconn *c)
{
	if (c->cut)
		return;
	if (c->head && !c->served)
		(void)send(c->fd, httpconn_408, sizeof(httpconn_408) - 1,
		    MSG_NOSIGNAL | MSG_DONTWAIT);
	(void)shutdown(c->fd, SHUT_RDWR);
	c->cut = 1;
	c->deadline = sd_event_source_disable_unref(c->deadline);
	hc.n--;
	hc.cut++;
	httpconn_log();
	hc.kick();
}

static int
httpconn_expired(sd_event_source *s, uint64_t usec, void *arg)
{
	struct httpconn *c = arg;

	(void)s;
	(void)usec;
	log_debug("http: a connection sent no whole request in time, closed");
	httpconn_cut(c);
	return (0);
}

/* Arm c's deadline: HTTPCONN_TIMEOUT from now. */
static void
httpconn_arm(struct httpconn *c)
{
	c->since = httpconn_now();
	if (c->deadline != NULL) {
		(void)sd_event_source_set_time(
		    c->deadline, c->since + HTTPCONN_TIMEOUT);
		(void)sd_event_source_set_enabled(
		    c->deadline, SD_EVENT_ONESHOT);
		return;
	}
	if (sd_event_add_time(evloop_event(), &c->deadline, CLOCK_MONOTONIC,
	        c->since + HTTPCONN_TIMEOUT, 100000, httpconn_expired, c) < 0)
		c->deadline = NULL;
}

/* The oldest slow connection (of peer, if not NULL), or NULL. */
static struct httpconn *
httpconn_slowest(const unsigned char *peer, size_t *count)
{
	struct httpconn *c, *old = NULL;
	uint64_t now = httpconn_now();

	*count = 0;
	TAILQ_FOREACH(c, &hc.list, entry) {
		if (c->cut || c->trusted || !c->head ||
		    now - c->since < HTTPCONN_SLOW)
			continue;
		if (peer != NULL && memcmp(c->peer, peer, sizeof(c->peer)) != 0)
			continue;
		(*count)++;
		if (old == NULL || c->since < old->since)
			old = c;
	}
	return (old);
}

/*
 * Make room for n: close its peer's oldest slow connections while it
 * holds too many, and the oldest slow one of all if the server is full.
 * Return 0, or -1 if there is no room.
 */
static int
httpconn_room(const struct httpconn *n)
{
	struct httpconn *old;
	size_t count;

	while (!n->trusted) {
		old = httpconn_slowest(n->peer, &count);
		if (count < HTTPCONN_PEER_SLOW)
			break;
		httpconn_cut(old);
	}
	if (hc.n < HTTPCONN_MAX)
		return (0);
	if ((old = httpconn_slowest(NULL, &count)) == NULL)
		return (-1);
	httpconn_cut(old);
	return (0);
}

/* What names the peer of fd (address ss) for the caps. */
static void
httpconn_peer(struct httpconn *c, const struct sockaddr_storage *ss)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;
	uid_t uid;

	memset(c->peer, 0, sizeof(c->peer));
	if (hc.is_unix) {
		c->trusted = peer_rights(c->fd, &uid) == 1;
		memcpy(c->peer, &uid, sizeof(uid));
	} else if (ss->ss_family == AF_INET)
		memcpy(c->peer, &sin->sin_addr, sizeof(sin->sin_addr));
	else if (ss->ss_family == AF_INET6)
		memcpy(c->peer, &sin6->sin6_addr, 8); /* its /64 */
}

/* A new connection: make room, give it to libmicrohttpd. */
static void
httpconn_new(
    int fd, const struct sockaddr_storage *ss, socklen_t len, int reserve)
{
	struct httpconn *c;

	c = xcalloc(1, sizeof(*c));
	c->fd = fd;
	c->head = 1;
	httpconn_peer(c, ss);
	if (httpconn_room(c) == -1) {
		hc.refused++;
		httpconn_log();
		(void)send(fd, httpconn_503, sizeof(httpconn_503) - 1,
		    MSG_NOSIGNAL | MSG_DONTWAIT);
		close(fd);
		if (reserve)
			spare_give();
		free(c);
		return;
	}
	TAILQ_INSERT_TAIL(&hc.list, c, entry);
	hc.n++;
	httpconn_arm(c);
	hc.adding = c;
	if (hc.add(fd, (const struct sockaddr *)ss, len) == -1 &&
	    hc.adding != NULL) {
		/* Not taken (libmicrohttpd closed fd): forget it. */
		hc.adding = NULL;
		c->cut = 1;
		hc.n--;
		httpconn_gone(c);
	}
	hc.adding = NULL;
}

static int
httpconn_retry(sd_event_source *s, uint64_t usec, void *arg)
{
	(void)s;
	(void)usec;
	(void)arg;
	hc.retry = sd_event_source_disable_unref(hc.retry);
	(void)sd_event_source_set_enabled(hc.io, SD_EVENT_ON);
	return (0);
}

/* Out of descriptors or memory: stop accepting for a while. */
static void
httpconn_pause(int error)
{
	log_warnx("http: not accepting clients for now: %s", strerror(error));
	(void)sd_event_source_set_enabled(hc.io, SD_EVENT_OFF);
	if (hc.retry == NULL &&
	    sd_event_add_time_relative(evloop_event(), &hc.retry,
	        CLOCK_MONOTONIC, HTTPCONN_ACCEPT_RETRY, 100000, httpconn_retry,
	        NULL) < 0)
		hc.retry = NULL;
}

static int
httpconn_accept(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int i, cfd, reserve;

	(void)s;
	(void)revents;
	(void)arg;
	spare_give();
	for (i = 0; i < HTTPCONN_BATCH; i++) {
		len = sizeof(ss);
		memset(&ss, 0, sizeof(ss));
		cfd = spare_accept(fd, (struct sockaddr *)&ss, &len, &reserve);
		if (cfd == -1) {
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM)
				httpconn_pause(errno);
			else if (errno != EAGAIN && errno != EINTR &&
			    errno != ECONNABORTED)
				log_warn("http: accept");
			break;
		}
		httpconn_new(cfd, &ss, len, reserve);
	}
	hc.kick();
	return (0);
}

/*
 * Accept the clients of the listening socket fd (a unix one if is_unix)
 * and give each to add, which returns 0 or -1 (fd closed); kick runs the
 * HTTP server soon.  Return 0, or -1 with *cause set.
 */
int
httpconn_open(
    int fd, int is_unix, httpconn_add_fn add, void (*kick)(void), char **cause)
{
	int r;

	TAILQ_INIT(&hc.list);
	hc.fd = fd;
	hc.is_unix = is_unix;
	hc.add = add;
	hc.kick = kick;
	r = sd_event_add_io(
	    evloop_event(), &hc.io, fd, EPOLLIN, httpconn_accept, NULL);
	if (r < 0) {
		xasprintf(cause, "http: sd-event: %s", strerror(-r));
		return (-1);
	}
	return (0);
}

/*
 * The connection being added (inside add), for the HTTP server to
 * keep; NULL outside.
 */
struct httpconn *
httpconn_adding(void)
{
	struct httpconn *c = hc.adding;

	hc.adding = NULL;
	return (c);
}

/*
 * The headers of a request of c are in: with control rights (may_act),
 * it has no deadline until it ends; without, it keeps its deadline.
 */
void
httpconn_request(struct httpconn *c, int may_act)
{
	if (c == NULL || c->cut)
		return;
	c->head = 0;
	if (may_act || c->trusted)
		c->deadline = sd_event_source_disable_unref(c->deadline);
}

/* A request of c ended: a deadline again for the next one. */
void
httpconn_idle(struct httpconn *c)
{
	if (c == NULL || c->cut)
		return;
	c->head = 1;
	c->served = 1;
	httpconn_arm(c);
}

/* c is closed (libmicrohttpd closed its socket): forget it. */
void
httpconn_gone(struct httpconn *c)
{
	if (c == NULL)
		return;
	if (!c->cut)
		hc.n--;
	c->deadline = sd_event_source_disable_unref(c->deadline);
	TAILQ_REMOVE(&hc.list, c, entry);
	/* The socket may still be open: http.c gives the spare back after. */
	free(c);
}

/* Stop accepting; the connections are closed by their server. */
void
httpconn_close(void)
{
	hc.io = sd_event_source_disable_unref(hc.io);
	hc.retry = sd_event_source_disable_unref(hc.retry);
}
