/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The SQLite backend of the job queue (queue.h's struct queue_ops): the
 * messages in state.db (table queue, schema version 2 in store.c), on the
 * store's connection.  Like store.c, every statement is prepared once, at
 * open, and reset after each use, and a failed call rolls back what it
 * began, so the queue keeps working after an error.
 *
 * A claim takes the due available messages of a job by priority (highest
 * first), then due, then id, walking the queue_claim index (job, state,
 * priority DESC, due, id), so its cost does not grow with the number of
 * messages queued.  The attempt is counted at claim, in the same
 * transaction that marks the message running: a message whose run brings
 * vigild itself down still runs out of attempts.
 *
 * An enqueue is acknowledged to its producer, who will then forget the
 * message: it is committed with synchronous FULL, so the WAL is synced
 * before COMMIT returns and the message survives a power cut.  The rest of
 * state.db stays at NORMAL, where a power cut may lose the last commits
 * (a claim, a done) and then a message runs once more: at least once.
 */

#include "config.h"

#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "queue.h"
#include "store.h"
#include "xmalloc.h"

/* PRAGMA synchronous levels. */
#define QUEUE_SYNC_FULL 2

enum queue_stmt {
	QUEUE_BEGIN,
	QUEUE_COMMIT,
	QUEUE_ROLLBACK,
	QUEUE_FIND_UNIQUE,
	QUEUE_INSERT,
	QUEUE_CLAIM,
	QUEUE_MARK_RUNNING,
	QUEUE_NEXT_DUE,
	QUEUE_DONE,
	QUEUE_ATTEMPTS,
	QUEUE_FAILED,
	QUEUE_RELEASE,
	QUEUE_RECOVER,
	QUEUE_COUNTS,
	QUEUE_LIST_DEAD,
	QUEUE_DEAD_OUTPUT,
	QUEUE_RETRY,
	QUEUE_DELETE,
	QUEUE_PURGE,
	QUEUE_NSTMT,
};

struct queue_sqlite {
	struct store *s;
	sqlite3 *db;
	sqlite3_stmt *st[QUEUE_NSTMT];
};

/*
 * The statements, prepared at open.  QUEUE_CLAIM (?1 job, ?2 now, ?3 how
 * many) is an equality on the index's (job, state) and its ORDER BY is
 * the index's order, so it stops after the first ?3 due entries.
 */
static const char *queue_sql[QUEUE_NSTMT] = {
	[QUEUE_BEGIN] = "BEGIN IMMEDIATE",
	[QUEUE_COMMIT] = "COMMIT",
	[QUEUE_ROLLBACK] = "ROLLBACK",
	[QUEUE_FIND_UNIQUE] = "SELECT id FROM queue WHERE job = ?1 AND "
	                      "unique_key = ?2 AND state < 2",
	[QUEUE_INSERT] = "INSERT INTO queue (job, payload, unique_key, "
	                 "priority, state, due, attempts, created, updated) "
	                 "VALUES (?1, ?2, ?3, ?4, 0, ?5, 0, ?6, ?6)",
	/* The order is the index's: never a sort, whatever the planner. */
	[QUEUE_CLAIM] = "SELECT id, payload, attempts, priority, due, created "
	                "FROM queue INDEXED BY queue_claim "
	                "WHERE job = ?1 AND state = 0 AND "
	                "due <= ?2 ORDER BY priority DESC, due, id LIMIT ?3",
	[QUEUE_MARK_RUNNING] = "UPDATE queue SET state = 1, attempts = "
	                       "attempts + 1, updated = ?2 WHERE id = ?1",
	[QUEUE_NEXT_DUE] = "SELECT min(due) FROM queue WHERE job = ?1 AND "
	                   "state = 0",
	[QUEUE_DONE] = "DELETE FROM queue WHERE id = ?1",
	[QUEUE_ATTEMPTS] = "SELECT attempts FROM queue WHERE id = ?1 AND "
	                   "state = 1",
	[QUEUE_FAILED] = "UPDATE queue SET state = ?2, due = coalesce(?3, "
	                 "due), last_exit = ?4, last_signal = ?5, "
	                 "last_error = ?6, output = ?7, updated = ?8 "
	                 "WHERE id = ?1",
	[QUEUE_RELEASE] = "UPDATE queue SET state = 0, attempts = "
	                  "max(attempts - 1, 0) WHERE id = ?1 AND state = 1",
	[QUEUE_RECOVER] = "UPDATE queue SET state = 0 WHERE state = 1 AND "
	                  "(?1 IS NULL OR job = ?1)",
	[QUEUE_COUNTS] = "SELECT coalesce(sum(state = 0 AND due <= ?2), 0), "
	                 "coalesce(sum(state = 0 AND due > ?2), 0), "
	                 "coalesce(sum(state = 1), 0), "
	                 "coalesce(sum(state = 2), 0) "
	                 "FROM queue WHERE job = ?1",
	[QUEUE_LIST_DEAD] = "SELECT id, attempts, last_exit, last_signal, "
	                    "last_error, updated, length(payload), priority, "
	                    "due, created FROM queue WHERE job = ?1 AND "
	                    "state = 2 ORDER BY id LIMIT ?2",
	[QUEUE_DEAD_OUTPUT] = "SELECT id, attempts, last_exit, last_signal, "
	                      "last_error, updated, length(payload), priority, "
	                      "due, created, output FROM queue WHERE id = ?1 "
	                      "AND job = ?2 AND state = 2",
	[QUEUE_RETRY] = "UPDATE queue SET state = 0, due = ?2, attempts = 0, "
	                "updated = ?2 WHERE id = ?1 AND state <> 1",
	[QUEUE_DELETE] = "DELETE FROM queue WHERE id = ?1",
	[QUEUE_PURGE] = "DELETE FROM queue WHERE job = ?1 AND "
	                "(state = 2 OR (?2 = 0 AND state = 0))",
};

/*
 * The claim query's text, for a test or a debugging tool to EXPLAIN it.
 */
const char *
queue_claim_sql(void)
{
	return (queue_sql[QUEUE_CLAIM]);
}

/* The next-due query's text, likewise. */
const char *
queue_next_due_sql(void)
{
	return (queue_sql[QUEUE_NEXT_DUE]);
}

/*
 * A statement failed: set *cause from the connection, reset the statement
 * and roll back a transaction left open.  Return -1.
 */
static int
queue_error(struct queue_sqlite *q, sqlite3_stmt *st, char **cause)
{
	sqlite3_stmt *rb = q->st[QUEUE_ROLLBACK];

	store_error_seen(q->s);
	if (cause != NULL)
		xasprintf(cause, "state.db: %s", sqlite3_errmsg(q->db));
	if (st != NULL)
		sqlite3_reset(st);
	if (!sqlite3_get_autocommit(q->db)) {
		sqlite3_step(rb);
		sqlite3_reset(rb);
	}
	return (-1);
}

/* Step a statement that returns no row, then reset it. */
static int
queue_step_done(struct queue_sqlite *q, sqlite3_stmt *st, char **cause)
{
	if (sqlite3_step(st) != SQLITE_DONE)
		return (queue_error(q, st, cause));
	sqlite3_reset(st);
	return (0);
}

/*
 * Begin a write transaction, or join the store's batch (store.c): a fail
 * or a claim made while vigild settles many runs at once commits with
 * them.
 */
static int
queue_begin(struct queue_sqlite *q, char **cause)
{
	if (store_in_batch(q->s))
		return (0);
	return (queue_step_done(q, q->st[QUEUE_BEGIN], cause));
}

static int
queue_commit(struct queue_sqlite *q, char **cause)
{
	if (store_in_batch(q->s))
		return (0);
	return (queue_step_done(q, q->st[QUEUE_COMMIT], cause));
}

/* Bind an integer, or NULL when it is negative (none). */
static int
queue_bind_opt(sqlite3_stmt *st, int i, int64_t v)
{
	if (v < 0)
		return (sqlite3_bind_null(st, i));
	return (sqlite3_bind_int64(st, i, v));
}

/* An integer column, or dflt when NULL. */
static int64_t
queue_column_opt(sqlite3_stmt *st, int i, int64_t dflt)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return (dflt);
	return (sqlite3_column_int64(st, i));
}

/*
 * Read PRAGMA synchronous into *level.  A pragma is evaluated when it is
 * prepared, so it cannot be kept prepared like the other statements.
 */
static int
queue_sync_get(sqlite3 *db, int *level)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db, "PRAGMA synchronous", -1, &st, NULL) !=
	    SQLITE_OK)
		return (-1);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		*level = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return (rc == SQLITE_ROW ? 0 : -1);
}

/* Set PRAGMA synchronous (outside a transaction). */
static int
queue_sync_set(sqlite3 *db, int level)
{
	char sql[64];

	snprintf(sql, sizeof(sql), "PRAGMA synchronous = %d", level);
	return (sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1);
}

/*
 * Insert the message, or find the live one with its unique key, in one
 * transaction.  Return 0 with *id, 1 with *existing, or -1 with *cause.
 */
static int
queue_insert(struct queue_sqlite *q, const char *job, const void *payload,
    size_t len, const char *unique_key, int priority, int64_t due, int64_t now,
    int64_t *id, int64_t *existing, char **cause)
{
	sqlite3_stmt *fd = q->st[QUEUE_FIND_UNIQUE];
	sqlite3_stmt *st = q->st[QUEUE_INSERT];
	int rc;

	if (queue_step_done(q, q->st[QUEUE_BEGIN], cause) == -1)
		return (-1);
	if (unique_key != NULL) {
		if (sqlite3_bind_text(fd, 1, job, -1, SQLITE_STATIC) !=
		        SQLITE_OK ||
		    sqlite3_bind_text(fd, 2, unique_key, -1, SQLITE_STATIC) !=
		        SQLITE_OK)
			return (queue_error(q, fd, cause));
		rc = sqlite3_step(fd);
		if (rc == SQLITE_ROW) {
			*existing = sqlite3_column_int64(fd, 0);
			sqlite3_reset(fd);
			if (queue_step_done(q, q->st[QUEUE_COMMIT], cause) ==
			    -1)
				return (-1);
			return (1);
		}
		if (rc != SQLITE_DONE)
			return (queue_error(q, fd, cause));
		sqlite3_reset(fd);
	}
	/* A NULL pointer would bind NULL, not an empty blob. */
	if (sqlite3_bind_text(st, 1, job, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_blob(st, 2, payload != NULL ? payload : "", (int)len,
	        SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_text(st, 3, unique_key, -1, SQLITE_STATIC) !=
	        SQLITE_OK ||
	    sqlite3_bind_int(st, 4, priority) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 5, due) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 6, now) != SQLITE_OK)
		return (queue_error(q, st, cause));
	if (queue_step_done(q, st, cause) == -1)
		return (-1);
	*id = sqlite3_last_insert_rowid(q->db);
	/* The id's mark is raised first, or nothing is acknowledged. */
	if (store_ids_reserve(q->s, *id, cause) == -1) {
		(void)queue_step_done(q, q->st[QUEUE_ROLLBACK], NULL);
		return (-1);
	}
	if (queue_step_done(q, q->st[QUEUE_COMMIT], cause) == -1)
		return (-1);
	return (0);
}

/*
 * queue_enqueue: the commit runs with synchronous FULL, the connection's
 * level put back after: the producer forgets a message once it is
 * acknowledged, so an acknowledged message must survive a power cut.
 */
static int
queue_sqlite_enqueue(void *arg, const char *job, const void *payload,
    size_t len, const char *unique_key, int priority, int64_t due, int64_t now,
    int64_t *id, int64_t *existing, char **cause)
{
	struct queue_sqlite *q = arg;
	int level, rc;

	if (queue_sync_get(q->db, &level) == -1)
		return (queue_error(q, NULL, cause));
	if (level < QUEUE_SYNC_FULL &&
	    queue_sync_set(q->db, QUEUE_SYNC_FULL) == -1)
		return (queue_error(q, NULL, cause));
	rc = queue_insert(q, job, payload, len, unique_key, priority, due, now,
	    id, existing, cause);
	if (level < QUEUE_SYNC_FULL && queue_sync_set(q->db, level) == -1 &&
	    rc != -1) {
		/* Committed, yet the connection stays at FULL: slower. */
		if (cause != NULL)
			xasprintf(cause, "state.db: %s", sqlite3_errmsg(q->db));
		return (-1);
	}
	return (rc);
}

/* Fill m from a row of QUEUE_CLAIM, as it is once claimed at now. */
static void
queue_claim_fill(sqlite3_stmt *st, int64_t now, struct queue_msg *m)
{
	const void *p;

	memset(m, 0, sizeof(*m));
	m->id = sqlite3_column_int64(st, 0);
	p = sqlite3_column_blob(st, 1);
	m->len = (size_t)sqlite3_column_bytes(st, 1);
	m->payload = xmalloc(m->len + 1);
	if (m->len > 0)
		memcpy(m->payload, p, m->len);
	((char *)m->payload)[m->len] = '\0';
	m->attempts = sqlite3_column_int(st, 2) + 1;
	m->priority = sqlite3_column_int(st, 3);
	m->due = sqlite3_column_int64(st, 4);
	m->created = sqlite3_column_int64(st, 5);
	m->state = QUEUE_RUNNING;
	m->updated = now;
	m->last_exit = -1;
	m->last_signal = -1;
}

/*
 * queue_claim_batch: the claim and the marks, in one transaction (or the
 * store's batch).
 */
static int
queue_sqlite_claim_batch(void *arg, const char *job, int64_t now,
    struct queue_msg *v, int max, int *n, char **cause)
{
	struct queue_sqlite *q = arg;
	sqlite3_stmt *st = q->st[QUEUE_CLAIM];
	sqlite3_stmt *up = q->st[QUEUE_MARK_RUNNING];
	int i, k = 0, rc = SQLITE_DONE;

	if (queue_begin(q, cause) == -1)
		return (-1);
	if (sqlite3_bind_text(st, 1, job, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 2, now) != SQLITE_OK ||
	    sqlite3_bind_int(st, 3, max) != SQLITE_OK)
		return (queue_error(q, st, cause));
	while (k < max && (rc = sqlite3_step(st)) == SQLITE_ROW)
		queue_claim_fill(st, now, &v[k++]);
	if (k < max && rc != SQLITE_DONE)
		goto fail;
	sqlite3_reset(st);
	st = up;
	for (i = 0; i < k; i++) {
		if (sqlite3_bind_int64(up, 1, v[i].id) != SQLITE_OK ||
		    sqlite3_bind_int64(up, 2, now) != SQLITE_OK ||
		    sqlite3_step(up) != SQLITE_DONE)
			goto fail;
		sqlite3_reset(up);
	}
	st = NULL;
	if (queue_commit(q, cause) == -1)
		goto fail;
	*n = k;
	return (0);
fail:
	if (st != NULL)
		queue_error(q, st, cause);
	for (i = 0; i < k; i++)
		queue_msg_clear(&v[i]);
	return (-1);
}

/* queue_claim: a batch of one. */
static int
queue_sqlite_claim(
    void *arg, const char *job, int64_t now, struct queue_msg *m, char **cause)
{
	int n = 0;

	if (queue_sqlite_claim_batch(arg, job, now, m, 1, &n, cause) == -1)
		return (-1);
	return (n);
}

static int
queue_sqlite_next_due(void *arg, const char *job, int64_t *due, char **cause)
{
	struct queue_sqlite *q = arg;
	sqlite3_stmt *st = q->st[QUEUE_NEXT_DUE];

	if (sqlite3_bind_text(st, 1, job, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW)
		return (queue_error(q, st, cause));
	*due = queue_column_opt(st, 0, 0);
	sqlite3_reset(st);
	return (0);
}

static int
queue_sqlite_done(void *arg, int64_t id, char **cause)
{
	struct queue_sqlite *q = arg;
	sqlite3_stmt *st = q->st[QUEUE_DONE];

	if (sqlite3_bind_int64(st, 1, id) != SQLITE_OK)
		return (queue_error(q, st, cause));
	return (queue_step_done(q, st, cause));
}

/* queue_fail: the attempts read and the row updated in one transaction. */
static int
queue_sqlite_fail(void *arg, int64_t id, int max_attempts, int64_t retry_at,
    int exit_code, int sig, const char *error, const void *output,
    size_t outlen, int64_t now, int *dead, char **cause)
{
	struct queue_sqlite *q = arg;
	sqlite3_stmt *st = q->st[QUEUE_ATTEMPTS];
	sqlite3_stmt *up = q->st[QUEUE_FAILED];
	int rc, attempts, bad;

	if (queue_begin(q, cause) == -1)
		return (-1);
	if (sqlite3_bind_int64(st, 1, id) != SQLITE_OK)
		return (queue_error(q, st, cause));
	if ((rc = sqlite3_step(st)) == SQLITE_DONE) {
		sqlite3_reset(st);
		return (queue_commit(q, cause));
	}
	if (rc != SQLITE_ROW)
		return (queue_error(q, st, cause));
	attempts = sqlite3_column_int(st, 0);
	sqlite3_reset(st);
	bad = attempts >= max_attempts;
	if (sqlite3_bind_int64(up, 1, id) != SQLITE_OK ||
	    sqlite3_bind_int(up, 2, bad ? QUEUE_DEAD : QUEUE_AVAILABLE) !=
	        SQLITE_OK ||
	    (bad ? sqlite3_bind_null(up, 3) :
	           sqlite3_bind_int64(up, 3, retry_at)) != SQLITE_OK ||
	    queue_bind_opt(up, 4, exit_code) != SQLITE_OK ||
	    queue_bind_opt(up, 5, sig) != SQLITE_OK ||
	    sqlite3_bind_text(up, 6, error, -1, SQLITE_STATIC) != SQLITE_OK ||
	    (output != NULL && outlen > 0 ?
	            sqlite3_bind_blob(
	                up, 7, output, (int)outlen, SQLITE_STATIC) :
	            sqlite3_bind_null(up, 7)) != SQLITE_OK ||
	    sqlite3_bind_int64(up, 8, now) != SQLITE_OK)
		return (queue_error(q, up, cause));
	if (queue_step_done(q, up, cause) == -1 || queue_commit(q, cause) == -1)
		return (-1);
	*dead = bad;
	return (0);
}

static int
queue_sqlite_release(void *arg, int64_t id, char **cause)
{
	struct queue_sqlite *q = arg;
	sqlite3_stmt *st = q->st[QUEUE_RELEASE];

	if (sqlite3_bind_int64(st, 1, id) != SQLITE_OK)
		return (queue_error(q, st, cause));
	return (queue_step_done(q, st, cause));
}

static int
queue_sqlite_recover(void *arg, const char *job, size_t *n, char **cause)
{
	struct queue_sqlite *q = arg;
	sqlite3_stmt *st = q->st[QUEUE_RECOVER];

	if (sqlite3_bind_text(st, 1, job, -1, SQLITE_STATIC) != SQLITE_OK)
		return (queue_error(q, st, cause));
	if (queue_step_done(q, st, cause) == -1)
		return (-1);
	if (n != NULL)
		*n = (size_t)sqlite3_changes(q->db);
	return (0);
}

static int
queue_sqlite_counts(void *arg, const char *job, int64_t now,
    struct queue_counts *c, char **cause)
{
	struct queue_sqlite *q = arg;
	sqlite3_stmt *st = q->st[QUEUE_COUNTS];

	if (sqlite3_bind_text(st, 1, job, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 2, now) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW)
		return (queue_error(q, st, cause));
	c->available = (size_t)sqlite3_column_int64(st, 0);
	c->delayed = (size_t)sqlite3_column_int64(st, 1);
	c->running = (size_t)sqlite3_column_int64(st, 2);
	c->dead = (size_t)sqlite3_column_int64(st, 3);
	sqlite3_reset(st);
	return (0);
}

/* A row of QUEUE_LIST_DEAD, as a message without its payload. */
static void
queue_dead_fill(sqlite3_stmt *st, struct queue_msg *m)
{
	const char *e;

	memset(m, 0, sizeof(*m));
	m->id = sqlite3_column_int64(st, 0);
	m->attempts = sqlite3_column_int(st, 1);
	m->last_exit = (int)queue_column_opt(st, 2, -1);
	m->last_signal = (int)queue_column_opt(st, 3, -1);
	e = (const char *)sqlite3_column_text(st, 4);
	m->last_error = e != NULL ? xstrdup(e) : NULL;
	m->updated = sqlite3_column_int64(st, 5);
	m->len = (size_t)sqlite3_column_int64(st, 6);
	m->priority = sqlite3_column_int(st, 7);
	m->due = sqlite3_column_int64(st, 8);
	m->created = sqlite3_column_int64(st, 9);
	m->state = QUEUE_DEAD;
}

static int
queue_sqlite_list_dead(void *be, const char *job, int limit, queue_msg_cb cb,
    void *arg, char **cause)
{
	struct queue_sqlite *q = be;
	sqlite3_stmt *st = q->st[QUEUE_LIST_DEAD];
	struct queue_msg m;
	int rc;

	if (sqlite3_bind_text(st, 1, job, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int(st, 2, limit < 0 ? -1 : limit) != SQLITE_OK)
		return (queue_error(q, st, cause));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		queue_dead_fill(st, &m);
		cb(&m, arg);
		queue_msg_clear(&m);
	}
	if (rc != SQLITE_DONE)
		return (queue_error(q, st, cause));
	sqlite3_reset(st);
	return (0);
}

static int
queue_sqlite_dead_output(void *be, const char *job, int64_t id,
    struct queue_msg *m, void **out, size_t *olen, int *found, char **cause)
{
	struct queue_sqlite *q = be;
	sqlite3_stmt *st = q->st[QUEUE_DEAD_OUTPUT];
	const void *p;
	int rc;

	if (sqlite3_bind_int64(st, 1, id) != SQLITE_OK ||
	    sqlite3_bind_text(st, 2, job, -1, SQLITE_STATIC) != SQLITE_OK)
		return (queue_error(q, st, cause));
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*found = 1;
		queue_dead_fill(st, m);
		p = sqlite3_column_blob(st, 10);
		*olen = (size_t)sqlite3_column_bytes(st, 10);
		if (*olen > 0) {
			*out = xmalloc(*olen);
			memcpy(*out, p, *olen);
		}
		rc = sqlite3_step(st);
	}
	if (rc != SQLITE_DONE) {
		if (*found)
			queue_msg_clear(m);
		free(*out);
		*out = NULL;
		*olen = 0;
		*found = 0;
		return (queue_error(q, st, cause));
	}
	sqlite3_reset(st);
	return (0);
}

static int
queue_sqlite_retry(void *arg, int64_t id, int64_t now, int *found, char **cause)
{
	struct queue_sqlite *q = arg;
	sqlite3_stmt *st = q->st[QUEUE_RETRY];

	if (sqlite3_bind_int64(st, 1, id) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 2, now) != SQLITE_OK)
		return (queue_error(q, st, cause));
	if (queue_step_done(q, st, cause) == -1)
		return (-1);
	*found = sqlite3_changes(q->db) > 0;
	return (0);
}

static int
queue_sqlite_delete(void *arg, int64_t id, int *found, char **cause)
{
	struct queue_sqlite *q = arg;
	sqlite3_stmt *st = q->st[QUEUE_DELETE];

	if (sqlite3_bind_int64(st, 1, id) != SQLITE_OK)
		return (queue_error(q, st, cause));
	if (queue_step_done(q, st, cause) == -1)
		return (-1);
	*found = sqlite3_changes(q->db) > 0;
	return (0);
}

static int
queue_sqlite_purge(
    void *arg, const char *job, int dead_only, size_t *n, char **cause)
{
	struct queue_sqlite *q = arg;
	sqlite3_stmt *st = q->st[QUEUE_PURGE];

	if (sqlite3_bind_text(st, 1, job, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int(st, 2, dead_only != 0) != SQLITE_OK)
		return (queue_error(q, st, cause));
	if (queue_step_done(q, st, cause) == -1)
		return (-1);
	if (n != NULL)
		*n = (size_t)sqlite3_changes(q->db);
	return (0);
}

/* Finalise the statements and free the backend.  NULL is a no-op. */
static void
queue_sqlite_close(void *arg)
{
	struct queue_sqlite *q = arg;
	int i;

	if (q == NULL)
		return;
	for (i = 0; i < QUEUE_NSTMT; i++)
		sqlite3_finalize(q->st[i]);
	free(q);
}

static const struct queue_ops queue_sqlite_ops = {
	.name = "sqlite",
	.enqueue = queue_sqlite_enqueue,
	.claim = queue_sqlite_claim,
	.claim_batch = queue_sqlite_claim_batch,
	.next_due = queue_sqlite_next_due,
	.done = queue_sqlite_done,
	.fail = queue_sqlite_fail,
	.release = queue_sqlite_release,
	.recover = queue_sqlite_recover,
	.counts = queue_sqlite_counts,
	.list_dead = queue_sqlite_list_dead,
	.dead_output = queue_sqlite_dead_output,
	.retry = queue_sqlite_retry,
	.delete = queue_sqlite_delete,
	.purge = queue_sqlite_purge,
	.close = queue_sqlite_close,
};

/*
 * Open the SQLite backend: prepare the queue's statements on the store's
 * connection.  Return the queue, to be closed with queue_close before
 * store_close, or NULL with *cause.
 */
struct queue *
queue_open(struct store *s, char **cause)
{
	struct queue_sqlite *q;
	int i;

	q = xcalloc(1, sizeof(*q));
	q->s = s;
	q->db = store_db(s);
	for (i = 0; i < QUEUE_NSTMT; i++) {
		if (sqlite3_prepare_v3(q->db, queue_sql[i], -1,
		        SQLITE_PREPARE_PERSISTENT, &q->st[i],
		        NULL) != SQLITE_OK) {
			if (cause != NULL)
				xasprintf(cause, "state.db: %s",
				    sqlite3_errmsg(q->db));
			queue_sqlite_close(q);
			return (NULL);
		}
	}
	return (queue_create(&queue_sqlite_ops, q));
}
