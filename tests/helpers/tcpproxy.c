/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * A test helper: a TCP forwarder, for the cluster tests' silent partition.
 * It listens on 127.0.0.1, on a port the kernel chooses, writes that port
 * to PORTFILE (whole: written aside, then renamed), and forwards each
 * connection it accepts to TARGET_HOST TARGET_PORT, both ways, until it is
 * killed.  SIGSTOP it and its clients see no FIN and no RST: the kernel
 * still completes their connections and takes their bytes until the socket
 * buffers are full, and nothing comes back; SIGCONT and everything flows
 * again.
 *   usage: tcpproxy PORTFILE TARGET_HOST TARGET_PORT
 * One poll(2) loop over non-blocking sockets with a bounded buffer per
 * direction.  An end of file is passed on as a half-close (shutdown), an
 * error or a reset on one side as a reset (SO_LINGER 0) of the other; a
 * target that cannot be reached resets the client.  At most TCPPROXY_MAX
 * connections are open at a time: the next ones wait in the listen queue.
 * Exit 2 if it cannot start.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <err.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TCPPROXY_MAX 256
#define TCPPROXY_BUF 65536
#define TCPPROXY_SOCK (SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC)

/* One direction of a connection: bytes read from one side, not yet
 * written to the other. */
struct tcpproxy_dir {
	char buf[TCPPROXY_BUF];
	size_t off; /* first byte not yet written */
	size_t len; /* end of the bytes read */
	int eof;    /* the reading side has sent its FIN */
	int shut;   /* the FIN was passed on: the writing side is shut down */
};

/* A forwarded connection: fd[0] the client's, fd[1] the target's; dir[i]
 * carries the bytes from fd[i] to fd[1 - i]. */
struct tcpproxy_conn {
	int fd[2];
	int connecting; /* fd[1]'s connect(2) is in progress */
	struct tcpproxy_dir dir[2];
};

static struct tcpproxy_conn *tcpproxy_conns[TCPPROXY_MAX];
static int tcpproxy_nconns;
static struct addrinfo *tcpproxy_target;

/* Close both sides of c and free it; reset sends RSTs, not FINs. */
static void
tcpproxy_close(int slot, int reset)
{
	struct tcpproxy_conn *c = tcpproxy_conns[slot];
	struct linger lg;
	int i;

	for (i = 0; i < 2; i++) {
		if (reset) {
			lg.l_onoff = 1;
			lg.l_linger = 0;
			(void)setsockopt(
			    c->fd[i], SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		}
		close(c->fd[i]);
	}
	free(c);
	tcpproxy_conns[slot] = NULL;
	tcpproxy_nconns--;
}

static void
tcpproxy_nodelay(int fd)
{
	int on = 1;

	/* The PostgreSQL protocol is request and reply: no Nagle delays. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
}

/* Start forwarding the accepted socket cfd: connect to the target. */
static void
tcpproxy_open(int cfd)
{
	const struct addrinfo *ai = tcpproxy_target;
	struct tcpproxy_conn *c;
	int slot, tfd;

	for (slot = 0; tcpproxy_conns[slot] != NULL; slot++)
		;
	tfd = socket(ai->ai_family, TCPPROXY_SOCK, 0);
	if (tfd == -1) {
		warn("socket");
		close(cfd);
		return;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL)
		err(2, "calloc");
	c->fd[0] = cfd;
	c->fd[1] = tfd;
	tcpproxy_conns[slot] = c;
	tcpproxy_nconns++;
	tcpproxy_nodelay(cfd);
	tcpproxy_nodelay(tfd);
	if (connect(tfd, ai->ai_addr, ai->ai_addrlen) == 0)
		return;
	if (errno == EINPROGRESS) {
		c->connecting = 1;
		return;
	}
	warn("connect to the target");
	tcpproxy_close(slot, 1);
}

/* Accept what the listen queue holds, up to TCPPROXY_MAX connections. */
static void
tcpproxy_accept(int lfd)
{
	int cfd;

	while (tcpproxy_nconns < TCPPROXY_MAX) {
		cfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd == -1) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				warn("accept");
			return;
		}
		tcpproxy_open(cfd);
	}
}

/*
 * Move what can be moved in direction i of c without blocking: read from
 * fd[i] while there is room, write to fd[1 - i] while it takes it, pass an
 * end of file on once everything before it is written.  Return -1 on an
 * error of either side, else 0.
 */
static int
tcpproxy_pump(struct tcpproxy_conn *c, int i)
{
	struct tcpproxy_dir *d = &c->dir[i];
	ssize_t n;

	if (!d->eof && d->len < sizeof(d->buf) && !(i == 1 && c->connecting)) {
		n = read(c->fd[i], d->buf + d->len, sizeof(d->buf) - d->len);
		if (n == 0)
			d->eof = 1;
		else if (n > 0)
			d->len += (size_t)n;
		else if (errno != EAGAIN && errno != EWOULDBLOCK &&
		    errno != EINTR)
			return (-1);
	}
	if (c->connecting)
		return (0);
	if (d->off < d->len) {
		n = send(c->fd[1 - i], d->buf + d->off, d->len - d->off,
		    MSG_NOSIGNAL);
		if (n > 0)
			d->off += (size_t)n;
		else if (n == -1 && errno != EAGAIN && errno != EWOULDBLOCK &&
		    errno != EINTR)
			return (-1);
		if (d->off == d->len)
			d->off = d->len = 0;
	}
	if (d->eof && d->len == 0 && !d->shut) {
		if (shutdown(c->fd[1 - i], SHUT_WR) == -1 && errno != ENOTCONN)
			return (-1);
		d->shut = 1;
	}
	return (0);
}

/* The poll(2) events side s of c waits for; 0 for none. */
static short
tcpproxy_events(const struct tcpproxy_conn *c, int s)
{
	const struct tcpproxy_dir *in = &c->dir[s], *out = &c->dir[1 - s];
	short ev = 0;

	if (s == 1 && c->connecting)
		return (POLLOUT);
	if (!in->eof && in->len < sizeof(in->buf))
		ev |= POLLIN;
	if (out->off < out->len)
		ev |= POLLOUT;
	return (ev);
}

/* After poll(2) reported on c: finish its connect, move its bytes, and
 * close it when both directions are done or an error came. */
static void
tcpproxy_step(int slot)
{
	struct tcpproxy_conn *c = tcpproxy_conns[slot];
	socklen_t len;
	int e = 0, i;

	if (c->connecting) {
		len = sizeof(e);
		if (getsockopt(c->fd[1], SOL_SOCKET, SO_ERROR, &e, &len) == -1)
			e = errno;
		if (e == EINPROGRESS || e == EALREADY)
			e = 0;
		else if (e == 0)
			c->connecting = 0;
		if (e != 0) {
			warnx("connect to the target: %s", strerror(e));
			tcpproxy_close(slot, 1);
			return;
		}
	}
	for (i = 0; i < 2; i++) {
		if (tcpproxy_pump(c, i) == -1) {
			tcpproxy_close(slot, 1);
			return;
		}
	}
	if (c->dir[0].shut && c->dir[1].shut)
		tcpproxy_close(slot, 0);
}

/* Listen on 127.0.0.1, port 0; write the port the kernel chose to path. */
static int
tcpproxy_listen(const char *path)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	char tmp[PATH_MAX];
	FILE *f;
	int fd;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, TCPPROXY_SOCK, 0);
	if (fd == -1)
		err(2, "socket");
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(fd, 128) == -1 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) == -1)
		err(2, "listen on 127.0.0.1");
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		errx(2, "%s: path too long", path);
	if ((f = fopen(tmp, "w")) == NULL)
		err(2, "%s", tmp);
	fprintf(f, "%u\n", (unsigned)ntohs(sin.sin_port));
	if (fclose(f) == EOF || rename(tmp, path) == -1)
		err(2, "%s", path);
	return (fd);
}

int
main(int argc, char **argv)
{
	struct pollfd pfd[1 + 2 * TCPPROXY_MAX];
	struct tcpproxy_conn *c;
	struct addrinfo hints;
	int owner[1 + 2 * TCPPROXY_MAX];
	int i, lfd, n, r, s;

	if (argc != 4)
		errx(2, "usage: tcpproxy PORTFILE TARGET_HOST TARGET_PORT");
	signal(SIGPIPE, SIG_IGN);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	if ((r = getaddrinfo(argv[2], argv[3], &hints, &tcpproxy_target)) != 0)
		errx(2, "%s port %s: %s", argv[2], argv[3], gai_strerror(r));
	lfd = tcpproxy_listen(argv[1]);
	for (;;) {
		n = 0;
		if (tcpproxy_nconns < TCPPROXY_MAX) {
			pfd[n].fd = lfd;
			pfd[n].events = POLLIN;
			owner[n++] = -1;
		}
		for (i = 0; i < TCPPROXY_MAX; i++) {
			if ((c = tcpproxy_conns[i]) == NULL)
				continue;
			for (s = 0; s < 2; s++) {
				pfd[n].events = tcpproxy_events(c, s);
				if (pfd[n].events == 0)
					continue;
				pfd[n].fd = c->fd[s];
				owner[n++] = i;
			}
		}
		if (poll(pfd, (nfds_t)n, -1) == -1) {
			if (errno == EINTR)
				continue;
			err(2, "poll");
		}
		for (i = 0; i < n; i++) {
			if (pfd[i].revents == 0)
				continue;
			if (owner[i] == -1)
				tcpproxy_accept(lfd);
			else if (tcpproxy_conns[owner[i]] != NULL)
				tcpproxy_step(owner[i]);
		}
	}
}
