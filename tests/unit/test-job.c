/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/* Tests of job_decide(): every branch of the restart policy. */

#include "config.h"

#include <sys/types.h>
#include <sys/wait.h>

#include <signal.h>
#include <string.h>

#include "conf.h"
#include "job.h"
#include "test.h"

#define SEC 1000000ULL
#define MID 0x80000000U /* no jitter */

static struct job_spec spec;

static void
spec_reset(void)
{
	memset(&spec, 0, sizeof(spec));
	spec.restart = CONF_RESTART_ALWAYS;
	spec.min_uptime = 1 * SEC;
	spec.restart_delay = 100000;
	spec.restart_delay_max = 30 * SEC;
	spec.success[0] = 1; /* exit 0 */
}

static void
outcome(
    struct job_outcome *o, int status, uint64_t uptime, unsigned int failures)
{
	memset(o, 0, sizeof(*o));
	o->status = status;
	o->uptime = uptime;
	o->failures = failures;
}

/* wait(2) statuses built by hand, as the kernel encodes them. */
#define EXITED(n) (((n)&0xff) << 8)
#define KILLED(s) ((s)&0x7f)

TEST(state_names)
{
	ASSERT_STREQ(job_state_name(JOB_BLOCKED), "BLOCKED");
	ASSERT_EQ(job_state_parse("running"), JOB_RUNNING);
	ASSERT_EQ(job_state_parse("nope"), -1);
	ASSERT_STREQ(job_state_name((enum job_state)99), "UNKNOWN");
	return (0);
}

TEST(long_run_restarts_at_once)
{
	struct job_outcome o;
	struct job_decision d;

	spec_reset();
	outcome(&o, EXITED(1), 5 * SEC, 3);
	job_decide(&spec, &o, MID, &d);
	ASSERT_EQ(d.state, JOB_STARTING);
	ASSERT_EQ(d.failures, 0);
	ASSERT_EQ(d.failed_start, 0);
	ASSERT_EQ(d.success, 0);
	return (0);
}

TEST(failed_start_backs_off_and_grows)
{
	struct job_outcome o;
	struct job_decision d;

	spec_reset();
	outcome(&o, EXITED(1), 10000, 0);
	job_decide(&spec, &o, MID, &d);
	ASSERT_EQ(d.state, JOB_BACKOFF);
	ASSERT_EQ(d.failures, 1);
	ASSERT_EQ(d.delay, 100000);
	outcome(&o, EXITED(1), 10000, d.failures);
	job_decide(&spec, &o, MID, &d);
	ASSERT_EQ(d.failures, 2);
	ASSERT_EQ(d.delay, 200000);
	return (0);
}

TEST(never_gives_up_by_default)
{
	struct job_outcome o;
	struct job_decision d;

	spec_reset();
	outcome(&o, EXITED(1), 0, 100000);
	job_decide(&spec, &o, MID, &d);
	ASSERT_EQ(d.state, JOB_BACKOFF);
	ASSERT_EQ(d.delay, 30 * SEC);
	return (0);
}

TEST(max_restarts_gives_fatal)
{
	struct job_outcome o;
	struct job_decision d;

	spec_reset();
	spec.max_restarts = 3;
	outcome(&o, EXITED(1), 0, 2);
	job_decide(&spec, &o, MID, &d);
	ASSERT_EQ(d.state, JOB_BACKOFF); /* third failed start, third restart */
	outcome(&o, EXITED(1), 0, 3);
	job_decide(&spec, &o, MID, &d);
	ASSERT_EQ(d.state, JOB_FATAL);
	ASSERT_EQ(d.failures, 4);
	/* A long run in between resets the count. */
	outcome(&o, EXITED(1), 2 * SEC, 3);
	job_decide(&spec, &o, MID, &d);
	ASSERT_EQ(d.state, JOB_STARTING);
	return (0);
}

/* start_limit: the caller says the window is full; a failed start gives up. */
TEST(start_limit_gives_fatal)
{
	struct job_outcome o;
	struct job_decision d;

	spec_reset();
	outcome(&o, EXITED(1), 0, 1);
	o.limit_reached = 1;
	job_decide(&spec, &o, MID, &d);
	ASSERT_EQ(d.state, JOB_FATAL);
	/* Not a failed start (a long run): it goes on. */
	outcome(&o, EXITED(1), 2 * SEC, 1);
	o.limit_reached = 1;
	job_decide(&spec, &o, MID, &d);
	ASSERT_EQ(d.state, JOB_STARTING);
	/* A stop asked for is never a give-up. */
	outcome(&o, EXITED(1), 0, 1);
	o.limit_reached = 1;
	o.stop_requested = 1;
	job_decide(&spec, &o, MID, &d);
	ASSERT_EQ(d.state, JOB_STOPPED);
	return (0);
}

TEST(exec_failure_is_failed_start)
{
	struct job_outcome o;
	struct job_decision d;

	spec_reset();
	outcome(&o, EXITED(127), 10 * SEC, 0);
	o.exec_failed = 1;
	job_decide(&spec, &o, MID, &d);
	ASSERT_EQ(d.state, JOB_BACKOFF);
	ASSERT_EQ(d.failed_start, 1);
	ASSERT_EQ(d.success, 0);
	return (0);
}

TEST(on_failure_policy)
{
	struct job_outcome o;
	struct job_decision d;

	spec_reset();
	spec.restart = CONF_RESTART_ON_FAILURE;
	outcome(&o, EXITED(0), 5 * SEC, 0);
	job_decide(&spec, &o, MID, &d);
	ASSERT_EQ(d.state, JOB_EXITED);
	ASSERT_EQ(d.success, 1);
	outcome(&o, KILLED(SIGSEGV), 5 * SEC, 0);
	job_decide(&spec, &o, MID, &d);
	ASSERT_EQ(d.state, JOB_STARTING);
	/* success_exit_codes decides what success means. */
	spec.success[0] = 0;
	spec.success[1] = 1 << (9 - 8);
	outcome(&o, EXITED(9), 5 * SEC, 0);
	job_decide(&spec, &o, MID, &d);
	ASSERT_EQ(d.state, JOB_EXITED);
	outcome(&o, EXITED(0), 5 * SEC, 0);
	job_decide(&spec, &o, MID, &d);
	ASSERT_EQ(d.state, JOB_STARTING);
	return (0);
}

TEST(late_ready_or_watchdog_is_a_failure)
{
	struct job_outcome o;
	struct job_decision d;

	spec_reset();
	spec.restart = CONF_RESTART_ON_FAILURE;
	/* Exit 0 on the stop signal still counts as a failure. */
	outcome(&o, EXITED(0), 90 * SEC, 0);
	o.never_ready = 1;
	job_decide(&spec, &o, MID, &d);
	ASSERT_EQ(d.success, 0);
	ASSERT_EQ(d.failed_start, 1);
	ASSERT_EQ(d.state, JOB_BACKOFF);
	outcome(&o, EXITED(0), 90 * SEC, 0);
	o.watchdog = 1;
	job_decide(&spec, &o, MID, &d);
	ASSERT_EQ(d.success, 0);
	ASSERT_EQ(d.state, JOB_STARTING);
	return (0);
}

TEST(never_policy)
{
	struct job_outcome o;
	struct job_decision d;

	spec_reset();
	spec.restart = CONF_RESTART_NEVER;
	outcome(&o, EXITED(3), 0, 0);
	job_decide(&spec, &o, MID, &d);
	ASSERT_EQ(d.state, JOB_EXITED);
	return (0);
}

TEST(stop_requested_wins)
{
	struct job_outcome o;
	struct job_decision d;

	spec_reset();
	outcome(&o, KILLED(SIGTERM), 0, 7);
	o.stop_requested = 1;
	job_decide(&spec, &o, MID, &d);
	ASSERT_EQ(d.state, JOB_STOPPED);
	ASSERT_EQ(d.failures, 0);
	return (0);
}

TEST(zero_delay_restarts_at_once)
{
	struct job_outcome o;
	struct job_decision d;

	spec_reset();
	spec.restart_delay = 0;
	outcome(&o, EXITED(1), 0, 0);
	job_decide(&spec, &o, MID, &d);
	ASSERT_EQ(d.state, JOB_STARTING);
	ASSERT_EQ(d.failures, 1);
	return (0);
}

/*
 * A queue slot is free for the next message after any run: no restart,
 * no BACKOFF, no FATAL.  Whether the message succeeded follows
 * success_exit_codes; a stop leaves the slot STOPPED.
 */
TEST(queue_slot_is_free_after_any_run)
{
	struct job_outcome o;
	struct job_decision d;
	int statuses[] = { EXITED(0), EXITED(9), EXITED(1), KILLED(SIGKILL) };
	int success[] = { 1, 1, 0, 0 };
	size_t i;

	spec_reset();
	spec.kind = CONF_KIND_QUEUE;
	spec.max_restarts = 1;
	spec.restart = CONF_RESTART_NEVER;
	spec.success[1] = 1 << (9 - 8); /* exit 9 is a success too */
	for (i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
		outcome(&o, statuses[i], 3, 10);
		job_decide(&spec, &o, MID, &d);
		ASSERT_EQ(d.state, JOB_WAITING);
		ASSERT_EQ(d.failures, 0);
		ASSERT_EQ(d.delay, 0);
		ASSERT_EQ(d.success, success[i]);
	}
	outcome(&o, 0, 0, 0);
	o.exec_failed = 1;
	job_decide(&spec, &o, MID, &d);
	ASSERT_EQ(d.state, JOB_WAITING);
	ASSERT_EQ(d.success, 0);
	outcome(&o, EXITED(0), 0, 0);
	o.stop_requested = 1;
	job_decide(&spec, &o, MID, &d);
	ASSERT_EQ(d.state, JOB_STOPPED);
	return (0);
}

/* A periodic run never leads to a restart, BACKOFF or FATAL. */
TEST(periodic_waits_for_its_next_slot)
{
	struct job_outcome o;
	struct job_decision d;
	int statuses[] = { EXITED(0), EXITED(1), KILLED(SIGKILL),
		KILLED(SIGTERM) };
	size_t i;

	spec_reset();
	spec.kind = CONF_KIND_PERIODIC;
	spec.max_restarts = 1;
	spec.restart = CONF_RESTART_NEVER;
	for (i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
		outcome(&o, statuses[i], 0, 50);
		job_decide(&spec, &o, MID, &d);
		ASSERT_EQ(d.state, JOB_WAITING);
		ASSERT_EQ(d.failures, 0);
		ASSERT_EQ(d.delay, 0);
		ASSERT_EQ(d.success, i == 0);
	}
	outcome(&o, 0, 0, 0);
	o.exec_failed = 1;
	job_decide(&spec, &o, MID, &d);
	ASSERT_EQ(d.state, JOB_WAITING);
	ASSERT_EQ(d.success, 0);
	/* Only a stop pauses it. */
	outcome(&o, KILLED(SIGTERM), 0, 0);
	o.stop_requested = 1;
	job_decide(&spec, &o, MID, &d);
	ASSERT_EQ(d.state, JOB_STOPPED);
	ASSERT_STREQ(job_state_name(JOB_WAITING), "WAITING");
	ASSERT_EQ(job_state_is_active(JOB_WAITING), 0);
	return (0);
}

TEST(describe)
{
	char buf[64];

	ASSERT_STREQ(job_exit_describe(EXITED(0), buf, sizeof(buf)), "exit 0");
	ASSERT_STREQ(
	    job_exit_describe(EXITED(42), buf, sizeof(buf)), "exit 42");
	ASSERT_STREQ(job_exit_describe(KILLED(SIGKILL), buf, sizeof(buf)),
	    "signal KILL");
	ASSERT_STREQ(
	    job_exit_describe(KILLED(SIGSEGV) | 0x80, buf, sizeof(buf)),
	    "signal SEGV (core dumped)");
	return (0);
}

TEST(active_states)
{
	ASSERT_EQ(job_state_is_active(JOB_RUNNING), 1);
	ASSERT_EQ(job_state_is_active(JOB_BACKOFF), 1);
	ASSERT_EQ(job_state_is_active(JOB_BLOCKED), 1);
	ASSERT_EQ(job_state_is_active(JOB_STOPPED), 0);
	ASSERT_EQ(job_state_is_active(JOB_FATAL), 0);
	ASSERT_EQ(job_state_is_active(JOB_EXITED), 0);
	return (0);
}

int
main(void)
{
	RUN(state_names);
	RUN(long_run_restarts_at_once);
	RUN(failed_start_backs_off_and_grows);
	RUN(never_gives_up_by_default);
	RUN(max_restarts_gives_fatal);
	RUN(start_limit_gives_fatal);
	RUN(exec_failure_is_failed_start);
	RUN(on_failure_policy);
	RUN(late_ready_or_watchdog_is_a_failure);
	RUN(never_policy);
	RUN(stop_requested_wins);
	RUN(zero_delay_restarts_at_once);
	RUN(periodic_waits_for_its_next_slot);
	RUN(queue_slot_is_free_after_any_run);
	RUN(describe);
	RUN(active_states);
	TEST_MAIN_END();
}
