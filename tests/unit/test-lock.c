/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Tests of OFD locks and holder records, with real processes: a lock is
 * shared across fork, survives the parent's close while a child keeps the
 * descriptor, and is refused to another open file description.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>
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
static char path[64], rpath[64], path2[64];

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

	ASSERT_OK((fd = lock_record_open(rpath)) >= 0);
	ASSERT_EQ(lock_holder_clear(fd), 0);
	ASSERT_EQ(lseek(fd, 0, SEEK_END), LOCK_RECORD_SIZE);
	ASSERT_EQ(lock_holder_read(fd, &r), -1);
	ASSERT_EQ(errno, ENOENT);
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

/* Lock and record files: regular files of ours only, never followed. */
TEST(open_refuses_planted_files)
{
	char other[96];
	struct stat st;
	int fd;

	snprintf(other, sizeof(other), "%s/other", dir);
	ASSERT_OK((fd = open(other, O_RDWR | O_CREAT, 0644)) >= 0);
	close(fd);
	ASSERT_EQ(symlink(other, path2), 0);
	ASSERT_EQ(lock_open(path2), -1);
	ASSERT_EQ(errno, ELOOP);
	ASSERT_EQ(unlink(path2), 0);
	ASSERT_EQ(link(other, path2), 0);
	ASSERT_EQ(lock_open(path2), -1); /* a second name of a file */
	ASSERT_EQ(errno, EPERM);
	ASSERT_EQ(unlink(path2), 0);
	ASSERT_EQ(mkfifo(path2, 0600), 0);
	ASSERT_EQ(lock_record_open(path2), -1); /* no wait on a FIFO */
	ASSERT_EQ(errno, EPERM);
	ASSERT_EQ(unlink(path2), 0);
	/* A wider mode is narrowed: nobody else may take a read lock. */
	ASSERT_OK((fd = open(path2, O_RDWR | O_CREAT, 0666)) >= 0);
	ASSERT_EQ(fchmod(fd, 0666), 0);
	close(fd);
	ASSERT_OK((fd = lock_open(path2)) >= 0);
	ASSERT_EQ(fstat(fd, &st), 0);
	ASSERT_EQ(st.st_mode & 07777, 0600);
	close(fd);
	unlink(path2);
	unlink(other);
	return (0);
}

/*
 * Fork a child that holds the descriptor fd until the pipe p closes;
 * with leave set it first leaves into a session of its own.
 */
static pid_t
hold_in_child(int fd, int p[2], int leave)
{
	pid_t pid;
	char c;

	if ((pid = fork()) == 0) {
		close(p[1]);
		if (leave)
			setsid();
		(void)!read(p[0], &c, 1);
		(void)fd;
		_exit(0);
	}
	return (pid);
}

/*
 * Only the kernel's view counts: a record naming a live process that does
 * not hold the lock (a forged one) names no holder.
 */
TEST(holder_is_proven_by_the_kernel)
{
	struct lock_holder h;
	int a, b, p[2];
	pid_t child, holder;

	ASSERT_OK((a = lock_open(path)) >= 0);
	ASSERT_OK((b = lock_open(path)) >= 0);
	ASSERT_EQ(lock_try(a), 0);
	ASSERT_EQ(pipe(p), 0);
	child = hold_in_child(a, p, 1);
	close(p[0]);
	close(a);
	ASSERT_EQ(lock_try(b), -1); /* held by the child */
	/* The child, by record: proven. */
	h.pid = h.pgid = child;
	h.vigild = getpid();
	for (int i = 0; i < 500 && getpgid(child) != child; i++)
		usleep(10000);
	ASSERT_EQ(proc_starttime(child, &h.starttime), 0);
	ASSERT_EQ(lock_holder_check(&h, b, &holder), LOCK_HOLDER_ALIVE);
	ASSERT_EQ(holder, child);
	ASSERT_EQ(lock_pid_holds(child, b), 1);
	ASSERT_EQ(lock_find_holder(b), child);
	/* A record naming someone else alive (here: us) is no proof. */
	h.pid = h.pgid = getpid();
	ASSERT_EQ(proc_starttime(getpid(), &h.starttime), 0);
	ASSERT_EQ(lock_pid_holds(getpid(), b), 0);
	ASSERT_EQ(lock_holder_check(&h, b, &holder), LOCK_HOLDER_GONE);
	ASSERT_EQ(holder, 0);
	/* Same pid, another start time: a reused pid is not the holder. */
	h.pid = h.pgid = child;
	ASSERT_EQ(proc_starttime(child, &h.starttime), 0);
	h.starttime++;
	ASSERT_EQ(lock_holder_check(&h, b, &holder), LOCK_HOLDER_GONE);
	close(p[1]);
	ASSERT_EQ(waitpid(child, NULL, 0), child);
	ASSERT_EQ(lock_find_holder(b), 0);
	ASSERT_EQ(lock_try(b), 0);
	close(b);
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

TEST(ppid_of_a_child)
{
	pid_t pid, v;
	int status;

	if ((pid = fork()) == 0) {
		setsid();
		pause();
		_exit(0);
	}
	ASSERT_OK(pid > 0);
	ASSERT_EQ(proc_ppid(pid, &v), 0);
	ASSERT_EQ(v, getpid());
	ASSERT_EQ(proc_ppid(getpid(), &v), 0);
	ASSERT_EQ(v, getppid());
	ASSERT_EQ(kill(pid, SIGKILL), 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_EQ(proc_ppid(pid, &v), -1); /* reaped: gone */
	return (0);
}

TEST(snapshot_of_a_child)
{
	struct proc_snapshot ps;
	struct proc_info *pi;
	char entry[1024];
	const char *v;
	uid_t r, e;
	pid_t pid, sid;
	int status;

	if ((pid = fork()) == 0) {
		setsid();
		pause();
		_exit(0);
	}
	ASSERT_OK(pid > 0);
	/* It is in its own session once setsid() ran: poll a while. */
	for (status = 0; status < 500; status++) {
		if (proc_sid(pid, &sid) == 0 && sid == pid)
			break;
		usleep(2000);
	}
	ASSERT_EQ(sid, pid);
	ASSERT_EQ(proc_snapshot(&ps), 0);
	ASSERT_OK((pi = proc_snapshot_find(&ps, pid)) != NULL);
	ASSERT_EQ(pi->ppid, getpid());
	ASSERT_EQ(pi->sid, pid);
	ASSERT_EQ(pi->pgid, pid);
	ASSERT_OK((pi = proc_snapshot_find(&ps, getpid())) != NULL);
	ASSERT_EQ(pi->sid, getsid(0));
	ASSERT_OK(proc_snapshot_find(&ps, 0) == NULL);
	proc_snapshot_clear(&ps);
	ASSERT_EQ(proc_uids(pid, &r, &e), 0);
	ASSERT_EQ(r, getuid());
	ASSERT_EQ(e, geteuid());
	/* The environment this test was started with: whole entries. */
	if ((v = getenv("PATH")) != NULL && strlen(v) < 1000) {
		snprintf(entry, sizeof(entry), "PATH=%s", v);
		ASSERT_EQ(proc_environ_has(getpid(), entry), 1);
		entry[strlen(entry) - 1] = '\0';
		ASSERT_EQ(proc_environ_has(getpid(), entry), 0);
	}
	ASSERT_EQ(proc_environ_has(getpid(), "PATH"), 0);
	ASSERT_EQ(kill(pid, SIGKILL), 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_EQ(proc_sid(pid, &sid), -1);
	ASSERT_EQ(proc_environ_has(pid, "PATH"), 0);
	return (0);
}

TEST(holder_group_outlives_leader)
{
	struct lock_holder h;
	int a, b, p[2], q[2], i;
	pid_t leader, holder, grandchild;
	char c;

	ASSERT_OK((a = lock_open(path)) >= 0);
	ASSERT_OK((b = lock_open(path)) >= 0);
	ASSERT_EQ(lock_try(a), 0);
	ASSERT_EQ(pipe(p), 0);
	ASSERT_EQ(pipe(q), 0);
	if ((leader = fork()) == 0) {
		setsid();
		if (fork() == 0) {
			close(p[1]);
			close(q[0]);
			/* Hold the lock until told, then hold only the group. */
			(void)!read(p[0], &c, 1);
			close(a);
			close(q[1]);
			for (;;)
				pause();
		}
		_exit(0);
	}
	close(a);
	close(p[0]);
	close(q[1]);
	h.pid = leader;
	h.pgid = leader;
	h.vigild = getpid();
	ASSERT_EQ(proc_starttime(leader, &h.starttime), 0);
	ASSERT_EQ(waitpid(leader, NULL, 0), leader);
	/* The leader is reaped; its grandchild keeps the group and lock. */
	ASSERT_EQ(lock_holder_check(&h, b, &holder), LOCK_HOLDER_GROUP);
	ASSERT_OK(holder > 1 && holder != leader);
	grandchild = holder;
	ASSERT_EQ(proc_group_exists(leader), 1);
	/* The group lives on but holds the lock no more: not a holder. */
	close(p[1]);
	(void)!read(q[0], &c, 1);
	ASSERT_EQ(lock_holder_check(&h, b, &holder), LOCK_HOLDER_GONE);
	ASSERT_EQ(lock_try(b), 0);
	ASSERT_EQ(kill(grandchild, SIGKILL), 0);
	for (i = 0; i < 500 && proc_group_exists(leader); i++)
		usleep(10000);
	ASSERT_EQ(lock_holder_check(&h, b, &holder), LOCK_HOLDER_GONE);
	close(q[0]);
	close(b);
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
	snprintf(rpath, sizeof(rpath), "%s/x.holder", dir);
	snprintf(path2, sizeof(path2), "%s/y.lock", dir);
	RUN(exclusive_between_descriptions);
	RUN(child_keeps_lock_after_parent_closes);
	RUN(holder_record);
	RUN(open_refuses_planted_files);
	RUN(holder_is_proven_by_the_kernel);
	RUN(boot_ticks_match_proc);
	RUN(ppid_of_a_child);
	RUN(snapshot_of_a_child);
	RUN(holder_group_outlives_leader);
	RUN(starttime);
	unlink(path);
	unlink(rpath);
	rmdir(dir);
	r = test_failed == 0 ? 0 : 1;
	printf("%d passed, %d failed\n", test_passed, test_failed);
	return (r);
}
