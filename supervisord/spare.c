/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * A few spare descriptors, kept open on /dev/null: when vigild has no
 * other (its jobs took them all), a caller closes them to accept one
 * client (the control socket, the HTTP listener) or to signal a cgroup,
 * and they are opened again once it is done, so that vigild always
 * answers, one client at a time (spare_accept).
 */

#include "config.h"

#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include "log.h"
#include "monotime.h"
#include "spare.h"

#define SPARE_FDS 4
#define SPARE_LOG_EVERY (10 * 1000000ULL) /* usec */

/* The spare descriptors (-1: not held), and how many are held. */
static int spare_fds[SPARE_FDS] = { -1, -1, -1, -1 };
static int spare_n;

/*
 * Close the spare descriptors (SPARE_FDS), for a caller out of
 * descriptors to accept a client or signal a cgroup with; it calls
 * spare_give() once done.  Return 0, or -1 if none is held (in
 * use already).
 */
int
spare_take(void)
{
	int i;

	if (spare_n == 0)
		return (-1);
	for (i = 0; i < SPARE_FDS; i++) {
		if (spare_fds[i] != -1)
			close(spare_fds[i]);
		spare_fds[i] = -1;
	}
	spare_n = 0;
	return (0);
}

/*
 * Open the spare descriptors again where they are not (their client
 * went, or they could not be opened then): callers try whenever a
 * descriptor may have been freed.
 */
void
spare_give(void)
{
	int i;

	for (i = 0; i < SPARE_FDS; i++) {
		if (spare_fds[i] != -1)
			continue;
		spare_fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (spare_fds[i] == -1)
			break;
		spare_n++;
	}
}

/* Say that the spare descriptors serve a client, at most every 10 s. */
static void
spare_log(void)
{
	static uint64_t logged;
	static unsigned long n;

	n++;
	if (!monotime_due(&logged, SPARE_LOG_EVERY))
		return;
	log_warnx("out of file descriptors: clients are served one at a "
	          "time with a spare one (%lu so far)",
	    n);
}

/*
 * accept4() on fd; out of descriptors, again with the spare ones
 * (*reserve set then: spare_give() once that client is gone).  Return the
 * client's fd, or -1 with errno.
 */
int
spare_accept(int fd, struct sockaddr *sa, socklen_t *len, int *reserve)
{
	int cfd, error;

	*reserve = 0;
	cfd = accept4(fd, sa, len, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (cfd != -1 || (errno != EMFILE && errno != ENFILE) ||
	    spare_take() == -1)
		return (cfd);
	if ((cfd = accept4(fd, sa, len, SOCK_NONBLOCK | SOCK_CLOEXEC)) == -1) {
		error = errno;
		spare_give();
		errno = error;
		return (-1);
	}
	spare_log();
	*reserve = 1;
	return (cfd);
}
