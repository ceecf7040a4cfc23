/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The readiness protocol vigild offers jobs, as systemd does: a datagram
 * socket named by NOTIFY_SOCKET, and messages of newline-separated
 * KEY=VALUE assignments (READY=1, STATUS=..., MAINPID=..., WATCHDOG=1...).
 */

#ifndef VIGIL_NOTIFY_H
#define VIGIL_NOTIFY_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

/* The largest datagram read; longer ones are cut to this and parsed. */
#define NOTIFY_MAX_DATAGRAM 4096

struct notify_msg {
	int ready;            /* READY=1 */
	int stopping;         /* STOPPING=1 */
	int reloading;        /* RELOADING=1 */
	int watchdog;         /* WATCHDOG=1 */
	int watchdog_trigger; /* WATCHDOG=trigger */
	char *status;         /* STATUS=, owned, or NULL */
	int has_errno;        /* ERRNO= */
	int errnum;
	pid_t mainpid; /* MAINPID=, 0 if absent */
	int nknown;    /* assignments understood */
};

int notify_parse(const char *, size_t, struct notify_msg *);
void notify_msg_clear(struct notify_msg *);
int notify_open(const char *, char **);
ssize_t notify_recv(int, char *, size_t, pid_t *, uid_t *);

#endif
