/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Tests of OFD locks and holder records, with real processes: a lock is
 * shared across fork, survives the parent's close while a child keeps the
 * descriptor, and is refused to another open file description.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lock.h"
#include "proc.h"
#include "test.h"

static char dir[] = "/tmp/test-lock.XXXXXX";
static char path[64];

TEST(exclusive_between_descriptions)
{
	int a, b;

	ASSERT_OK((a = lock_open(path)) >= 0);
	ASSERT_OK((b = lock_open(path)) >= 0);
	ASSERT_EQ(lock_try(a), 0);
	ASSERT_EQ(lock_try(a), 0); /* again on the same description: fine */
	ASSERT_EQ(lock_try(b), -1);
	ASSERT_EQ(errno, EAGAIN);
	close(a);
	ASSERT_EQ(lock_try(b), 0);
	close(b);
	return (0);
}

TEST(child_keeps_lock_after_parent_closes)
{
	int a, b, p[2];
	pid_t pid;
	char c;

	ASSERT_OK((a = lock_open(path)) >= 0);
	ASSERT_EQ(lock_try(a), 0);
	ASSERT_EQ(pipe(p), 0);
	if ((pid = fork()) == 0) {
		close(p[1]);
		/* Hold the inherited description until the pipe closes. */
		(void)!read(p[0], &c, 1);
		_exit(0);
	}
	close(p[0]);
	close(a);
	ASSERT_OK((b = lock_open(path)) >= 0);
	ASSERT_EQ(lock_try(b), -1); /* the child still holds it */
	close(p[1]);
	ASSERT_EQ(waitpid(pid, NULL, 0), pid);
	ASSERT_EQ(lock_try(b), 0); /* the last holder is gone */
	close(b);
	return (0);
}

TEST(holder_record)
{
	struct lock_holder h, r;
	int fd;

	ASSERT_OK((fd = lock_open(path)) >= 0);
	ASSERT_EQ(lock_holder_clear(fd), 0);
	ASSERT_EQ(lock_holder_read(fd, &r), -1);
	h.pid = getpid();
	h.pgid = getpgrp();
	ASSERT_EQ(proc_starttime(getpid(), &h.starttime), 0);
	h.vigild = 1234;
	ASSERT_EQ(lock_holder_write(fd, &h), 0);
	ASSERT_EQ(lock_holder_read(fd, &r), 0);
	ASSERT_EQ(r.pid, h.pid);
	ASSERT_EQ(r.pgid, h.pgid);
	ASSERT_EQ(r.starttime, h.starttime);
	ASSERT_EQ(r.vigild, 1234);
	ASSERT_EQ(lock_holder_check(&r), LOCK_HOLDER_ALIVE);
	/* Same pid, another start time: a reused pid is not the holder. */
	r.starttime++;
	r.pgid = r.pid;
	ASSERT_EQ(lock_holder_check(&r), LOCK_HOLDER_GONE);
	/* A shorter record replaces a longer one whole, without truncate. */
	h.pid = 2147483647;
	h.pgid = 2147483647;
	h.starttime = UINT64_MAX;
	h.vigild = 2147483647;
	ASSERT_EQ(lock_holder_write(fd, &h), 0);
	h.pid = h.pgid = h.vigild = 7;
	h.starttime = 8;
	ASSERT_EQ(lock_holder_write(fd, &h), 0);
	ASSERT_EQ(lseek(fd, 0, SEEK_END), LOCK_RECORD_SIZE);
	ASSERT_EQ(lock_holder_read(fd, &r), 0);
	ASSERT_EQ(r.pid, 7);
	ASSERT_EQ(r.pgid, 7);
	ASSERT_EQ(r.starttime, 8);
	ASSERT_EQ(r.vigild, 7);
	close(fd);
	return (0);
}

/*
 * A child made between two equal readings of the boot tick clock has that
 * tick as its /proc start time.  Forks until 20 were made within one tick:
 * under valgrind on a busy machine a fork can take most of a tick.
 */
TEST(boot_ticks_match_proc)
{
	uint64_t before, after, st;
	int i, known = 0, status;
	pid_t pid;

	for (i = 0; i < 2000 && known < 20; i++) {
		before = proc_boot_ticks();
		if ((pid = fork()) == 0)
			_exit(0);
		after = proc_boot_ticks();
		ASSERT_OK(pid > 0);
		ASSERT_OK(before != 0 && before <= after);
		ASSERT_EQ(proc_starttime(pid, &st), 0);
		ASSERT_OK(st >= before && st <= after);
		if (before == after) {
			ASSERT_EQ(st, before);
			known++;
		}
		ASSERT_EQ(waitpid(pid, &status, 0), pid);
	}
	ASSERT_OK(known >= 20);
	return (0);
}

TEST(holder_group_outlives_leader)
{
	struct lock_holder h;
	int p[2], i;
	pid_t leader;
	char c;

	ASSERT_EQ(pipe(p), 0);
	if ((leader = fork()) == 0) {
		setsid();
		if (fork() == 0) {
			close(p[1]);
			(void)!read(p[0], &c, 1);
			_exit(0);
		}
		_exit(0);
	}
	h.pid = leader;
	h.pgid = leader;
	ASSERT_EQ(proc_starttime(leader, &h.starttime), 0);
	ASSERT_EQ(waitpid(leader, NULL, 0), leader);
	close(p[0]);
	/* The leader is reaped; its grandchild keeps the group. */
	ASSERT_EQ(lock_holder_check(&h), LOCK_HOLDER_GROUP);
	ASSERT_EQ(proc_group_exists(leader), 1);
	close(p[1]);
	for (i = 0; i < 500 && proc_group_exists(leader); i++)
		usleep(10000);
	ASSERT_EQ(lock_holder_check(&h), LOCK_HOLDER_GONE);
	return (0);
}

TEST(starttime)
{
	uint64_t a, b;

	ASSERT_EQ(proc_starttime(getpid(), &a), 0);
	ASSERT_EQ(proc_starttime(getpid(), &b), 0);
	ASSERT_EQ(a, b);
	ASSERT_EQ(proc_is_same(getpid(), a), 1);
	ASSERT_EQ(proc_is_same(getpid(), a + 1), 0);
	ASSERT_EQ(proc_starttime(0x3fffffff, &a), -1);
	ASSERT_EQ(proc_group_signal(1, 0), -1);
	ASSERT_EQ(proc_group_signal(0, 0), -1);
	return (0);
}

int
main(void)
{
	int r;

	if (mkdtemp(dir) == NULL)
		return (1);
	snprintf(path, sizeof(path), "%s/x.lock", dir);
	RUN(exclusive_between_descriptions);
	RUN(child_keeps_lock_after_parent_closes);
	RUN(holder_record);
	RUN(boot_ticks_match_proc);
	RUN(holder_group_outlives_leader);
	RUN(starttime);
	unlink(path);
	rmdir(dir);
	r = test_failed == 0 ? 0 : 1;
	printf("%d passed, %d failed\n", test_passed, test_failed);
	return (r);
}
