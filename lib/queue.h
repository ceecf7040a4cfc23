/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The durable job queue's messages.  A message is available (due now or
 * later), running (claimed by a run) or dead (out of attempts).  Times
 * are microseconds since the Unix epoch, always passed in by the caller.
 * Every call may fail: it returns -1 with *cause set (cause may be NULL).
 *
 * A struct queue is a handle onto a backend, a struct queue_ops: queue.c
 * checks what every backend would and calls the backend's function of the
 * same name.  The one backend today is the queue table of state.db
 * (queue-sqlite.c, opened by queue_open); a PostgreSQL queue for cluster
 * jobs is a second table of these, handed to queue_create.
 */

#ifndef VIGIL_QUEUE_H
#define VIGIL_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#define QUEUE_PAYLOAD_MAX (1024 * 1024)

#define QUEUE_AVAILABLE 0
#define QUEUE_RUNNING 1
#define QUEUE_DEAD 2

struct queue;
struct store;

/* One message.  payload is owned (free with queue_msg_clear) when claimed,
 * NULL when listed; last_error is NULL when none. */
struct queue_msg {
	int64_t id;
	void *payload; /* len bytes, then a NUL not counted in len */
	size_t len;
	int attempts;
	int priority;
	int state;
	int64_t due;
	int64_t created;
	int64_t updated;
	int last_exit;   /* -1 when none */
	int last_signal; /* -1 when none */
	char *last_error;
};

struct queue_counts {
	size_t available; /* state 0, due */
	size_t delayed;   /* state 0, not yet due */
	size_t running;
	size_t dead;
};

typedef void (*queue_msg_cb)(const struct queue_msg *, void *);

/*
 * A backend: each function has the contract of the queue_* function of its
 * name, called with the backend's own data (the be of queue_create) first.
 * queue.c has already checked the payload limit (enqueue) and max
 * (claim_batch), and zeroed *n (claim_batch), *dead (fail) and *found
 * (retry, delete).  close frees the backend's data.
 */
struct queue_ops {
	const char *name;
	int (*enqueue)(void *, const char *, const void *, size_t, const char *,
	    int, int64_t, int64_t, int64_t *, int64_t *, char **);
	int (*claim)(
	    void *, const char *, int64_t, struct queue_msg *, char **);
	int (*claim_batch)(void *, const char *, int64_t, struct queue_msg *,
	    int, int *, char **);
	int (*next_due)(void *, const char *, int64_t *, char **);
	int (*done)(void *, int64_t, char **);
	int (*fail)(void *, int64_t, int, int64_t, int, int, const char *,
	    const void *, size_t, int64_t, int *, char **);
	int (*release)(void *, int64_t, char **);
	int (*recover)(void *, const char *, size_t *, char **);
	int (*counts)(
	    void *, const char *, int64_t, struct queue_counts *, char **);
	int (*list_dead)(
	    void *, const char *, int, queue_msg_cb, void *, char **);
	int (*dead_output)(void *, const char *, int64_t, struct queue_msg *,
	    void **, size_t *, int *, char **);
	int (*retry)(void *, int64_t, int64_t, int *, char **);
	int (*delete)(void *, int64_t, int *, char **);
	int (*purge)(void *, const char *, int, size_t *, char **);
	void (*close)(void *);
};

struct queue *queue_create(const struct queue_ops *, void *);

struct queue *queue_open(struct store *, char **);
void queue_close(struct queue *);
int queue_enqueue(struct queue *, const char *, const void *, size_t,
    const char *, int, int64_t, int64_t, int64_t *, int64_t *, char **);
int queue_claim(
    struct queue *, const char *, int64_t, struct queue_msg *, char **);
int queue_claim_batch(struct queue *, const char *, int64_t, struct queue_msg *,
    int, int *, char **);
int queue_next_due(struct queue *, const char *, int64_t *, char **);
int queue_done(struct queue *, int64_t, char **);
int queue_fail(struct queue *, int64_t, int, int64_t, int, int, const char *,
    const void *, size_t, int64_t, int *, char **);
int queue_release(struct queue *, int64_t, char **);
int queue_recover(struct queue *, const char *, size_t *, char **);
int queue_counts(
    struct queue *, const char *, int64_t, struct queue_counts *, char **);
int queue_dead_output(struct queue *, const char *, int64_t, struct queue_msg *,
    void **, size_t *, int *, char **);
int queue_list_dead(
    struct queue *, const char *, int, queue_msg_cb, void *, char **);
int queue_retry(struct queue *, int64_t, int64_t, int *, char **);
int queue_delete(struct queue *, int64_t, int *, char **);
int queue_purge(struct queue *, const char *, int, size_t *, char **);
void queue_msg_clear(struct queue_msg *);
const char *queue_claim_sql(void);
const char *queue_next_due_sql(void);

#endif
