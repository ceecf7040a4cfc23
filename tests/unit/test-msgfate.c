/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Tests of msg_fate(): every cell of (deleted, how the run ended, success,
 * exec failed, why it was stopped, attempts), each judged against the
 * rules as the documentation states them, one rule at a time.
 */

#include "config.h"

#include <sys/wait.h>

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "backoff.h"
#include "life.h"
#include "msgfate.h"
#include "test.h"

/* Wait statuses as waitpid gives them (W_EXITCODE, W_STOPCODE's kin). */
#define EXITED(c) ((c) << 8)
#define KILLED(s) (s)

static const int statuses[] = { -1, EXITED(0), EXITED(1), EXITED(127),
	KILLED(SIGKILL), KILLED(SIGTERM), KILLED(SIGSEGV) };
static const enum life_cause causes[] = { LIFE_CAUSE_NONE, LIFE_CAUSE_STOP,
	LIFE_CAUSE_GROUP, LIFE_CAUSE_TIMEOUT, LIFE_CAUSE_READY_TIMEOUT,
	LIFE_CAUSE_WATCHDOG, LIFE_CAUSE_UNHEALTHY, LIFE_CAUSE_DRAIN,
	LIFE_CAUSE_FENCE };
static const struct backoff b = { 1000000, 60000000 };

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* One cell: 0 if msg_fate keeps every rule, else says which it broke. */
static int
cell(const struct msg_end *e)
{
	struct msg_verdict v;
	const char *broke = NULL;
	int started = e->status != -1, cancel;

	msg_fate(e, &b, 0x80000000U, &v);
	cancel = !e->success &&
	    (e->cause == LIFE_CAUSE_DRAIN || e->cause == LIFE_CAUSE_FENCE);
	if ((v.fate == MSG_FATE_DROP) != (e->deleted != 0))
		broke = "deleted while it ran: dropped, and only then";
	else if (e->deleted)
		return (0);
	else if ((v.fate == MSG_FATE_RELEASE) != (!started || cancel))
		broke = "not started or cancelled: released, and only then";
	else if (v.fate == MSG_FATE_RELEASE)
		return (0);
	else if ((v.fate == MSG_FATE_DONE) != (e->success != 0))
		broke = "success: done, and only then";
	else if (v.fate == MSG_FATE_DONE)
		return (0);
	else if ((v.fate == MSG_FATE_DEAD) != (e->attempts >= e->max_attempts))
		broke = "dead once the attempts are spent, retried before";
	else if (v.delay !=
	    backoff_next(&b, (unsigned int)e->attempts, 0x80000000U))
		broke = "the retry waits the backoff of its attempt";
	else if (v.why != (e->cause != LIFE_CAUSE_NONE || e->exec_failed))
		broke = "ERROR says why when it is more than an exit";
	else if (v.code !=
	    (!e->exec_failed && WIFEXITED(e->status) ? WEXITSTATUS(e->status) :
	                                               -1))
		broke = "the exit code, unless it never ran";
	else if (v.sig !=
	    (!e->exec_failed && WIFSIGNALED(e->status) ? WTERMSIG(e->status) :
	                                                 -1))
		broke = "the signal, unless it never ran";
	if (broke == NULL)
		return (0);
	fprintf(stderr,
	    "  deleted %d status %d success %d exec_failed %d cause %d "
	    "attempts %d/%d: fate %d: %s\n",
	    e->deleted, e->status, e->success, e->exec_failed, (int)e->cause,
	    e->attempts, e->max_attempts, (int)v.fate, broke);
	return (1);
}

TEST(every_cell)
{
	struct msg_end e;
	size_t s, c;
	int failed = 0, cells = 0;

	e.max_attempts = 3;
	for (e.deleted = 0; e.deleted <= 1; e.deleted++)
		for (s = 0; s < N(statuses); s++)
			for (e.success = 0; e.success <= 1; e.success++)
				for (e.exec_failed = 0; e.exec_failed <= 1;
				     e.exec_failed++)
					for (c = 0; c < N(causes); c++)
						for (e.attempts = 1;
						     e.attempts <= 4;
						     e.attempts++) {
							e.status = statuses[s];
							e.cause = causes[c];
							failed += cell(&e);
							cells++;
						}
	ASSERT_EQ(cells, 2 * 7 * 2 * 2 * 9 * 4);
	ASSERT_EQ(failed, 0);
	return (0);
}

/* The cases an operator meets, spelled out. */
TEST(examples)
{
	struct msg_end e = { 0, EXITED(0), 1, 0, LIFE_CAUSE_NONE, 1, 3 };
	struct msg_verdict v;

	msg_fate(&e, &b, 0x80000000U, &v);
	ASSERT_EQ(v.fate, MSG_FATE_DONE);
	/* Exit 1 on the first of 3 attempts: retried after 1 s. */
	e.status = EXITED(1);
	e.success = 0;
	msg_fate(&e, &b, 0x80000000U, &v);
	ASSERT_EQ(v.fate, MSG_FATE_RETRY);
	ASSERT_EQ(v.code, 1);
	ASSERT_EQ(v.sig, -1);
	ASSERT_EQ(v.why, 0);
	ASSERT_EQ(v.delay, 1000000);
	/* Its timeout on the third: dead, and ERROR says so. */
	e.status = KILLED(SIGKILL);
	e.cause = LIFE_CAUSE_TIMEOUT;
	e.attempts = 3;
	msg_fate(&e, &b, 0x80000000U, &v);
	ASSERT_EQ(v.fate, MSG_FATE_DEAD);
	ASSERT_EQ(v.sig, SIGKILL);
	ASSERT_EQ(v.why, 1);
	/* Drained: back, the attempt not counted, whatever the count. */
	e.cause = LIFE_CAUSE_DRAIN;
	msg_fate(&e, &b, 0x80000000U, &v);
	ASSERT_EQ(v.fate, MSG_FATE_RELEASE);
	/* A drain that it finished anyway: done. */
	e.status = EXITED(0);
	e.success = 1;
	msg_fate(&e, &b, 0x80000000U, &v);
	ASSERT_EQ(v.fate, MSG_FATE_DONE);
	/* An operator's stop is a failure like any other. */
	e.status = KILLED(SIGTERM);
	e.success = 0;
	e.cause = LIFE_CAUSE_STOP;
	e.attempts = 1;
	msg_fate(&e, &b, 0x80000000U, &v);
	ASSERT_EQ(v.fate, MSG_FATE_RETRY);
	/* Deleted while it ran: dropped, even had it succeeded. */
	e.deleted = 1;
	e.success = 1;
	msg_fate(&e, &b, 0x80000000U, &v);
	ASSERT_EQ(v.fate, MSG_FATE_DROP);
	return (0);
}

int
main(void)
{
	RUN(every_cell);
	RUN(examples);
	TEST_MAIN_END();
}
