/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

#ifndef VIGIL_RESOLVE_H
#define VIGIL_RESOLVE_H

#include <stddef.h>

#include <systemd/sd-event.h>

/*
 * Host names looked up off vigild's loop (resolve.c): glibc's
 * getaddrinfo_a, its answers looked at every few milliseconds while they
 * are out.  The answer is one address per name, as text, in the names'
 * order: what libpq takes as hostaddr (it would look names up itself with
 * a blocking getaddrinfo).
 */
#define RESOLVE_MAX 16

/* All looked up (err NULL), or the first that failed, and why. */
typedef void resolve_done_fn(void *, const char *);

struct gaicb;

struct resolve {
	char *addrs[RESOLVE_MAX];       /* the answers, as text */
	struct gaicb *gai[RESOLVE_MAX]; /* lookups out, or NULL */
	const char *names[RESOLVE_MAX]; /* the caller's, while it lasts */
	size_t n;
	sd_event_source *poll; /* looks at the lookups */
	resolve_done_fn *done;
	void *arg;
};

int resolve_is_address(const char *);
int resolve_start(struct resolve *, char *const *, size_t, resolve_done_fn *,
    void *, char **);
char *resolve_hostaddr(const struct resolve *);
void resolve_cancel(struct resolve *);

#endif
