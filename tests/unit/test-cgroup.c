/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Unit tests for lib/cgroup.c: the parsers on texts as the kernel writes
 * them, and, where this process may make cgroups (root, cgroup2 mounted
 * and writable), the real thing: a cgroup made, a child moved in, a child
 * of it that leaves its session still a member, signal and kill of all,
 * "populated 0" once they are gone, the cgroup removed.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "test.h"

static const char mountinfo_hybrid[] =
    "22 1 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs "
    "sysfs rw\n"
    "26 22 0:23 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs "
    "tmpfs ro,mode=755\n"
    "27 26 0:24 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime "
    "shared:10 - cgroup2 cgroup2 rw\n"
    "28 26 0:25 / /sys/fs/cgroup/memory rw,nosuid shared:11 - cgroup "
    "cgroup rw,memory\n";

static const char mountinfo_escaped[] =
    "30 1 0:26 /sub\\040dir /mnt/cg\\040two rw shared:1 master:2 - cgroup2 "
    "none rw,nsdelegate\n";

TEST(mount_parse)
{
	char mnt[256], root[256];

	ASSERT_EQ(cgroup_mount_parse(
	              mountinfo_hybrid, mnt, sizeof(mnt), root, sizeof(root)),
	    0);
	ASSERT_STREQ(mnt, "/sys/fs/cgroup/unified");
	ASSERT_STREQ(root, "/");
	ASSERT_EQ(cgroup_mount_parse(
	              mountinfo_escaped, mnt, sizeof(mnt), root, sizeof(root)),
	    0);
	ASSERT_STREQ(mnt, "/mnt/cg two");
	ASSERT_STREQ(root, "/sub dir");
	errno = 0;
	ASSERT_EQ(cgroup_mount_parse("1 0 0:1 / / rw - ext4 /dev/x rw\n", mnt,
	              sizeof(mnt), root, sizeof(root)),
	    -1);
	ASSERT_EQ(errno, ENOENT);
	ASSERT_EQ(
	    cgroup_mount_parse("", mnt, sizeof(mnt), root, sizeof(root)), -1);
	return (0);
}

TEST(self_parse)
{
	char path[256];

	ASSERT_EQ(cgroup_self_parse(
	              "4:memory:/process_api/x\n0::/\n", path, sizeof(path)),
	    0);
	ASSERT_STREQ(path, "/");
	ASSERT_EQ(cgroup_self_parse(
	              "0::/system.slice/vigild.service", path, sizeof(path)),
	    0);
	ASSERT_STREQ(path, "/system.slice/vigild.service");
	ASSERT_EQ(
	    cgroup_self_parse("1:name=systemd:/x\n", path, sizeof(path)), -1);
	ASSERT_EQ(cgroup_self_parse("0::/long", path, 4), -1);
	ASSERT_EQ(errno, ENAMETOOLONG);
	return (0);
}

/* A test cgroup under the hierarchy's root, or -1 (then skipped). */
static int
test_cgroup_here(char *name, size_t len, int *rootfd)
{
	struct cgroup_where w;
	char *cause = NULL;
	int fd;

	if (geteuid() != 0 || cgroup_find(&w, &cause) == -1) {
		printf("  (no cgroup2 to write here: %s)\n",
		    cause != NULL ? cause : "not root");
		free(cause);
		return (-1);
	}
	if ((*rootfd = open(w.mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return (-1);
	snprintf(name, len, "vigil-test-cgroup-%ld", (long)getpid());
	if ((fd = cgroup_open(*rootfd, name, 1)) == -1) {
		printf("  (cannot make a cgroup in %s: %s)\n", w.mount,
		    strerror(errno));
		close(*rootfd);
		return (-1);
	}
	return (fd);
}

/* Wait up to 5 s for the cgroup fd to be (populated == want). */
static int
test_wait_populated(int fd, int want)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int i;

	for (i = 0; i < 500; i++) {
		if (cgroup_populated(fd) == want)
			return (0);
		nanosleep(&ts, NULL);
	}
	return (-1);
}

/* A child in cgroup fd that starts a grandchild in a session of its own. */
static pid_t
test_spawn_escapee(int fd, int ready[2])
{
	pid_t pid = fork();

	if (pid != 0)
		return (pid);
	if (cgroup_move(fd, 0) == -1)
		_exit(2);
	if (fork() == 0) {
		setsid();
		(void)write(ready[1], "x", 1);
		for (;;)
			pause();
	}
	for (;;)
		pause();
}

TEST(real_cgroup)
{
	struct cgroup_files files = CGROUP_FILES_INIT;
	struct cgroup_usage u, k;
	char name[64], c;
	pid_t pid, *pids;
	size_t n;
	int root, fd, ready[2];

	if ((fd = test_cgroup_here(name, sizeof(name), &root)) == -1)
		return (0);
	ASSERT_EQ(cgroup_populated(fd), 0);
	ASSERT_EQ(pipe(ready), 0);
	pid = test_spawn_escapee(fd, ready);
	ASSERT_OK(pid > 0);
	ASSERT_EQ(read(ready[0], &c, 1), 1);
	ASSERT_EQ(cgroup_populated(fd), 1);
	ASSERT_EQ(cgroup_pids(fd, &pids, &n), 0);
	free(pids);
	ASSERT_EQ(n, 2); /* the child and its escaped grandchild */
	ASSERT_EQ(cgroup_usage(fd, NULL, &u), 0);
	ASSERT_EQ(u.tasks, 2);
	ASSERT_OK(u.memory_bytes > 0 && u.memory_bytes != UINT64_MAX);
	/* With its files kept open: the same figures, read again. */
	ASSERT_EQ(cgroup_usage(fd, &files, &k), 0);
	ASSERT_EQ(cgroup_usage(fd, &files, &k), 0);
	ASSERT_EQ(k.tasks, 2);
	ASSERT_OK(k.memory_bytes > 0 && k.memory_bytes != UINT64_MAX);
	ASSERT_OK(k.cpu_usec == UINT64_MAX || k.cpu_usec >= u.cpu_usec);
	ASSERT_OK(files.cpu != -1 && files.memory != -1 && files.pids != -1);
	if (files.memory == -2 || files.pids == -2)
		ASSERT_OK(files.procs >= 0);
	if (files.memory == -2)
		ASSERT_OK(files.statm >= 0 && files.statm_pid > 0);
	/* memory.events where a memory controller is; else "unknown". */
	if (faccessat(fd, "memory.events", F_OK, 0) == 0)
		ASSERT_EQ(cgroup_oom_kills(fd), 0);
	else
		ASSERT_EQ(cgroup_oom_kills(fd), UINT64_MAX);
	/* Both get the signal, the one in its own session too. */
	ASSERT_EQ(cgroup_signal(fd, SIGTERM), 2);
	ASSERT_EQ(test_wait_populated(fd, 0), 0);
	(void)waitpid(pid, NULL, 0);
	/* The kept files see the cgroup empty; the gone process is let go. */
	ASSERT_EQ(cgroup_usage(fd, &files, &k), 0);
	ASSERT_EQ(k.tasks, 0);
	if (files.memory == -2)
		ASSERT_EQ(k.memory_bytes, 0);
	cgroup_files_close(&files);
	ASSERT_EQ(files.cpu, -1);
	ASSERT_EQ(files.statm, -1);
	ASSERT_EQ(cgroup_remove(root, name), 0);
	ASSERT_EQ(cgroup_remove(root, name), 0); /* gone: not an error */
	close(fd);
	close(ready[0]);
	close(ready[1]);
	close(root);
	return (0);
}

TEST(real_kill)
{
	char name[64], c;
	pid_t pid;
	int root, fd, ready[2];

	if ((fd = test_cgroup_here(name, sizeof(name), &root)) == -1)
		return (0);
	ASSERT_EQ(pipe(ready), 0);
	pid = test_spawn_escapee(fd, ready);
	ASSERT_OK(pid > 0);
	ASSERT_EQ(read(ready[0], &c, 1), 1);
	ASSERT_EQ(cgroup_kill(fd), 0);
	ASSERT_EQ(test_wait_populated(fd, 0), 0);
	ASSERT_EQ(waitpid(pid, NULL, 0), pid);
	/* A cgroup with members cannot go. */
	ASSERT_EQ(cgroup_remove(root, name), 0);
	close(fd);
	close(ready[0]);
	close(ready[1]);
	close(root);
	return (0);
}

int
main(void)
{
	RUN(mount_parse);
	RUN(self_parse);
	RUN(real_cgroup);
	RUN(real_kill);
	TEST_MAIN_END();
}
