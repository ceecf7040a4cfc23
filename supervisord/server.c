/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The control socket: accept clients, read framed requests without ever
 * blocking, hand complete commands to cmd.c, and write replies from a
 * per-client buffer.  A client that sends garbage, too much, or stops
 * reading its replies is dropped; nothing else is affected.  A client left
 * waiting (CMD_WAIT) is parked: the module that keeps it waiting
 * (waiters.c, a follow of joblog.c) gets a call if it goes away.  The
 * commands are reached only through the function server_open() was given
 * (the command table's dispatcher): this file knows nothing of them.
 *
 * A client may also be a sink (server_client_attach()): a request that came
 * another way (http-api.c) and that the same commands answer.  Its replies
 * go to the sink's functions instead of a socket; it is parked and unparked
 * as any other, and it is not counted against the limits below (its own
 * front end keeps its own).
 *
 * When vigild has no descriptor left (its jobs took them all), the spare
 * ones (spare.c) are closed to accept one client, and opened again once
 * that client goes, so that the socket always answers, one client at a
 * time.
 *
 * Peers without control rights (server_client_may_act()) share what is left
 * after a reserve kept for the others, hold at most a few connections and
 * waits per uid, and send small requests: one user of a world-writable
 * socket cannot lock root out, nor make vigild's memory grow.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <bsd/sys/queue.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "cmd.h"
#include "evloop.h"
#include "log.h"
#include "monotime.h"
#include "peer.h"
#include "queue.h"
#include "server.h"
#include "spare.h"
#include "xmalloc.h"

/*
 * The socket and its clients come before the jobs' timers, output and
 * cgroup events (sd-event runs one source per turn, the most urgent
 * first): with a hundred jobs crash-looping on a busy machine, each turn
 * that starts one waits for its fork, and a ping queued behind them all
 * took most of a second.  An operator's stop must not wait for them.
 */
#define SERVER_PRIORITY (SD_EVENT_PRIORITY_NORMAL - 10)
/* A client whose unread replies pass this is dropped. */
#define SERVER_MAX_OUT (8 * 1024 * 1024)
/* At most this many clients at once; more wait in the listen backlog. */
#define SERVER_MAX_CLIENTS 512
/* Of those, this many are kept for peers with control rights. */
#define SERVER_RESERVED_CLIENTS 64
/* A uid without control rights: connections at once (more are refused). */
#define SERVER_MAX_UID_CLIENTS 32
/* A uid without control rights: requests left waiting (wait) at once. */
#define SERVER_MAX_UID_WAITS 4
/* The largest request (PROTO_COMMAND payload) of a peer without rights. */
#define SERVER_MAX_RO_REQUEST (64 * 1024)
/* A client must send a complete request within this (microseconds). */
#define SERVER_REQUEST_TIMEOUT (10 * 1000000ULL)
/* Refusals of connections are logged at most this often. */
#define SERVER_REFUSE_LOG_EVERY (10 * 1000000ULL)
/* After accept ran out of descriptors, try again after this. */
#define SERVER_ACCEPT_RETRY (1000000ULL)

struct client {
	uint64_t id;
	int fd;
	struct peer peer; /* who it is, as the kernel saw it at connect */
	pid_t pid;
	sd_event_source *io;
	struct proto_buf in;
	struct proto_buf out;
	struct proto_buf data;  /* PROTO_DATA bytes for the next command */
	int has_data;           /* a PROTO_DATA came, maybe an empty one */
	int done;               /* PROTO_EXIT queued: close once flushed */
	int busy;               /* a command is running (CMD_WAIT) */
	int rdhup;              /* the peer shut down its side for writing */
	int may_act;            /* control rights, decided at connect */
	int reserve;            /* fd is one of the spare descriptors */
	server_gone_fn gone;    /* parked: told if the client goes away */
	void *park;             /* parked: the record of who parked it */
	sd_event_source *timer; /* drops a client slow to send its request */
	const struct server_sink *sink; /* a sink client: its replies */
	void *sink_arg;
	char who[64]; /* "uid N", or what the sink's owner named */
	TAILQ_ENTRY(client) entry;
};

static void server_client_free(struct client *);
static void server_listen_pause(const char *);
static void server_client_unpark(struct client *);

static server_command_fn server_command;
static size_t server_nclients;
static TAILQ_HEAD(server_client_list,
    client) server_clients = TAILQ_HEAD_INITIALIZER(server_clients);
static int server_listen_fd = -1; /* control.sock */
static sd_event_source *server_listen_src;
static uint64_t server_next_id; /* the last client's id */
static int server_paused;
static sd_event_source *server_retry;

static void
server_client_events(struct client *c)
{
	uint32_t ev = 0;

	if (c->io == NULL)
		return;
	if (!c->done && !c->busy)
		ev |= EPOLLIN;
	if (proto_buf_pending(&c->out) > 0)
		ev |= EPOLLOUT;
	/*
	 * A waiting client is still watched, to notice it hang up (EPOLLHUP
	 * is always reported); a half-close alone does not end its wait.
	 */
	if (c->busy && !c->rdhup)
		ev |= EPOLLRDHUP;
	(void)sd_event_source_set_io_events(c->io, ev);
}

/* Write as much of the reply as the socket takes now. */
static int
server_client_flush(struct client *c)
{
	ssize_t n;

	while (proto_buf_pending(&c->out) > 0) {
		n = write(c->fd, c->out.data + c->out.off,
		    proto_buf_pending(&c->out));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			break;
		if (n == -1)
			return (-1);
		proto_buf_consume(&c->out, (size_t)n);
	}
	if (c->done && proto_buf_pending(&c->out) == 0)
		return (-1);
	server_client_events(c);
	return (0);
}

/*
 * A PROTO_DATA frame: keep its bytes for the command that follows.  From
 * a peer without control rights, or past QUEUE_PAYLOAD_MAX in all, the
 * request fails (only this one).  Return 0,
 * or -1 when the client was finished.
 */
static int
server_client_data(struct client *c, const uint8_t *p, size_t len)
{
	/* Only a peer that may enqueue gets to make vigild hold bytes. */
	if (!c->may_act) {
		server_client_printf(c, PROTO_STDERR,
		    "vigild: permission denied: payload data needs control "
		    "rights\n");
		server_client_finish(c, CMD_EXIT_FAILED);
		return (-1);
	}
	if (len > QUEUE_PAYLOAD_MAX - proto_buf_pending(&c->data)) {
		proto_buf_clear(&c->data);
		c->has_data = 0;
		server_client_printf(c, PROTO_STDERR,
		    "vigild: payload larger than 1 MiB (%d bytes)\n",
		    QUEUE_PAYLOAD_MAX);
		server_client_finish(c, CMD_EXIT_FAILED);
		return (-1);
	}
	proto_buf_add(&c->data, p, len);
	c->has_data = 1;
	return (0);
}

/*
 * Run a command with the data that came before it, then forget that.  A
 * client that asked for it first gets PROTO_ACK, written at once: the
 * command may keep it waiting for long, vigild has answered.
 */
static void
server_client_command(struct client *c, uint32_t flags, int argc, char **argv)
{
	const uint8_t *data = NULL;

	if (flags & PROTO_F_ACK) {
		server_client_write(c, PROTO_ACK, NULL, 0);
		(void)server_client_flush(c);
	}

	if (c->has_data)
		data = c->data.data != NULL ? c->data.data + c->data.off :
		                              (const uint8_t *)"";
	server_command(c, flags, argc, argv, data, proto_buf_pending(&c->data));
	proto_buf_clear(&c->data);
	c->has_data = 0;
}

/*
 * A peer without control rights may not make vigild buffer a request
 * larger than SERVER_MAX_RO_REQUEST: refuse it from its header.  Return 0,
 * or -1 when the client was finished.
 */
static int
server_client_check_size(struct client *c)
{
	struct proto_header h;

	if (c->may_act || !proto_peek(&c->in, &h) ||
	    h.version != PROTO_VERSION || h.len <= SERVER_MAX_RO_REQUEST)
		return (0);
	server_client_printf(c, PROTO_STDERR,
	    "vigild: request too large (%lu bytes; uid %ld may send at most "
	    "%d)\n",
	    (unsigned long)h.len, (long)c->peer.uid, SERVER_MAX_RO_REQUEST);
	server_client_finish(c, CMD_EXIT_FAILED);
	return (-1);
}

/* Decode and run every complete request in the input buffer. */
static int
server_client_parse(struct client *c)
{
	struct proto_header h;
	const uint8_t *payload;
	uint32_t flags;
	char **argv;
	int argc, r, i;

	while (!c->done && !c->busy) {
		if (server_client_check_size(c) == -1)
			return (0);
		if ((r = proto_next(&c->in, &h, &payload)) == 0)
			return (0);
		if (r == 1 && h.type == PROTO_DATA) {
			if (server_client_data(c, payload, h.len) == -1)
				return (0);
			proto_buf_consume(&c->in, PROTO_HEADER_SIZE + h.len);
			continue;
		}
		if (r == -1 && h.version != PROTO_VERSION) {
			/*
			 * Answer in our own version: the client sees the
			 * mismatch and can say so (vigilctl exits 76).
			 */
			server_client_printf(c, PROTO_STDERR,
			    "vigild speaks protocol version %d, not %u\n",
			    PROTO_VERSION, (unsigned int)h.version);
			server_client_finish(c, 76);
			return (0);
		}
		if (r == -1 || h.type != PROTO_COMMAND ||
		    proto_command_unpack(
		        payload, h.len, &flags, &argc, &argv) == -1) {
			log_debug("client %llu: malformed request, dropped",
			    (unsigned long long)c->id);
			return (-1);
		}
		proto_buf_consume(&c->in, PROTO_HEADER_SIZE + h.len);
		c->timer = sd_event_source_disable_unref(c->timer);
		server_client_command(c, flags, argc, argv);
		for (i = 0; i < argc; i++)
			free(argv[i]);
		free(argv);
	}
	return (0);
}

static int
server_client_read(struct client *c)
{
	uint8_t *p;
	ssize_t n;
	size_t room;

	for (;;) {
		/*
		 * Never buffer more than one message of the largest size: a
		 * read stops at that, even when a message follows the one
		 * being completed (PROTO_DATA frames come back to back).
		 */
		room = PROTO_HEADER_SIZE + PROTO_MAX_PAYLOAD -
		    proto_buf_pending(&c->in);
		if (room == 0)
			return (-1);
		if (room > 4096)
			room = 4096;
		p = proto_buf_reserve(&c->in, room);
		n = read(c->fd, p, room);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			break;
		if (n <= 0)
			return (-1);
		proto_buf_commit(&c->in, (size_t)n);
		if (server_client_parse(c) == -1)
			return (-1);
		if (c->done || c->busy)
			break;
	}
	return (0);
}

static int
server_client_io(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	struct client *c = arg;

	if (c->busy && (revents & (EPOLLHUP | EPOLLERR))) {
		server_client_free(c);
		return (0);
	}
	if (c->busy && (revents & EPOLLRDHUP)) {
		c->rdhup = 1;
		server_client_events(c);
		return (0);
	}
	if ((revents & EPOLLIN) && server_client_read(c) == -1) {
		server_client_free(c);
		return (0);
	}
	if (server_client_flush(c) == -1)
		server_client_free(c);
	return (0);
}

/* A client that has not sent a complete request in time is dropped. */
static int
server_client_idle(sd_event_source *s, uint64_t usec, void *arg)
{
	struct client *c = arg;

	c->timer = sd_event_source_disable_unref(c->timer);
	if (c->busy || c->done)
		return (0);
	log_debug("client %llu: no complete request in time, dropped",
	    (unsigned long long)c->id);
	server_client_free(c);
	return (0);
}

/*
 * Why the new client n, of a peer without control rights, is refused
 * (the message for it, in buf), or NULL: its uid holds
 * SERVER_MAX_UID_CLIENTS connections already, or such peers hold every
 * slot but the SERVER_RESERVED_CLIENTS kept for peers with control rights.
 */
static const char *
server_client_over_cap(const struct client *n, char *buf, size_t len)
{
	const struct client *c;
	size_t nro = 0, nuid = 0;

	if (n->may_act)
		return (NULL);
	TAILQ_FOREACH(c, &server_clients, entry) {
		if (c->may_act)
			continue;
		nro++;
		if (c->peer.uid == n->peer.uid)
			nuid++;
	}
	if (nuid >= SERVER_MAX_UID_CLIENTS)
		snprintf(buf, len,
		    "vigild: too many connections from uid %ld (at most %d "
		    "at once); try again later\n",
		    (long)n->peer.uid, SERVER_MAX_UID_CLIENTS);
	else if (nro >= SERVER_MAX_CLIENTS - SERVER_RESERVED_CLIENTS)
		snprintf(buf, len,
		    "vigild: too many connections from users without control "
		    "rights (at most %d at once); try again later\n",
		    SERVER_MAX_CLIENTS - SERVER_RESERVED_CLIENTS);
	else
		return (NULL);
	return (buf);
}

/*
 * Turn a client away at once: msg on its standard error, exit code
 * EX_UNAVAILABLE, in one write that a fresh socket always takes (what it
 * does not take is lost: vigild never waits for such a client).  The
 * caller closes the connection.
 */
static void
server_client_refuse(const struct client *c, const char *msg)
{
	static uint64_t logged;
	static unsigned long refused;
	struct proto_buf b;
	int32_t code = EX_UNAVAILABLE;

	refused++;
	if (monotime_due(&logged, SERVER_REFUSE_LOG_EVERY))
		log_warnx("uid %ld: too many connections, refused "
		          "(%lu refused in all)",
		    (long)c->peer.uid, refused);
	proto_buf_init(&b);
	proto_append(&b, PROTO_STDERR, msg, strlen(msg));
	proto_append(&b, PROTO_EXIT, &code, sizeof(code));
	(void)send(c->fd, b.data, b.len, MSG_NOSIGNAL | MSG_DONTWAIT);
	proto_buf_clear(&b);
}

/* Close the fd of a client not kept, and give back the spare if it was. */
static void
server_client_drop_fd(int cfd, int reserve)
{
	close(cfd);
	if (reserve)
		spare_give();
}

static void
server_client_add(int cfd, const struct ucred *cred, int reserve)
{
	struct client *c;
	const char *why;
	char buf[256];
	int r;

	c = xcalloc(1, sizeof(*c));
	c->id = ++server_next_id;
	c->fd = cfd;
	c->peer.uid = cred->uid;
	c->peer.gid = cred->gid;
	c->pid = cred->pid;
	c->reserve = reserve;
	snprintf(c->who, sizeof(c->who), "uid %ld", (long)c->peer.uid);
	peer_groups(cfd, &c->peer);
	c->may_act = peer_may_act(&c->peer);
	if ((why = server_client_over_cap(c, buf, sizeof(buf))) != NULL) {
		server_client_refuse(c, why);
		server_client_drop_fd(cfd, reserve);
		peer_clear(&c->peer);
		free(c);
		return;
	}
	proto_buf_init(&c->in);
	proto_buf_init(&c->out);
	proto_buf_init(&c->data);
	r = sd_event_add_io(
	    evloop_event(), &c->io, cfd, EPOLLIN, server_client_io, c);
	if (r >= 0)
		(void)sd_event_source_set_priority(c->io, SERVER_PRIORITY);
	if (r >= 0)
		r = sd_event_add_time_relative(evloop_event(), &c->timer,
		    CLOCK_MONOTONIC, SERVER_REQUEST_TIMEOUT, 100000,
		    server_client_idle, c);
	if (r < 0) {
		log_warnx("client %llu: %s, dropped", (unsigned long long)c->id,
		    strerror(-r));
		c->io = sd_event_source_disable_unref(c->io);
		server_client_drop_fd(cfd, reserve);
		proto_buf_clear(&c->in);
		proto_buf_clear(&c->out);
		peer_clear(&c->peer);
		free(c);
		return;
	}
	TAILQ_INSERT_TAIL(&server_clients, c, entry);
	if (++server_nclients >= SERVER_MAX_CLIENTS)
		server_listen_pause("too many clients");
}

static int
server_accept(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int cfd, reserve;

	spare_give();
	while (!server_paused) {
		cfd = spare_accept(fd, NULL, NULL, &reserve);
		if (cfd == -1) {
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM)
				server_listen_pause(strerror(errno));
			else if (errno != EAGAIN && errno != EINTR &&
			    errno != ECONNABORTED)
				log_warn("accept");
			return (0);
		}
		if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) ==
		    -1) {
			log_warn("SO_PEERCRED");
			server_client_drop_fd(cfd, reserve);
			continue;
		}
		server_client_add(cfd, &cred, reserve);
	}
	return (0);
}

static void
server_listen_resume(void)
{
	if (!server_paused || server_nclients >= SERVER_MAX_CLIENTS)
		return;
	server_paused = 0;
	server_retry = sd_event_source_disable_unref(server_retry);
	(void)sd_event_source_set_enabled(server_listen_src, SD_EVENT_ON);
	log_info("accepting clients again");
}

static int
server_listen_retry(sd_event_source *s, uint64_t usec, void *arg)
{
	server_retry = sd_event_source_disable_unref(server_retry);
	spare_give();
	server_listen_resume();
	return (0);
}

/*
 * Stop accepting for a while (out of descriptors, or too many clients):
 * new clients wait in the listen backlog instead of making the loop spin.
 * Accepting resumes when a client leaves, or after SERVER_ACCEPT_RETRY.
 */
static void
server_listen_pause(const char *why)
{
	if (server_paused)
		return;
	server_paused = 1;
	log_warnx("not accepting clients for now: %s", why);
	(void)sd_event_source_set_enabled(server_listen_src, SD_EVENT_OFF);
	if (sd_event_add_time_relative(evloop_event(), &server_retry,
	        CLOCK_MONOTONIC, SERVER_ACCEPT_RETRY, 100000,
	        server_listen_retry, NULL) < 0)
		server_retry = NULL;
}

static void
server_client_free(struct client *c)
{
	server_client_unpark(c);
	TAILQ_REMOVE(&server_clients, c, entry);
	c->io = sd_event_source_disable_unref(c->io);
	server_client_drop_fd(c->fd, c->reserve);
	proto_buf_clear(&c->in);
	proto_buf_clear(&c->out);
	proto_buf_clear(&c->data);
	peer_clear(&c->peer);
	free(c);
	server_nclients--;
	server_listen_resume();
}

/*
 * Queue a message to a client.  A client that has let more than
 * SERVER_MAX_OUT bytes pile up is marked to be dropped.
 */
void
server_client_write(
    struct client *c, enum proto_type type, const void *p, size_t n)
{
	if (c->done)
		return;
	if (c->sink != NULL) {
		c->sink->write(c->sink_arg, type, p, n);
		return;
	}
	if (proto_buf_pending(&c->out) > SERVER_MAX_OUT) {
		log_warnx("client %llu: not reading its replies, dropped",
		    (unsigned long long)c->id);
		c->done = 1;
		proto_buf_clear(&c->out);
		(void)shutdown(c->fd, SHUT_RDWR);
		server_client_events(c);
		return;
	}
	while (n > PROTO_MAX_PAYLOAD) {
		proto_append(&c->out, type, p, PROTO_MAX_PAYLOAD);
		p = (const char *)p + PROTO_MAX_PAYLOAD;
		n -= PROTO_MAX_PAYLOAD;
	}
	proto_append(&c->out, type, p, n);
	server_client_events(c);
}

/* End a reply with an exit code; the connection closes once flushed. */
void
server_client_finish(struct client *c, int code)
{
	int32_t v = code;

	if (c->sink != NULL) {
		if (!c->done) {
			c->done = 1;
			c->busy = 0;
			c->sink->finish(c->sink_arg, code);
		}
		return;
	}
	server_client_write(c, PROTO_EXIT, &v, sizeof(v));
	c->timer = sd_event_source_disable_unref(c->timer);
	c->done = 1;
	c->busy = 0;
	server_client_events(c);
}

/* Tell whoever parked the client that it goes (its waits, its follow). */
static void
server_client_unpark(struct client *c)
{
	server_gone_fn gone = c->gone;

	c->gone = NULL;
	if (gone != NULL)
		gone(c);
	c->park = NULL;
	c->timer = sd_event_source_disable_unref(c->timer);
	c->busy = 0;
}

/*
 * Park the client: it stays connected without reading requests (a
 * command returned CMD_WAIT) until its reply ends.  If it goes away
 * first, or may not wait, gone(c) is called once; park is the caller's
 * record, returned by server_client_parked().  gone NULL unparks the
 * client without a call.  A client parked with park NULL (a follow) ends
 * with exit 0 when vigild closes.
 */
void
server_client_park(struct client *c, server_gone_fn gone, void *park)
{
	c->gone = gone;
	c->park = park;
	c->busy = gone != NULL;
	server_client_events(c);
}

/* The record the client was parked with, or NULL. */
void *
server_client_parked(const struct client *c)
{
	return (c->park);
}

/*
 * A command left the client waiting (CMD_WAIT).  Return 0 if it may stay
 * so: it has control rights, or its uid has fewer than
 * SERVER_MAX_UID_WAITS other requests waiting.  Otherwise tell the client,
 * drop its waits and return -1; the caller then finishes the reply.
 */
int
server_client_may_wait(struct client *c)
{
	const struct client *o;
	int n = 0;

	if (c->may_act)
		return (0);
	TAILQ_FOREACH(o, &server_clients, entry) {
		if (o != c && o->busy && !o->done && !o->may_act &&
		    o->peer.uid == c->peer.uid)
			n++;
	}
	if (n < SERVER_MAX_UID_WAITS)
		return (0);
	server_client_printf(c, PROTO_STDERR,
	    "vigild: too many waiting requests from uid %ld (at most %d at "
	    "once); try again later\n",
	    (long)c->peer.uid, SERVER_MAX_UID_WAITS);
	server_client_unpark(c);
	return (-1);
}

/* How logs name the client: "uid N", or what its sink's owner said. */
const char *
server_client_who(const struct client *c)
{
	return (c->who);
}

/* Return the uid of the client's peer. */
uid_t
server_client_uid(const struct client *c)
{
	return (c->peer.uid);
}

/*
 * Return 1 if the peer may run commands that change state: root, the user
 * vigild runs as, and processes that had socket_group among their groups
 * when they connected (SO_PEERCRED, SO_PEERGROUPS).  Anyone else who can
 * reach the socket (socket_mode decides who can) may only read.
 */
int
server_client_may_act(const struct client *c)
{
	return (c->may_act);
}

/* Send formatted text to a client right away (outside a command's reply). */
void
server_client_printf(
    struct client *c, enum proto_type type, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n == -1)
		fatal("vasprintf");
	server_client_write(c, type, s, (size_t)n);
	free(s);
}

/* Keep the client connected until vigild exits (shutdown). */
void
server_client_hold(struct client *c)
{
	c->busy = 1;
	server_client_events(c);
}

/*
 * A client whose replies go to sink (with arg), for a request that came
 * another way: may_act are its control rights, uid is recorded as the
 * author of what it changes, who names it in logs.  Its owner runs its
 * command with the server_command_fn it was given, and ends it with
 * server_client_detach(), after sink->finish or, when the request went
 * away, before.
 */
struct client *
server_client_attach(const struct server_sink *sink, void *arg, int may_act,
    uid_t uid, const char *who)
{
	struct client *c;

	c = xcalloc(1, sizeof(*c));
	c->id = ++server_next_id;
	c->fd = -1;
	c->peer.uid = uid;
	c->peer.gid = (gid_t)-1;
	c->may_act = may_act;
	c->sink = sink;
	c->sink_arg = arg;
	strlcpy(c->who, who, sizeof(c->who));
	proto_buf_init(&c->in);
	proto_buf_init(&c->out);
	proto_buf_init(&c->data);
	return (c);
}

/* A sink client goes: whoever keeps it waiting is told; it is freed. */
void
server_client_detach(struct client *c)
{
	if (c == NULL)
		return;
	c->done = 1;
	server_client_unpark(c);
	free(c);
}

/*
 * Create the control socket at path.  The caller holds vigild.lock, so a
 * file already there is a stale socket of a dead vigild: it is unlinked
 * (unlink does not follow a symlink).  The socket is created under a
 * umask that leaves it no wider than mode, so there is no window in which
 * others could connect.  Each request goes to command.  Return 0, or -1
 * with *cause set.
 */
int
server_open(const char *path, int mode, gid_t gid, server_command_fn command,
    char **cause)
{
	struct sockaddr_un sun;
	mode_t old;
	int fd, r;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		xasprintf(cause, "%s: socket path too long", path);
		return (-1);
	}
	strlcpy(sun.sun_path, path, sizeof(sun.sun_path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1) {
		xasprintf(cause, "socket: %s", strerror(errno));
		return (-1);
	}
	if (unlink(path) == -1 && errno != ENOENT)
		log_warn("unlink %s", path);
	old = umask(0777 & ~(mode_t)mode);
	r = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	if (r == -1 ||
	    (gid != (gid_t)-1 && chown(path, (uid_t)-1, gid) == -1) ||
	    chmod(path, (mode_t)mode) == -1 || listen(fd, 128) == -1) {
		xasprintf(cause, "%s: %s", path, strerror(errno));
		close(fd);
		return (-1);
	}
	server_listen_fd = fd;
	server_command = command;
	spare_give();
	evloop_io(&server_listen_src, fd, EPOLLIN, server_accept, NULL);
	(void)sd_event_source_set_priority(server_listen_src, SERVER_PRIORITY);
	return (0);
}

/* Close the listening socket and every client. */
void
server_close(void)
{
	struct client *c;

	while ((c = TAILQ_FIRST(&server_clients)) != NULL) {
		if (c->busy && c->park == NULL)
			server_client_finish(c, CMD_EXIT_OK);
		(void)server_client_flush(c);
		server_client_free(c);
	}
	server_retry = sd_event_source_disable_unref(server_retry);
	server_listen_src = sd_event_source_disable_unref(server_listen_src);
	if (server_listen_fd != -1)
		close(server_listen_fd);
	server_listen_fd = -1;
	(void)spare_take();
}
