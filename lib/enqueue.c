/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The checks of an enqueue request: its delay, priority and unique key as
 * the user wrote them, and its payload's size.  vigild's enqueue command
 * and vigilctl's enqueue --direct (which writes state.db without vigild)
 * both call enqueue_check, so the two accept the same requests and refuse
 * the others with the same words.  Pure: no I/O, the clock passed in.
 */

#include "config.h"

#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "duration.h"
#include "enqueue.h"
#include "queue.h"
#include "xmalloc.h"

/* --delay s, or none: at most what added to now still fits an int64_t. */
static int
enqueue_delay_parse(const char *s, int64_t now, uint64_t *delay, char **cause)
{
	uint64_t limit = (uint64_t)INT64_MAX;
	char *why = NULL;

	*delay = 0;
	if (s == NULL)
		return (0);
	if (duration_parse(s, delay, &why) == -1) {
		xasprintf(cause, "--delay: %s", why);
		free(why);
		return (-1);
	}
	if (now > 0)
		limit -= (uint64_t)now;
	if (*delay > limit) {
		*cause = xstrdup("--delay: too large");
		return (-1);
	}
	return (0);
}

/* --priority s, or none (0): an int. */
static int
enqueue_priority_parse(const char *s, int *priority, char **cause)
{
	long long v;
	char *end;

	*priority = 0;
	if (s == NULL)
		return (0);
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*s == '\0' || *end != '\0' || errno != 0 || v < INT_MIN ||
	    v > INT_MAX) {
		xasprintf(cause, "--priority: not an integer: %s", s);
		return (-1);
	}
	*priority = (int)v;
	return (0);
}

/*
 * Check a payload of len bytes: at most QUEUE_PAYLOAD_MAX.  Return 0, or
 * -1 with errno EMSGSIZE and *cause set (owned by the caller).
 */
int
enqueue_payload_check(size_t len, char **cause)
{
	if (len <= QUEUE_PAYLOAD_MAX)
		return (0);
	xasprintf(
	    cause, "payload larger than 1 MiB (%d bytes)", QUEUE_PAYLOAD_MAX);
	errno = EMSGSIZE;
	return (-1);
}

/*
 * Check the enqueue request req at now (usec since the epoch) and put its
 * delay and priority in *o.  Return 0, or -1 with *cause set (owned by
 * the caller, without the command's name) and errno EINVAL for a bad
 * option (a usage error) or EMSGSIZE for a payload over the limit.
 */
int
enqueue_check(const struct enqueue_req *req, int64_t now,
    struct enqueue_opts *o, char **cause)
{
	if (enqueue_delay_parse(req->delay, now, &o->delay, cause) == -1 ||
	    enqueue_priority_parse(req->priority, &o->priority, cause) == -1)
		goto bad;
	if (req->unique != NULL && *req->unique == '\0') {
		*cause = xstrdup("--unique: empty");
		goto bad;
	}
	return (enqueue_payload_check(req->len, cause));
bad:
	errno = EINVAL;
	return (-1);
}
