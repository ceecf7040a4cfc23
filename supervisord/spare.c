/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * A few spare descriptors, kept open on /dev/null: when vigild has no
 * other (its jobs took them all), a caller closes them to accept one
 * client (the control socket, the HTTP listener) or to signal a cgroup,
 * and they are opened again once it is done, so that vigild always
 * answers, one client at a time.
 */

#include "config.h"

#include <fcntl.h>
#include <unistd.h>

#include "spare.h"

#define SPARE_FDS 4

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
