/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Tests of the job queue's messages in state.db, each in a fresh temporary
 * directory with real files: the round trip, claim order, delays, unique
 * keys, attempts, failures and dead messages, release and recovery,
 * counts, the operator's retry, delete and purge, the payload limit, the
 * migration of a version 1 file, batch claims, the claim's query plan,
 * the durable enqueue and, last, what a claim costs with 10 and 10,000
 * messages queued (printed as "# " lines).  SQLite is used directly only
 * to build old files, look at what the API does not show and fill the
 * queue fast.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "queue.h"
#include "store.h"
#include "test.h"

struct env {
	char dir[64];
	char path[128];
	struct store *s;
	struct queue *q;
};

/* A fresh directory with a new state.db and its queue. */
static int
env_open(struct env *e)
{
	char *cause = NULL;

	memset(e, 0, sizeof(*e));
	strlcpy(e->dir, "/tmp/test-queue.XXXXXX", sizeof(e->dir));
	if (mkdtemp(e->dir) == NULL)
		return (-1);
	snprintf(e->path, sizeof(e->path), "%s/state.db", e->dir);
	if ((e->s = store_open(e->path, &cause)) == NULL) {
		fprintf(stderr, "  %s\n", cause);
		free(cause);
		return (-1);
	}
	if ((e->q = queue_open(e->s, &cause)) == NULL) {
		fprintf(stderr, "  %s\n", cause);
		free(cause);
		store_close(e->s);
		return (-1);
	}
	return (0);
}

static void
env_close(struct env *e)
{
	queue_close(e->q);
	store_close(e->s);
	test_rmtree(e->dir);
}

/* Enqueue a text message with no unique key; return its id or -1. */
static int64_t
put(struct env *e, const char *job, const char *text, int priority, int64_t due)
{
	int64_t id = -1, existing;

	if (queue_enqueue(e->q, job, text, strlen(text), NULL, priority, due, 1,
	        &id, &existing, NULL) != 0)
		return (-1);
	return (id);
}

/* Claim one message of job at now and return its id (0 none, -1 error). */
static int64_t
take(struct env *e, const char *job, int64_t now, int *attempts)
{
	struct queue_msg m;
	int64_t id;
	int rc;

	if ((rc = queue_claim(e->q, job, now, &m, NULL)) != 1)
		return (rc);
	id = m.id;
	if (attempts != NULL)
		*attempts = m.attempts;
	queue_msg_clear(&m);
	return (id);
}

/* One integer from a query on the store's connection, -1 on an error. */
static int64_t
query_int(struct env *e, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -1;

	if (sqlite3_prepare_v2(store_db(e->s), sql, -1, &st, NULL) != SQLITE_OK)
		return (-1);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return (v);
}

TEST(round_trip)
{
	struct env e;
	struct queue_msg m;
	struct queue_counts c;
	static const char bytes[] = { 'a', '\0', 'b', '\0', '\0', 'c' };
	char *cause = NULL;
	int64_t id, id2, existing = 0;

	ASSERT_EQ(env_open(&e), 0);
	ASSERT_EQ(queue_enqueue(e.q, "mail", bytes, sizeof(bytes), NULL, 0, 100,
	              90, &id, &existing, &cause),
	    0);
	ASSERT_OK(cause == NULL);
	ASSERT_OK(id > 0);
	ASSERT_EQ(queue_enqueue(
	              e.q, "mail", NULL, 0, NULL, 0, 100, 91, &id2, NULL, NULL),
	    0);
	ASSERT_EQ(queue_claim(e.q, "mail", 100, &m, &cause), 1);
	ASSERT_EQ(m.id, id);
	ASSERT_EQ(m.len, sizeof(bytes));
	ASSERT_EQ(memcmp(m.payload, bytes, sizeof(bytes)), 0);
	ASSERT_EQ(((char *)m.payload)[m.len], '\0');
	ASSERT_EQ(m.attempts, 1);
	ASSERT_EQ(m.priority, 0);
	ASSERT_EQ(m.due, 100);
	ASSERT_EQ(m.created, 90);
	ASSERT_EQ(m.state, QUEUE_RUNNING);
	queue_msg_clear(&m);
	ASSERT_OK(m.payload == NULL);
	queue_msg_clear(NULL);
	/* The empty payload. */
	ASSERT_EQ(queue_claim(e.q, "mail", 100, &m, NULL), 1);
	ASSERT_EQ(m.id, id2);
	ASSERT_EQ(m.len, 0);
	ASSERT_STREQ(m.payload, "");
	queue_msg_clear(&m);
	ASSERT_EQ(queue_claim(e.q, "mail", 100, &m, NULL), 0);
	ASSERT_EQ(queue_claim(e.q, "other", 100, &m, NULL), 0);
	ASSERT_EQ(queue_done(e.q, id, NULL), 0);
	ASSERT_EQ(queue_done(e.q, id2, NULL), 0);
	ASSERT_EQ(queue_done(e.q, id2, NULL), 0); /* gone: not an error */
	ASSERT_EQ(queue_counts(e.q, "mail", 100, &c, NULL), 0);
	ASSERT_EQ(c.available + c.delayed + c.running + c.dead, 0);
	ASSERT_EQ(query_int(&e, "SELECT count(*) FROM queue"), 0);
	/* An empty queue never hands out an old id again. */
	ASSERT_EQ(queue_enqueue(
	              e.q, "mail", "x", 1, NULL, 0, 100, 92, &id, NULL, NULL),
	    0);
	ASSERT_OK(id > id2);
	env_close(&e);
	return (0);
}

TEST(order)
{
	struct env e;
	int64_t p0, p5late, p5a, p5b, p1, neg;

	ASSERT_EQ(env_open(&e), 0);
	ASSERT_OK((p0 = put(&e, "j", "p0", 0, 10)) > 0);
	ASSERT_OK((p5late = put(&e, "j", "p5late", 5, 30)) > 0);
	ASSERT_OK((p5a = put(&e, "j", "p5a", 5, 20)) > 0);
	ASSERT_OK((p5b = put(&e, "j", "p5b", 5, 20)) > 0);
	ASSERT_OK((p1 = put(&e, "j", "p1", 1, 5)) > 0);
	ASSERT_OK((neg = put(&e, "j", "neg", -3, 1)) > 0);
	ASSERT_EQ(take(&e, "j", 100, NULL), p5a);
	ASSERT_EQ(take(&e, "j", 100, NULL), p5b);
	ASSERT_EQ(take(&e, "j", 100, NULL), p5late);
	ASSERT_EQ(take(&e, "j", 100, NULL), p1);
	ASSERT_EQ(take(&e, "j", 100, NULL), p0);
	ASSERT_EQ(take(&e, "j", 100, NULL), neg);
	ASSERT_EQ(take(&e, "j", 100, NULL), 0);
	env_close(&e);
	return (0);
}

TEST(delayed_and_next_due)
{
	struct env e;
	int64_t a, b, due;

	ASSERT_EQ(env_open(&e), 0);
	ASSERT_EQ(queue_next_due(e.q, "j", &due, NULL), 0);
	ASSERT_EQ(due, 0);
	ASSERT_OK((a = put(&e, "j", "a", 9, 1000)) > 0);
	ASSERT_OK((b = put(&e, "j", "b", 0, 500)) > 0);
	ASSERT_EQ(queue_next_due(e.q, "j", &due, NULL), 0);
	ASSERT_EQ(due, 500);
	ASSERT_EQ(take(&e, "j", 100, NULL), 0);
	ASSERT_EQ(take(&e, "j", 499, NULL), 0);
	/* The higher priority is not due yet: the due one goes first. */
	ASSERT_EQ(take(&e, "j", 500, NULL), b);
	ASSERT_EQ(queue_next_due(e.q, "j", &due, NULL), 0);
	ASSERT_EQ(due, 1000);
	ASSERT_EQ(take(&e, "j", 999, NULL), 0);
	ASSERT_EQ(take(&e, "j", 1000, NULL), a);
	/* Running messages have no due time to wait for. */
	ASSERT_EQ(queue_next_due(e.q, "j", &due, NULL), 0);
	ASSERT_EQ(due, 0);
	env_close(&e);
	return (0);
}

TEST(unique)
{
	struct env e;
	int64_t a, b, c, x, existing;
	int dead;

	ASSERT_EQ(env_open(&e), 0);
	ASSERT_EQ(
	    queue_enqueue(e.q, "j", "1", 1, "k", 0, 0, 1, &a, &existing, NULL),
	    0);
	existing = 0;
	ASSERT_EQ(
	    queue_enqueue(e.q, "j", "2", 1, "k", 0, 0, 1, &x, &existing, NULL),
	    1);
	ASSERT_EQ(existing, a);
	/* Another job, or no key: no conflict. */
	ASSERT_EQ(queue_enqueue(
	              e.q, "other", "3", 1, "k", 0, 0, 1, &x, &existing, NULL),
	    0);
	ASSERT_OK(put(&e, "j", "nokey", 0, 0) > 0);
	ASSERT_OK(put(&e, "j", "nokey", 0, 0) > 0);
	/* Running: still refused. */
	ASSERT_EQ(take(&e, "j", 1, NULL), a);
	existing = 0;
	ASSERT_EQ(
	    queue_enqueue(e.q, "j", "2", 1, "k", 0, 0, 1, &x, &existing, NULL),
	    1);
	ASSERT_EQ(existing, a);
	/* Done: allowed again. */
	ASSERT_EQ(queue_done(e.q, a, NULL), 0);
	ASSERT_EQ(
	    queue_enqueue(e.q, "j", "2", 1, "k", 9, 0, 1, &b, &existing, NULL),
	    0);
	ASSERT_NE(b, a);
	/* Dead: allowed again. */
	ASSERT_EQ(take(&e, "j", 1, NULL), b);
	ASSERT_EQ(
	    queue_fail(e.q, b, 1, 5, 1, -1, NULL, NULL, 0, 2, &dead, NULL), 0);
	ASSERT_EQ(dead, 1);
	ASSERT_EQ(
	    queue_enqueue(e.q, "j", "3", 1, "k", 0, 0, 1, &c, &existing, NULL),
	    0);
	ASSERT_NE(c, b);
	env_close(&e);
	return (0);
}

TEST(attempts_fail_dead)
{
	struct env e;
	struct queue_counts c;
	sqlite3_stmt *st;
	static const char out[] = { 't', 'a', 'i', 'l', '\0', 'x' };
	int64_t a, k;
	int attempts, dead;

	ASSERT_EQ(env_open(&e), 0);
	ASSERT_OK((a = put(&e, "j", "a", 0, 10)) > 0);
	ASSERT_EQ(take(&e, "j", 100, &attempts), a);
	ASSERT_EQ(attempts, 1);
	ASSERT_EQ(query_int(&e, "SELECT attempts FROM queue"), 1);
	ASSERT_EQ(queue_fail(e.q, a, 3, 200, 1, -1, "exit 1", NULL, 0, 110,
	              &dead, NULL),
	    0);
	ASSERT_EQ(dead, 0);
	ASSERT_EQ(queue_counts(e.q, "j", 150, &c, NULL), 0);
	ASSERT_EQ(c.delayed, 1);
	ASSERT_EQ(c.available, 0);
	ASSERT_EQ(take(&e, "j", 199, NULL), 0);
	ASSERT_EQ(take(&e, "j", 200, &attempts), a);
	ASSERT_EQ(attempts, 2);
	ASSERT_EQ(
	    queue_fail(e.q, a, 3, 300, 1, -1, NULL, NULL, 0, 210, &dead, NULL),
	    0);
	ASSERT_EQ(dead, 0);
	ASSERT_EQ(take(&e, "j", 300, &attempts), a);
	ASSERT_EQ(attempts, 3);
	ASSERT_EQ(queue_fail(e.q, a, 3, 400, 3, -1, "boom", out, sizeof(out),
	              310, &dead, NULL),
	    0);
	ASSERT_EQ(dead, 1);
	ASSERT_EQ(take(&e, "j", 1000, NULL), 0);
	ASSERT_EQ(queue_counts(e.q, "j", 1000, &c, NULL), 0);
	ASSERT_EQ(c.dead, 1);
	ASSERT_EQ(c.available + c.delayed + c.running, 0);
	ASSERT_EQ(sqlite3_prepare_v2(store_db(e.s),
	              "SELECT state, due, last_exit, last_signal, last_error, "
	              "output, updated FROM queue WHERE id = ?1",
	              -1, &st, NULL),
	    SQLITE_OK);
	sqlite3_bind_int64(st, 1, a);
	ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
	ASSERT_EQ(sqlite3_column_int(st, 0), QUEUE_DEAD);
	ASSERT_EQ(sqlite3_column_int64(st, 1), 300); /* kept */
	ASSERT_EQ(sqlite3_column_int(st, 2), 3);
	ASSERT_EQ(sqlite3_column_type(st, 3), SQLITE_NULL);
	ASSERT_STREQ((const char *)sqlite3_column_text(st, 4), "boom");
	ASSERT_EQ(sqlite3_column_bytes(st, 5), sizeof(out));
	ASSERT_EQ(memcmp(sqlite3_column_blob(st, 5), out, sizeof(out)), 0);
	ASSERT_EQ(sqlite3_column_int64(st, 6), 310);
	sqlite3_finalize(st);

	/* Killed by a signal; max 1 kills at the first failure. */
	ASSERT_OK((k = put(&e, "j", "k", 0, 0)) > 0);
	ASSERT_EQ(take(&e, "j", 1000, NULL), k);
	ASSERT_EQ(queue_fail(e.q, k, 1, 2000, -1, 9, "killed", NULL, 0, 1001,
	              &dead, NULL),
	    0);
	ASSERT_EQ(dead, 1);
	ASSERT_EQ(query_int(&e,
	              "SELECT last_signal FROM queue WHERE "
	              "last_exit IS NULL AND output IS NULL"),
	    9);
	/* A message no longer running is left alone. */
	ASSERT_EQ(queue_fail(
	              e.q, k, 1, 2000, 1, -1, NULL, NULL, 0, 1002, &dead, NULL),
	    0);
	ASSERT_EQ(dead, 0);
	ASSERT_EQ(queue_fail(e.q, 999, 1, 2000, 1, -1, NULL, NULL, 0, 1002,
	              &dead, NULL),
	    0);
	ASSERT_EQ(dead, 0);
	env_close(&e);
	return (0);
}

TEST(release)
{
	struct env e;
	int64_t a;
	int attempts;

	ASSERT_EQ(env_open(&e), 0);
	ASSERT_OK((a = put(&e, "j", "a", 0, 50)) > 0);
	ASSERT_EQ(take(&e, "j", 100, &attempts), a);
	ASSERT_EQ(attempts, 1);
	ASSERT_EQ(queue_release(e.q, a, NULL), 0);
	ASSERT_EQ(query_int(&e, "SELECT attempts FROM queue"), 0);
	ASSERT_EQ(query_int(&e, "SELECT state FROM queue"), QUEUE_AVAILABLE);
	ASSERT_EQ(query_int(&e, "SELECT due FROM queue"), 50);
	ASSERT_EQ(take(&e, "j", 100, &attempts), a);
	ASSERT_EQ(attempts, 1);
	/* Released twice, or not running: no change. */
	ASSERT_EQ(queue_release(e.q, a, NULL), 0);
	ASSERT_EQ(queue_release(e.q, a, NULL), 0);
	ASSERT_EQ(query_int(&e, "SELECT attempts FROM queue"), 0);
	env_close(&e);
	return (0);
}

TEST(recover)
{
	struct env e;
	struct queue_counts c;
	size_t n = 99;
	int attempts;

	ASSERT_EQ(env_open(&e), 0);
	ASSERT_OK(put(&e, "a", "1", 0, 0) > 0);
	ASSERT_OK(put(&e, "a", "2", 0, 0) > 0);
	ASSERT_OK(put(&e, "a", "3", 0, 0) > 0);
	ASSERT_OK(put(&e, "b", "1", 0, 0) > 0);
	ASSERT_OK(take(&e, "a", 1, NULL) > 0);
	ASSERT_OK(take(&e, "a", 1, NULL) > 0);
	ASSERT_OK(take(&e, "b", 1, NULL) > 0);
	ASSERT_EQ(queue_recover(e.q, "a", &n, NULL), 0);
	ASSERT_EQ(n, 2);
	ASSERT_EQ(queue_counts(e.q, "a", 1, &c, NULL), 0);
	ASSERT_EQ(c.available, 3);
	ASSERT_EQ(c.running, 0);
	ASSERT_EQ(queue_counts(e.q, "b", 1, &c, NULL), 0);
	ASSERT_EQ(c.running, 1);
	ASSERT_EQ(queue_recover(e.q, NULL, &n, NULL), 0);
	ASSERT_EQ(n, 1);
	ASSERT_EQ(queue_recover(e.q, NULL, NULL, NULL), 0);
	/* The attempt counted at claim is kept. */
	ASSERT_OK(take(&e, "b", 1, &attempts) > 0);
	ASSERT_EQ(attempts, 2);
	env_close(&e);
	return (0);
}

TEST(counts)
{
	struct env e;
	struct queue_counts c;
	int64_t r, d;
	int dead;

	ASSERT_EQ(env_open(&e), 0);
	ASSERT_OK(put(&e, "j", "due", 0, 10) > 0);
	ASSERT_OK(put(&e, "j", "due now", 0, 100) > 0);
	ASSERT_OK(put(&e, "j", "later", 0, 101) > 0);
	ASSERT_OK(put(&e, "j", "much later", 0, 5000) > 0);
	ASSERT_OK((r = put(&e, "j", "run", 9, 0)) > 0);
	ASSERT_OK((d = put(&e, "j", "die", 8, 0)) > 0);
	ASSERT_OK(put(&e, "other", "x", 0, 0) > 0);
	ASSERT_EQ(take(&e, "j", 100, NULL), r);
	ASSERT_EQ(take(&e, "j", 100, NULL), d);
	ASSERT_EQ(
	    queue_fail(e.q, d, 1, 0, 1, -1, NULL, NULL, 0, 100, &dead, NULL),
	    0);
	ASSERT_EQ(queue_counts(e.q, "j", 100, &c, NULL), 0);
	ASSERT_EQ(c.available, 2);
	ASSERT_EQ(c.delayed, 2);
	ASSERT_EQ(c.running, 1);
	ASSERT_EQ(c.dead, 1);
	ASSERT_EQ(queue_counts(e.q, "none", 100, &c, NULL), 0);
	ASSERT_EQ(c.available + c.delayed + c.running + c.dead, 0);
	env_close(&e);
	return (0);
}

struct dead_list {
	struct queue_msg m[8];
	char err[8][32];
	int n;
};

static void
collect_dead(const struct queue_msg *m, void *arg)
{
	struct dead_list *l = arg;

	if (l->n < 8) {
		l->m[l->n] = *m;
		l->m[l->n].last_error = NULL;
		strlcpy(l->err[l->n],
		    m->last_error != NULL ? m->last_error : "(none)",
		    sizeof(l->err[0]));
	}
	l->n++;
}

/* Put, claim and fail a message of job once with max_attempts 1. */
static int64_t
kill_one(struct env *e, const char *job, const char *text, int code, int sig,
    const char *error, int64_t now)
{
	int64_t id;
	int dead;

	if ((id = put(e, job, text, 100, 0)) <= 0 ||
	    take(e, job, now, NULL) != id)
		return (-1);
	if (queue_fail(e->q, id, 1, 0, code, sig, error, NULL, 0, now, &dead,
	        NULL) == -1 ||
	    !dead)
		return (-1);
	return (id);
}

TEST(list_dead)
{
	struct env e;
	struct dead_list l;
	int64_t a, b;

	ASSERT_EQ(env_open(&e), 0);
	ASSERT_OK((a = kill_one(&e, "j", "12345", 2, -1, "exit 2", 10)) > 0);
	ASSERT_OK((b = kill_one(&e, "j", "xy", -1, 15, NULL, 20)) > 0);
	ASSERT_OK(kill_one(&e, "other", "z", 1, -1, NULL, 30) > 0);
	ASSERT_OK(put(&e, "j", "alive", 0, 0) > 0);
	memset(&l, 0, sizeof(l));
	ASSERT_EQ(queue_list_dead(e.q, "j", -1, collect_dead, &l, NULL), 0);
	ASSERT_EQ(l.n, 2);
	ASSERT_EQ(l.m[0].id, a);
	ASSERT_EQ(l.m[0].attempts, 1);
	ASSERT_EQ(l.m[0].last_exit, 2);
	ASSERT_EQ(l.m[0].last_signal, -1);
	ASSERT_STREQ(l.err[0], "exit 2");
	ASSERT_EQ(l.m[0].updated, 10);
	ASSERT_EQ(l.m[0].len, 5);
	ASSERT_OK(l.m[0].payload == NULL);
	ASSERT_EQ(l.m[0].state, QUEUE_DEAD);
	ASSERT_EQ(l.m[1].id, b);
	ASSERT_EQ(l.m[1].last_exit, -1);
	ASSERT_EQ(l.m[1].last_signal, 15);
	ASSERT_STREQ(l.err[1], "(none)");
	ASSERT_EQ(l.m[1].len, 2);
	memset(&l, 0, sizeof(l));
	ASSERT_EQ(queue_list_dead(e.q, "j", 1, collect_dead, &l, NULL), 0);
	ASSERT_EQ(l.n, 1);
	ASSERT_EQ(l.m[0].id, a);
	env_close(&e);
	return (0);
}

TEST(retry_delete_purge)
{
	struct env e;
	struct queue_counts c;
	int64_t d1, d2, late, run, avail;
	size_t n;
	int found, attempts;

	ASSERT_EQ(env_open(&e), 0);
	ASSERT_OK((d1 = kill_one(&e, "j", "d1", 1, -1, NULL, 10)) > 0);
	ASSERT_OK((d2 = kill_one(&e, "j", "d2", 1, -1, NULL, 10)) > 0);
	ASSERT_OK((late = put(&e, "j", "late", 0, 10000)) > 0);
	ASSERT_OK((run = put(&e, "j", "run", 50, 0)) > 0);
	ASSERT_EQ(take(&e, "j", 20, NULL), run);
	ASSERT_OK((avail = put(&e, "j", "avail", 0, 0)) > 0);

	/* Retry: a dead one comes back now with its attempts at 0. */
	ASSERT_EQ(queue_retry(e.q, d1, 30, &found, NULL), 0);
	ASSERT_EQ(found, 1);
	ASSERT_EQ(query_int(&e, "SELECT attempts FROM queue WHERE id = 1"), 0);
	ASSERT_EQ(queue_retry(e.q, late, 30, &found, NULL), 0);
	ASSERT_EQ(found, 1);
	ASSERT_EQ(queue_retry(e.q, run, 30, &found, NULL), 0);
	ASSERT_EQ(found, 0);
	ASSERT_EQ(queue_retry(e.q, 999, 30, &found, NULL), 0);
	ASSERT_EQ(found, 0);
	ASSERT_EQ(queue_counts(e.q, "j", 30, &c, NULL), 0);
	ASSERT_EQ(c.available, 3);
	ASSERT_EQ(c.delayed, 0);
	ASSERT_EQ(c.running, 1);
	ASSERT_EQ(c.dead, 1);
	ASSERT_EQ(take(&e, "j", 30, &attempts), d1); /* priority 100 */
	ASSERT_EQ(attempts, 1);
	ASSERT_EQ(queue_release(e.q, d1, NULL), 0);

	/* Delete. */
	ASSERT_EQ(queue_delete(e.q, d1, &found, NULL), 0);
	ASSERT_EQ(found, 1);
	ASSERT_EQ(take(&e, "j", 30, NULL), avail); /* then due 0 */
	ASSERT_EQ(queue_release(e.q, avail, NULL), 0);
	ASSERT_EQ(queue_delete(e.q, d1, &found, NULL), 0);
	ASSERT_EQ(found, 0);

	/* Purge the dead, then all but the running one. */
	ASSERT_OK(kill_one(&e, "j", "d3", 1, -1, NULL, 40) > 0);
	ASSERT_OK(kill_one(&e, "other", "o", 1, -1, NULL, 40) > 0);
	ASSERT_EQ(queue_purge(e.q, "j", 1, &n, NULL), 0);
	ASSERT_EQ(n, 2); /* d2, d3 */
	ASSERT_EQ(queue_counts(e.q, "j", 30, &c, NULL), 0);
	ASSERT_EQ(c.dead, 0);
	ASSERT_EQ(c.available, 2); /* late, avail */
	ASSERT_EQ(queue_purge(e.q, "j", 0, &n, NULL), 0);
	ASSERT_EQ(n, 2);
	ASSERT_EQ(queue_counts(e.q, "j", 30, &c, NULL), 0);
	ASSERT_EQ(c.available + c.delayed + c.dead, 0);
	ASSERT_EQ(c.running, 1);
	ASSERT_EQ(queue_counts(e.q, "other", 30, &c, NULL), 0);
	ASSERT_EQ(c.dead, 1);
	ASSERT_EQ(queue_purge(e.q, "j", 0, NULL, NULL), 0);
	(void)d2;
	env_close(&e);
	return (0);
}

TEST(payload_limit)
{
	struct env e;
	struct queue_msg m;
	char *big, *cause = NULL;
	int64_t id = 0, existing = 0;

	ASSERT_EQ(env_open(&e), 0);
	big = calloc(1, QUEUE_PAYLOAD_MAX + 1);
	ASSERT_OK(big != NULL);
	big[QUEUE_PAYLOAD_MAX - 1] = 'z';
	ASSERT_EQ(queue_enqueue(e.q, "j", big, QUEUE_PAYLOAD_MAX + 1, NULL, 0,
	              0, 1, &id, &existing, &cause),
	    -1);
	ASSERT_STREQ(cause, "payload of 1048577 bytes is over the 1 MiB limit");
	free(cause);
	ASSERT_EQ(query_int(&e, "SELECT count(*) FROM queue"), 0);
	ASSERT_EQ(queue_enqueue(e.q, "j", big, QUEUE_PAYLOAD_MAX, NULL, 0, 0, 1,
	              &id, &existing, NULL),
	    0);
	ASSERT_EQ(queue_claim(e.q, "j", 1, &m, NULL), 1);
	ASSERT_EQ(m.len, QUEUE_PAYLOAD_MAX);
	ASSERT_EQ(memcmp(m.payload, big, QUEUE_PAYLOAD_MAX), 0);
	queue_msg_clear(&m);
	free(big);
	env_close(&e);
	return (0);
}

struct runs_seen {
	int n;
	char job[65];
};

static void
see_run(const struct store_run *r, void *arg)
{
	struct runs_seen *rs = arg;

	rs->n++;
	strlcpy(rs->job, r->job, sizeof(rs->job));
}

/* The schema of version 1, as shipped. */
static const char schema_v1[] =
    "CREATE TABLE runs (id INTEGER PRIMARY KEY, job TEXT NOT NULL, "
    "instance INTEGER NOT NULL, run_id TEXT NOT NULL, pid INTEGER, "
    "started INTEGER NOT NULL, ready INTEGER, ended INTEGER, "
    "exit_code INTEGER, signal INTEGER, reason TEXT);"
    "CREATE INDEX runs_job ON runs (job, id);"
    "CREATE INDEX runs_open ON runs (id) WHERE ended IS NULL;"
    "CREATE TABLE intent (job TEXT NOT NULL, instance INTEGER NOT NULL, "
    "held INTEGER NOT NULL, started INTEGER NOT NULL, uid INTEGER, "
    "at INTEGER, PRIMARY KEY (job, instance));"
    "INSERT INTO runs (job, instance, run_id, pid, started, ended, "
    "exit_code, reason) VALUES ('old', 0, 'r1', 42, 1, 2, 0, 'exited');"
    "PRAGMA journal_mode = WAL;"
    "PRAGMA user_version = 1;";

TEST(migration_from_v1)
{
	struct env e;
	struct runs_seen rs;
	sqlite3 *db;
	char *cause = NULL;
	int64_t id;

	memset(&e, 0, sizeof(e));
	strlcpy(e.dir, "/tmp/test-queue.XXXXXX", sizeof(e.dir));
	ASSERT_OK(mkdtemp(e.dir) != NULL);
	snprintf(e.path, sizeof(e.path), "%s/state.db", e.dir);
	ASSERT_EQ(sqlite3_open(e.path, &db), SQLITE_OK);
	ASSERT_EQ(sqlite3_exec(db, schema_v1, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);

	ASSERT_OK((e.s = store_open(e.path, &cause)) != NULL);
	ASSERT_OK(cause == NULL);
	ASSERT_OK((e.q = queue_open(e.s, &cause)) != NULL);
	ASSERT_EQ(query_int(&e, "PRAGMA user_version"), 5);
	memset(&rs, 0, sizeof(rs));
	ASSERT_EQ(store_history(e.s, "old", -1, see_run, &rs, NULL), 0);
	ASSERT_EQ(rs.n, 1);
	ASSERT_STREQ(rs.job, "old");
	ASSERT_OK((id = put(&e, "j", "new", 0, 0)) > 0);
	ASSERT_EQ(take(&e, "j", 1, NULL), id);
	queue_close(e.q);
	store_close(e.s);

	/* Opened again: nothing to migrate, nothing lost. */
	ASSERT_OK((e.s = store_open(e.path, &cause)) != NULL);
	ASSERT_OK(cause == NULL);
	ASSERT_OK((e.q = queue_open(e.s, &cause)) != NULL);
	ASSERT_EQ(query_int(&e, "PRAGMA user_version"), 5);
	ASSERT_EQ(
	    query_int(&e, "SELECT count(*) FROM queue WHERE state = 1"), 1);
	ASSERT_EQ(query_int(&e, "SELECT count(*) FROM runs"), 1);
	env_close(&e);
	return (0);
}

TEST(batch_claim)
{
	struct env e;
	struct queue_msg v[3];
	int64_t id[5];
	int i, n = -1;

	ASSERT_EQ(env_open(&e), 0);
	for (i = 0; i < 5; i++)
		ASSERT_OK((id[i] = put(&e, "j", "m", 5 - i, 0)) > 0);
	ASSERT_OK(put(&e, "j", "later", 99, 1000) > 0);
	ASSERT_EQ(queue_claim_batch(e.q, "j", 10, v, 3, &n, NULL), 0);
	ASSERT_EQ(n, 3);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(v[i].id, id[i]);
		ASSERT_EQ(v[i].attempts, 1);
		ASSERT_STREQ(v[i].payload, "m");
		queue_msg_clear(&v[i]);
	}
	ASSERT_EQ(query_int(&e,
	              "SELECT count(*) FROM queue WHERE state = 1 "
	              "AND attempts = 1"),
	    3);
	ASSERT_EQ(queue_claim_batch(e.q, "j", 10, v, 3, &n, NULL), 0);
	ASSERT_EQ(n, 2);
	ASSERT_EQ(v[0].id, id[3]);
	ASSERT_EQ(v[1].id, id[4]);
	queue_msg_clear(&v[0]);
	queue_msg_clear(&v[1]);
	ASSERT_EQ(queue_claim_batch(e.q, "j", 10, v, 3, &n, NULL), 0);
	ASSERT_EQ(n, 0);
	ASSERT_EQ(queue_claim_batch(e.q, "j", 1000, v, 0, &n, NULL), 0);
	ASSERT_EQ(n, 0);
	env_close(&e);
	return (0);
}

/* The query plan of sql on e's connection, steps joined by "; ". */
static void
query_plan(struct env *e, const char *sql, char *plan, size_t len)
{
	sqlite3_stmt *st;
	char buf[512];
	const char *d;

	snprintf(buf, sizeof(buf), "EXPLAIN QUERY PLAN %s", sql);
	plan[0] = '\0';
	if (sqlite3_prepare_v2(store_db(e->s), buf, -1, &st, NULL) != SQLITE_OK)
		return;
	while (sqlite3_step(st) == SQLITE_ROW) {
		d = (const char *)sqlite3_column_text(st, 3);
		strlcat(plan, d != NULL ? d : "", len);
		strlcat(plan, "; ", len);
	}
	sqlite3_finalize(st);
}

TEST(claim_uses_index)
{
	struct env e;
	char plan[1024];

	ASSERT_EQ(env_open(&e), 0);
	query_plan(&e, queue_claim_sql(), plan, sizeof(plan));
	printf("# claim plan: %s\n", plan);
	ASSERT_OK(strstr(plan, "USING INDEX queue_claim") != NULL ||
	    strstr(plan, "USING COVERING INDEX queue_claim") != NULL);
	ASSERT_OK(strstr(plan, "SCAN queue;") == NULL);
	ASSERT_OK(strstr(plan, "TEMP B-TREE") == NULL); /* no sort */
	env_close(&e);
	return (0);
}

/* The dispatcher's timer asks for the next due time: an index, no scan. */
TEST(next_due_uses_index)
{
	struct env e;
	char plan[1024];

	ASSERT_EQ(env_open(&e), 0);
	query_plan(&e, queue_next_due_sql(), plan, sizeof(plan));
	printf("# next due plan: %s\n", plan);
	ASSERT_OK(strstr(plan, "INDEX queue_due") != NULL);
	ASSERT_OK(strstr(plan, "SCAN queue") == NULL);
	env_close(&e);
	return (0);
}

/* Record the statements run on a connection, separated by "|". */
static int
trace_stmt(unsigned int type, void *ctx, void *p, void *x)
{
	char *buf = ctx;

	(void)type;
	(void)p;
	strlcat(buf, x, 4096);
	strlcat(buf, "|", 4096);
	return (0);
}

/* Where needle is in haystack, or -1. */
static long
at(const char *haystack, const char *needle)
{
	const char *p = strstr(haystack, needle);

	return (p == NULL ? -1 : p - haystack);
}

TEST(durable_enqueue)
{
	struct env e;
	sqlite3 *other;
	static char trace[4096];
	char *cause = NULL;
	int64_t id, existing;
	long full, begin, insert, commit, normal;

	ASSERT_EQ(env_open(&e), 0);
	ASSERT_EQ(query_int(&e, "PRAGMA synchronous"), 1); /* NORMAL */
	trace[0] = '\0';
	sqlite3_trace_v2(store_db(e.s), SQLITE_TRACE_STMT, trace_stmt, trace);
	ASSERT_OK(put(&e, "j", "x", 0, 0) > 0);
	sqlite3_trace_v2(store_db(e.s), 0, NULL, NULL);
	full = at(trace, "PRAGMA synchronous = 2");
	begin = at(trace, "BEGIN IMMEDIATE");
	insert = at(trace, "INSERT INTO queue");
	commit = at(trace, "COMMIT");
	normal = at(trace, "PRAGMA synchronous = 1");
	ASSERT_OK(full >= 0);
	ASSERT_OK(full < begin && begin < insert && insert < commit &&
	    commit < normal);
	ASSERT_EQ(query_int(&e, "PRAGMA synchronous"), 1);
	/* Other calls stay at NORMAL. */
	trace[0] = '\0';
	sqlite3_trace_v2(store_db(e.s), SQLITE_TRACE_STMT, trace_stmt, trace);
	ASSERT_OK(take(&e, "j", 1, NULL) > 0);
	sqlite3_trace_v2(store_db(e.s), 0, NULL, NULL);
	ASSERT_EQ(at(trace, "synchronous"), -1);

	/* Locked by another process: -1, NORMAL again, then it works. */
	ASSERT_EQ(sqlite3_open(e.path, &other), SQLITE_OK);
	ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL, NULL),
	    SQLITE_OK);
	ASSERT_EQ(queue_enqueue(
	              e.q, "j", "y", 1, NULL, 0, 0, 1, &id, &existing, &cause),
	    -1);
	ASSERT_OK(cause != NULL && strstr(cause, "locked") != NULL);
	ASSERT_EQ(store_is_busy(e.s), 1); /* noted for the caller */
	free(cause);
	ASSERT_EQ(query_int(&e, "PRAGMA synchronous"), 1);
	ASSERT_EQ(sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(other);
	ASSERT_OK(put(&e, "j", "y", 0, 0) > 0);
	ASSERT_EQ(query_int(&e, "SELECT count(*) FROM queue"), 2);
	env_close(&e);
	return (0);
}

/* The pages of the database SQLite asked its cache for since the last. */
static double
pages_read(sqlite3 *db)
{
	int hit = 0, miss = 0, hi;

	sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_HIT, &hit, &hi, 1);
	sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_MISS, &miss, &hi, 1);
	return ((double)hit + miss);
}

/*
 * The average cost of n claims + done of job, in pages read (a measure
 * of work that a busy machine does not change, as time would), refilling
 * the queue after each with fill (not counted) when it is not NULL.
 */
static double
cost_claims(struct env *e, const char *job, int n, sqlite3_stmt *fill)
{
	struct queue_msg m;
	sqlite3 *db = store_db(e->s);
	double total = 0;
	int i;

	for (i = 0; i < n; i++) {
		(void)pages_read(db);
		if (queue_claim(e->q, job, 1000000, &m, NULL) != 1 ||
		    queue_done(e->q, m.id, NULL) == -1) {
			queue_msg_clear(&m);
			return (-1);
		}
		total += pages_read(db);
		queue_msg_clear(&m);
		if (fill != NULL) {
			if (sqlite3_step(fill) != SQLITE_DONE)
				return (-1);
			sqlite3_reset(fill);
		}
	}
	return (total / n);
}

#define FILL                                                                   \
	"INSERT INTO queue (job, payload, priority, state, due, attempts, "    \
	"created, updated) SELECT ?1, randomblob(100), x % 3, 0, x, 0, 0, 0 "  \
	"FROM c"

/*
 * With 10 and with 10,000 messages queued, 1,000 claims + done.  The
 * claim walks the index, so more messages must not cost much more: the
 * pages read, not the time (the bench times it).
 */
TEST(scale)
{
	struct env e;
	sqlite3_stmt *fill;
	double small, big;

	ASSERT_EQ(env_open(&e), 0);
	ASSERT_EQ(sqlite3_prepare_v2(store_db(e.s),
	              "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
	              "FROM c WHERE x < ?2) " FILL,
	              -1, &fill, NULL),
	    SQLITE_OK);
	sqlite3_bind_text(fill, 1, "big", -1, SQLITE_STATIC);
	sqlite3_bind_int(fill, 2, 10000);
	ASSERT_EQ(sqlite3_step(fill), SQLITE_DONE);
	sqlite3_reset(fill);
	sqlite3_bind_text(fill, 1, "small", -1, SQLITE_STATIC);
	sqlite3_bind_int(fill, 2, 10);
	ASSERT_EQ(sqlite3_step(fill), SQLITE_DONE);
	sqlite3_reset(fill);
	sqlite3_bind_int(fill, 2, 1);

	ASSERT_OK(cost_claims(&e, "small", 100, fill) > 0); /* warm up */
	ASSERT_EQ(query_int(&e,
	              "SELECT count(*) FROM queue WHERE job = "
	              "'small' AND state = 0"),
	    10);
	ASSERT_OK((small = cost_claims(&e, "small", 1000, fill)) > 0);
	ASSERT_OK((big = cost_claims(&e, "big", 1000, NULL)) > 0);
	sqlite3_finalize(fill);
	printf("# claim + done: %.1f pages read with 10 queued, %.1f with "
	       "10000 queued (ratio %.2f)\n",
	    small, big, big / small);
	ASSERT_OK(big <= 3 * small);
	ASSERT_EQ(query_int(&e, "SELECT count(*) FROM queue WHERE job = 'big'"),
	    9000);
	env_close(&e);
	return (0);
}

int
main(void)
{
	RUN(round_trip);
	RUN(order);
	RUN(delayed_and_next_due);
	RUN(unique);
	RUN(attempts_fail_dead);
	RUN(release);
	RUN(recover);
	RUN(counts);
	RUN(list_dead);
	RUN(retry_delete_purge);
	RUN(payload_limit);
	RUN(migration_from_v1);
	RUN(batch_claim);
	RUN(claim_uses_index);
	RUN(next_due_uses_index);
	RUN(durable_enqueue);
	RUN(scale);
	TEST_MAIN_END();
}
