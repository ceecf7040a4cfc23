/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The job queue's handle: each queue_* call checks what every backend
 * would (the payload limit, a batch of none), zeroes its flags, and calls
 * the backend's function of the same name (struct queue_ops in queue.h).
 * No backend is named here: the SQLite one (queue-sqlite.c) hands its
 * table to queue_create from queue_open, as a PostgreSQL one would from
 * its own open.
 */

#include "config.h"

#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "queue.h"
#include "xmalloc.h"

struct queue {
	const struct queue_ops *ops;
	void *be; /* the backend's own data, freed by ops->close */
};

/*
 * A handle onto backend ops with its data be (taken: ops->close frees
 * it at queue_close).  Never NULL.
 */
struct queue *
queue_create(const struct queue_ops *ops, void *be)
{
	struct queue *q;

	q = xcalloc(1, sizeof(*q));
	q->ops = ops;
	q->be = be;
	return (q);
}

/* Close the backend and free the handle.  NULL is a no-op. */
void
queue_close(struct queue *q)
{
	if (q == NULL)
		return;
	q->ops->close(q->be);
	free(q);
}

/*
 * Queue a message of len bytes (at most QUEUE_PAYLOAD_MAX) for job, due at
 * due, with priority (higher first), at now.  With unique_key set and a
 * message of job with that key available or running, insert nothing and
 * return 1 with its id in *existing.  Otherwise return 0 with the new
 * message's id in *id once it is durable (it survives a power cut), or -1
 * with *cause.
 */
int
queue_enqueue(struct queue *q, const char *job, const void *payload, size_t len,
    const char *unique_key, int priority, int64_t due, int64_t now, int64_t *id,
    int64_t *existing, char **cause)
{
	if (len > QUEUE_PAYLOAD_MAX) {
		if (cause != NULL)
			xasprintf(cause,
			    "payload of %zu bytes is over the 1 MiB limit",
			    len);
		return (-1);
	}
	return (q->ops->enqueue(q->be, job, payload, len, unique_key, priority,
	    due, now, id, existing, cause));
}

/* Free what a message owns and zero it.  NULL is a no-op. */
void
queue_msg_clear(struct queue_msg *m)
{
	if (m == NULL)
		return;
	free(m->payload);
	free(m->last_error);
	memset(m, 0, sizeof(*m));
}

/*
 * Claim up to max due messages of job at now, in one transaction: each is
 * marked running with one more attempt.  Return 0 with them in v[0] to
 * v[*n - 1] (best first, each to be cleared with queue_msg_clear), or -1
 * with *cause and nothing claimed.
 */
int
queue_claim_batch(struct queue *q, const char *job, int64_t now,
    struct queue_msg *v, int max, int *n, char **cause)
{
	*n = 0;
	if (max <= 0)
		return (0);
	return (q->ops->claim_batch(q->be, job, now, v, max, n, cause));
}

/*
 * Claim the best due message of job at now.  Return 1 with it in m (to be
 * cleared with queue_msg_clear), 0 when none is due, or -1 with *cause.
 */
int
queue_claim(struct queue *q, const char *job, int64_t now, struct queue_msg *m,
    char **cause)
{
	return (q->ops->claim(q->be, job, now, m, cause));
}

/*
 * Set *due to the earliest due time of job's available messages, 0 when
 * there is none, for the caller's one timer.  Return 0, or -1 with *cause.
 */
int
queue_next_due(struct queue *q, const char *job, int64_t *due, char **cause)
{
	return (q->ops->next_due(q->be, job, due, cause));
}

/*
 * Message id was handled: delete it.  One no longer recorded is not an
 * error.  Return 0, or -1 with *cause.
 */
int
queue_done(struct queue *q, int64_t id, char **cause)
{
	return (q->ops->done(q->be, id, cause));
}

/*
 * The run of running message id failed at now, with exit_code or sig (-1
 * for none), error (NULL for none) and the tail of its output (outlen
 * bytes).  Once its attempts reach max_attempts it is dead, with all that
 * kept, and *dead is 1; otherwise it is available again at retry_at (the
 * caller's backoff), and *dead is 0.  A message no longer running is left
 * alone, *dead 0.  Return 0, or -1 with *cause.
 */
int
queue_fail(struct queue *q, int64_t id, int max_attempts, int64_t retry_at,
    int exit_code, int sig, const char *error, const void *output,
    size_t outlen, int64_t now, int *dead, char **cause)
{
	*dead = 0;
	return (q->ops->fail(q->be, id, max_attempts, retry_at, exit_code, sig,
	    error, output, outlen, now, dead, cause));
}

/*
 * Running message id was stopped before it could finish (a stop drained
 * and killed it): make it available again, its due time kept, without
 * counting that attempt.  Return 0, or -1 with *cause.
 */
int
queue_release(struct queue *q, int64_t id, char **cause)
{
	return (q->ops->release(q->be, id, cause));
}

/*
 * Make the messages left running by a vigild that died available again,
 * of job or (job NULL) of all jobs.  Their attempts stay counted, so a
 * message that brings vigild down runs out of them.  Return 0 with their
 * number in *n (n may be NULL), or -1 with *cause.
 */
int
queue_recover(struct queue *q, const char *job, size_t *n, char **cause)
{
	return (q->ops->recover(q->be, job, n, cause));
}

/*
 * Count job's messages: available and due at now, delayed, running and
 * dead.  Return 0, or -1 with *cause.
 */
int
queue_counts(struct queue *q, const char *job, int64_t now,
    struct queue_counts *c, char **cause)
{
	return (q->ops->counts(q->be, job, now, c, cause));
}

/*
 * Call cb(msg, arg) for the first limit (all when negative) dead messages
 * of job, oldest first.  The message is borrowed for the call and has no
 * payload, only its len.  cb may use the queue, but not queue_list_dead.
 * Return 0, or -1 with *cause.
 */
int
queue_list_dead(struct queue *q, const char *job, int limit, queue_msg_cb cb,
    void *arg, char **cause)
{
	return (q->ops->list_dead(q->be, job, limit, cb, arg, cause));
}

/*
 * Dead message id of job: *m as queue_list_dead gives it, and the end of
 * the output of its last run (*out, *olen bytes, malloc'd; NULL and 0
 * when none was kept).  *found is 0 when job has no such dead message.
 * A backend without it fails.  Return 0, or -1 with *cause.
 */
int
queue_dead_output(struct queue *q, const char *job, int64_t id,
    struct queue_msg *m, void **out, size_t *olen, int *found, char **cause)
{
	*out = NULL;
	*olen = 0;
	*found = 0;
	if (q->ops->dead_output == NULL) {
		xasprintf(cause, "the %s queue keeps no output", q->ops->name);
		return (-1);
	}
	return (
	    q->ops->dead_output(q->be, job, id, m, out, olen, found, cause));
}

/*
 * Make dead or delayed message id available now, its attempts back to 0.
 * *found is 0 when there is no such message (or it is running).  A dead
 * message whose unique key a live one has taken since fails.  Return 0,
 * or -1 with *cause.
 */
int
queue_retry(struct queue *q, int64_t id, int64_t now, int *found, char **cause)
{
	*found = 0;
	return (q->ops->retry(q->be, id, now, found, cause));
}

/*
 * Delete message id, whatever its state; *found is 0 when there is none.
 * Return 0, or -1 with *cause.
 */
int
queue_delete(struct queue *q, int64_t id, int *found, char **cause)
{
	*found = 0;
	/* Called through (*...): clang-format takes delete for C++'s. */
	return ((*q->ops->delete)(q->be, id, found, cause));
}

/*
 * Delete job's dead messages, and with dead_only 0 its available ones too
 * (running ones are left to their runs).  Return 0 with their number in
 * *n (n may be NULL), or -1 with *cause.
 */
int
queue_purge(
    struct queue *q, const char *job, int dead_only, size_t *n, char **cause)
{
	return (q->ops->purge(q->be, job, dead_only, n, cause));
}
