/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The checks of an enqueue request, done once for the two places that
 * take one: vigild's enqueue command and vigilctl's enqueue --direct,
 * which writes state.db itself.  One set of checks, one set of messages.
 */

#ifndef VIGIL_ENQUEUE_H
#define VIGIL_ENQUEUE_H

#include <stddef.h>
#include <stdint.h>

/* An enqueue request's options as the user wrote them. */
struct enqueue_req {
	const char *delay;    /* a duration ("1h30m"), or NULL: none */
	const char *priority; /* an integer, or NULL: 0 */
	const char *unique;   /* the key of a unique message, or NULL: none */
	size_t len;           /* the payload's length in bytes */
};

/* The same options, checked. */
struct enqueue_opts {
	uint64_t delay; /* usec; now + delay fits an int64_t */
	int priority;
};

int enqueue_check(
    const struct enqueue_req *, int64_t, struct enqueue_opts *, char **);
int enqueue_payload_check(size_t, char **);

#endif
