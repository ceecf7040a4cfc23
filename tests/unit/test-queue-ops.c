/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Tests of the queue's seam (struct queue_ops): a handle made with
 * queue_create on a stub backend passes each queue_* call to the stub's
 * function of that name, with its arguments and the backend's data, and
 * hands back its result; the checks common to every backend (the payload
 * limit, a batch of none) stop a call before the backend; queue_close
 * closes the backend.  So a second backend (PostgreSQL) needs no change
 * to the callers.
 */

#include "config.h"

#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue.h"
#include "test.h"

/* What the stub saw: the last call, its backend data and its numbers. */
struct stub {
	char last[16];
	int calls;
	void *be;
	const char *job;
	int64_t id, now;
	int num; /* priority, max, max_attempts, limit or dead_only */
	size_t len;
	int closed;
	int ret; /* what each call returns */
};

static struct stub stub;

static void
stub_saw(void *be, const char *what)
{
	strlcpy(stub.last, what, sizeof(stub.last));
	stub.calls++;
	stub.be = be;
}

static int
stub_enqueue(void *be, const char *job, const void *payload, size_t len,
    const char *unique_key, int priority, int64_t due, int64_t now, int64_t *id,
    int64_t *existing, char **cause)
{
	stub_saw(be, "enqueue");
	stub.job = job;
	stub.len = len;
	stub.num = priority;
	stub.now = now;
	*id = 41;
	return (stub.ret);
}

static int
stub_claim(
    void *be, const char *job, int64_t now, struct queue_msg *m, char **cause)
{
	stub_saw(be, "claim");
	stub.job = job;
	stub.now = now;
	m->id = 7;
	return (stub.ret);
}

static int
stub_claim_batch(void *be, const char *job, int64_t now, struct queue_msg *v,
    int max, int *n, char **cause)
{
	stub_saw(be, "claim_batch");
	stub.job = job;
	stub.num = max;
	*n = max;
	return (stub.ret);
}

static int
stub_next_due(void *be, const char *job, int64_t *due, char **cause)
{
	stub_saw(be, "next_due");
	stub.job = job;
	*due = 99;
	return (stub.ret);
}

static int
stub_done(void *be, int64_t id, char **cause)
{
	stub_saw(be, "done");
	stub.id = id;
	return (stub.ret);
}

static int
stub_fail(void *be, int64_t id, int max_attempts, int64_t retry_at,
    int exit_code, int sig, const char *error, const void *output,
    size_t outlen, int64_t now, int *dead, char **cause)
{
	stub_saw(be, "fail");
	stub.id = id;
	stub.num = max_attempts;
	stub.len = outlen;
	stub.now = now;
	*dead = 1;
	return (stub.ret);
}

static int
stub_release(void *be, int64_t id, char **cause)
{
	stub_saw(be, "release");
	stub.id = id;
	return (stub.ret);
}

static int
stub_recover(void *be, const char *job, size_t *n, char **cause)
{
	stub_saw(be, "recover");
	stub.job = job;
	*n = 3;
	return (stub.ret);
}

static int
stub_counts(void *be, const char *job, int64_t now, struct queue_counts *c,
    char **cause)
{
	stub_saw(be, "counts");
	stub.job = job;
	stub.now = now;
	c->dead = 5;
	return (stub.ret);
}

static int
stub_list_dead(void *be, const char *job, int limit, queue_msg_cb cb, void *arg,
    char **cause)
{
	struct queue_msg m;

	stub_saw(be, "list_dead");
	stub.job = job;
	stub.num = limit;
	memset(&m, 0, sizeof(m));
	m.id = 12;
	cb(&m, arg);
	return (stub.ret);
}

static int
stub_retry(void *be, int64_t id, int64_t now, int *found, char **cause)
{
	stub_saw(be, "retry");
	stub.id = id;
	stub.now = now;
	*found = 1;
	return (stub.ret);
}

static int
stub_delete(void *be, int64_t id, int *found, char **cause)
{
	stub_saw(be, "delete");
	stub.id = id;
	*found = 1;
	return (stub.ret);
}

static int
stub_purge(void *be, const char *job, int dead_only, size_t *n, char **cause)
{
	stub_saw(be, "purge");
	stub.job = job;
	stub.num = dead_only;
	*n = 2;
	return (stub.ret);
}

static void
stub_close(void *be)
{
	stub_saw(be, "close");
	stub.closed++;
}

static const struct queue_ops stub_ops = {
	.name = "stub",
	.enqueue = stub_enqueue,
	.claim = stub_claim,
	.claim_batch = stub_claim_batch,
	.next_due = stub_next_due,
	.done = stub_done,
	.fail = stub_fail,
	.release = stub_release,
	.recover = stub_recover,
	.counts = stub_counts,
	.list_dead = stub_list_dead,
	.retry = stub_retry,
	.delete = stub_delete,
	.purge = stub_purge,
	.close = stub_close,
};

static int be_data; /* the stub's "connection": its address is checked */

/* A handle on the stub, the stub's record cleared. */
static struct queue *
stub_open(int ret)
{
	memset(&stub, 0, sizeof(stub));
	stub.ret = ret;
	return (queue_create(&stub_ops, &be_data));
}

/* Did the last call reach the stub's what, with the stub's data? */
static int
stub_was(const char *what)
{
	return (strcmp(stub.last, what) == 0 && stub.be == &be_data);
}

static void
count_dead(const struct queue_msg *m, void *arg)
{
	*(int64_t *)arg = m->id;
}

TEST(enqueue_and_claims)
{
	struct queue *q = stub_open(0);
	struct queue_msg v[4];
	int64_t id = 0, existing = 0, due = 0;
	int n = -1;

	ASSERT_EQ(queue_enqueue(
	              q, "j", "abc", 3, NULL, 5, 10, 20, &id, &existing, NULL),
	    0);
	ASSERT_OK(stub_was("enqueue"));
	ASSERT_STREQ(stub.job, "j");
	ASSERT_EQ(stub.len, 3);
	ASSERT_EQ(stub.num, 5);
	ASSERT_EQ(stub.now, 20);
	ASSERT_EQ(id, 41);
	stub.ret = 1;
	memset(v, 0, sizeof(v));
	ASSERT_EQ(queue_claim(q, "k", 30, &v[0], NULL), 1);
	ASSERT_OK(stub_was("claim"));
	ASSERT_STREQ(stub.job, "k");
	ASSERT_EQ(stub.now, 30);
	ASSERT_EQ(v[0].id, 7);
	stub.ret = 0;
	ASSERT_EQ(queue_claim_batch(q, "k", 30, v, 4, &n, NULL), 0);
	ASSERT_OK(stub_was("claim_batch"));
	ASSERT_EQ(stub.num, 4);
	ASSERT_EQ(n, 4);
	ASSERT_EQ(queue_next_due(q, "k", &due, NULL), 0);
	ASSERT_OK(stub_was("next_due"));
	ASSERT_EQ(due, 99);
	ASSERT_EQ(stub.calls, 4);
	queue_close(q);
	ASSERT_EQ(stub.closed, 1);
	ASSERT_OK(stub_was("close"));
	return (0);
}

TEST(outcomes)
{
	struct queue *q = stub_open(0);
	int dead = 0;

	ASSERT_EQ(queue_done(q, 8, NULL), 0);
	ASSERT_OK(stub_was("done"));
	ASSERT_EQ(stub.id, 8);
	ASSERT_EQ(queue_fail(
	              q, 9, 3, 100, 1, -1, "exit 1", "out", 3, 50, &dead, NULL),
	    0);
	ASSERT_OK(stub_was("fail"));
	ASSERT_EQ(stub.id, 9);
	ASSERT_EQ(stub.num, 3);
	ASSERT_EQ(stub.len, 3);
	ASSERT_EQ(stub.now, 50);
	ASSERT_EQ(dead, 1);
	ASSERT_EQ(queue_release(q, 10, NULL), 0);
	ASSERT_OK(stub_was("release"));
	ASSERT_EQ(stub.id, 10);
	queue_close(q);
	return (0);
}

TEST(operator_calls)
{
	struct queue *q = stub_open(0);
	struct queue_counts c;
	int64_t seen = 0;
	size_t n = 0;
	int found = 0;

	ASSERT_EQ(queue_recover(q, "j", &n, NULL), 0);
	ASSERT_OK(stub_was("recover"));
	ASSERT_EQ(n, 3);
	memset(&c, 0, sizeof(c));
	ASSERT_EQ(queue_counts(q, "j", 60, &c, NULL), 0);
	ASSERT_OK(stub_was("counts"));
	ASSERT_EQ(stub.now, 60);
	ASSERT_EQ(c.dead, 5);
	ASSERT_EQ(queue_list_dead(q, "j", 7, count_dead, &seen, NULL), 0);
	ASSERT_OK(stub_was("list_dead"));
	ASSERT_EQ(stub.num, 7);
	ASSERT_EQ(seen, 12);
	ASSERT_EQ(queue_retry(q, 11, 70, &found, NULL), 0);
	ASSERT_OK(stub_was("retry"));
	ASSERT_EQ(stub.id, 11);
	ASSERT_EQ(found, 1);
	found = 0;
	ASSERT_EQ(queue_delete(q, 12, &found, NULL), 0);
	ASSERT_OK(stub_was("delete"));
	ASSERT_EQ(found, 1);
	n = 0;
	ASSERT_EQ(queue_purge(q, "j", 1, &n, NULL), 0);
	ASSERT_OK(stub_was("purge"));
	ASSERT_EQ(stub.num, 1);
	ASSERT_EQ(n, 2);
	queue_close(q);
	return (0);
}

/* A backend's failure comes back as it is. */
TEST(failure_passes_through)
{
	struct queue *q = stub_open(-1);
	int found = 1;

	ASSERT_EQ(queue_done(q, 1, NULL), -1);
	ASSERT_EQ(queue_delete(q, 1, &found, NULL), -1);
	ASSERT_OK(stub_was("delete"));
	queue_close(q);
	return (0);
}

/* What every backend would refuse never reaches one. */
TEST(common_checks)
{
	struct queue *q = stub_open(0);
	struct queue_msg v[1];
	char *cause = NULL;
	int64_t id = 0, existing = 0;
	int n = 5;

	ASSERT_EQ(queue_enqueue(q, "j", "", QUEUE_PAYLOAD_MAX + 1, NULL, 0, 0,
	              0, &id, &existing, &cause),
	    -1);
	ASSERT_OK(cause != NULL && strstr(cause, "1 MiB") != NULL);
	free(cause);
	ASSERT_EQ(queue_claim_batch(q, "j", 0, v, 0, &n, NULL), 0);
	ASSERT_EQ(n, 0);
	ASSERT_EQ(stub.calls, 0);
	queue_close(q);
	queue_close(NULL);
	ASSERT_EQ(stub.closed, 1);
	return (0);
}

int
main(void)
{
	RUN(enqueue_and_claims);
	RUN(outcomes);
	RUN(operator_calls);
	RUN(failure_passes_through);
	RUN(common_checks);
	TEST_MAIN_END();
}
