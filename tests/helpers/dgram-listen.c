/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * A test helper standing in for systemd's NOTIFY_SOCKET: bind a datagram
 * socket at PATH and append each datagram received, newlines shown as
 * " | ", as one line of OUTFILE, until killed.
 *   usage: dgram-listen PATH OUTFILE
 */

#include "config.h"

#include <sys/types.h>

#include <err.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "notify.h"

int
main(int argc, char **argv)
{
	char buf[NOTIFY_MAX_DATAGRAM + 1], *cause = NULL, *p;
	struct pollfd pfd;
	FILE *out;
	ssize_t n;
	pid_t pid;
	uid_t uid;
	int fd;

	if (argc != 3)
		errx(2, "usage: dgram-listen PATH OUTFILE");
	if ((fd = notify_open(argv[1], &cause)) == -1)
		errx(2, "%s", cause);
	if ((out = fopen(argv[2], "a")) == NULL) {
		warn("%s", argv[2]);
		return (2);
	}
	setvbuf(out, NULL, _IOLBF, 0);
	pfd.fd = fd;
	pfd.events = POLLIN;
	for (;;) {
		if (poll(&pfd, 1, -1) == -1)
			err(2, "poll");
		while (
		    (n = notify_recv(fd, buf, sizeof(buf), &pid, &uid)) >= 0) {
			for (p = buf; (p = strchr(p, '\n')) != NULL;)
				*p = '|';
			fprintf(out, "%s\n", buf);
		}
	}
}
