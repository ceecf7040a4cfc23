/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * A test helper: connect to a unix socket, write all of stdin to it, then
 * read and discard until the peer closes the connection or the time is
 * up.  The write side is never shut down, so a close seen here was the
 * peer's own decision.  A peer that closes early (EPIPE, ECONNRESET) ends
 * the writing, not the program.
 *   usage: sendraw [-dho] [-t SECONDS] SOCKET
 * -d sends stdin as one datagram (for notify.sock) and exits 0.
 * -h shuts down the write side once stdin is done (a half-close, as socat
 * does); -o copies what was read to stdout.
 * Exit 0 if the peer closed the connection (EOF or ECONNRESET), 1 if it
 * was still open after SECONDS (default 5) of waiting, 2 on other errors.
 * The byte counts go to stderr: "sendraw: wrote N, read M".
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int sendraw_timeout = 5;
static int sendraw_copy;
static int sendraw_type = SOCK_STREAM;

static void sendraw_usage(void) __attribute__((noreturn));

static long long
sendraw_now_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		err(2, "clock_gettime");
	return ((long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/* Wait for events on fd until deadline; return 0, or -1 on timeout. */
static int
sendraw_wait(int fd, short events, long long deadline)
{
	struct pollfd pfd;
	long long left;
	int r;

	for (;;) {
		if ((left = deadline - sendraw_now_ms()) <= 0)
			return (-1);
		pfd.fd = fd;
		pfd.events = events;
		pfd.revents = 0;
		r = poll(&pfd, 1, left > 1000 ? 1000 : (int)left);
		if (r == -1 && errno != EINTR)
			err(2, "poll");
		if (r > 0)
			return (0);
	}
}

static int
sendraw_connect(const char *path)
{
	struct sockaddr_un sun;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path))
		errx(2, "%s: socket path too long", path);
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, sendraw_type | SOCK_CLOEXEC, 0)) == -1)
		err(2, "socket");
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		err(2, "connect %s", path);
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == -1)
		err(2, "fcntl");
	return (fd);
}

/*
 * Write n bytes to the non-blocking fd.  Return 0, 1 if the peer has
 * closed, or -1 if the peer took nothing for sendraw_timeout seconds.
 */
static int
sendraw_write(int fd, const char *p, size_t n, size_t *total)
{
	long long deadline;
	ssize_t w;

	while (n > 0) {
		w = write(fd, p, n);
		if (w == -1 && errno == EINTR)
			continue;
		if (w == -1 && errno == EAGAIN) {
			deadline = sendraw_now_ms() + sendraw_timeout * 1000;
			if (sendraw_wait(fd, POLLOUT, deadline) == -1)
				return (-1);
			continue;
		}
		if (w == -1 && (errno == EPIPE || errno == ECONNRESET))
			return (1);
		if (w == -1)
			err(2, "write");
		p += w;
		n -= (size_t)w;
		*total += (size_t)w;
	}
	return (0);
}

/* Read until EOF; return 0 when the peer closed, -1 on timeout. */
static int
sendraw_drain(int fd, size_t *total)
{
	char buf[65536];
	long long deadline = sendraw_now_ms() + sendraw_timeout * 1000;
	ssize_t r;

	for (;;) {
		r = read(fd, buf, sizeof(buf));
		if (r == 0 || (r == -1 && errno == ECONNRESET))
			return (0);
		if (r > 0) {
			*total += (size_t)r;
			if (sendraw_copy)
				(void)!write(STDOUT_FILENO, buf, (size_t)r);
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			err(2, "read");
		if (sendraw_wait(fd, POLLIN, deadline) == -1)
			return (-1);
	}
}

static void
sendraw_usage(void)
{
	fprintf(stderr, "usage: sendraw [-dho] [-t SECONDS] SOCKET\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	char buf[65536];
	size_t wrote = 0, got = 0;
	ssize_t n;
	int ch, fd, r = 0, half = 0;

	while ((ch = getopt(argc, argv, "dhot:")) != -1) {
		switch (ch) {
		case 'd':
			sendraw_type = SOCK_DGRAM;
			break;
		case 'h':
			half = 1;
			break;
		case 'o':
			sendraw_copy = 1;
			break;
		case 't':
			sendraw_timeout = atoi(optarg);
			if (sendraw_timeout <= 0)
				sendraw_usage();
			break;
		default:
			sendraw_usage();
		}
	}
	if (argc - optind != 1)
		sendraw_usage();
	signal(SIGPIPE, SIG_IGN);
	fd = sendraw_connect(argv[optind]);
	if (sendraw_type == SOCK_DGRAM) {
		n = read(STDIN_FILENO, buf, sizeof(buf));
		if (n < 0 || send(fd, buf, (size_t)n, 0) != n)
			err(2, "send");
		close(fd);
		return (0);
	}
	while (r == 0) {
		n = read(STDIN_FILENO, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			err(2, "stdin");
		if (n == 0)
			break;
		r = sendraw_write(fd, buf, (size_t)n, &wrote);
	}
	if (r == 0 && half)
		(void)shutdown(fd, SHUT_WR);
	if (r != -1)
		r = sendraw_drain(fd, &got);
	fprintf(stderr, "sendraw: wrote %zu, read %zu\n", wrote, got);
	close(fd);
	return (r == -1 ? 1 : 0);
}
