/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Tests of checked directories against real ones in a temporary directory:
 * made with exactly the mode asked for whatever the umask, refused when
 * they are a symbolic link or writable by group or others, and modes
 * narrowed.  Ownership by another user is tested on a stat record (and on
 * a real directory when run as root).
 */

#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "safedir.h"
#include "test.h"

static char dir[PATH_MAX];

/* dir/name in buf. */
static const char *
at(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%.3000s/%.200s", dir, name);
	return (buf);
}

/* The permission bits of path, or -1. */
static long
mode_of(const char *path)
{
	struct stat st;

	if (lstat(path, &st) == -1)
		return (-1);
	return ((long)(st.st_mode & 07777));
}

/* safedir_open of path; the cause is printed and freed. */
static int
try_open(int atfd, const char *path, mode_t mode, int *err)
{
	char *cause = NULL;
	int fd;

	fd = safedir_open(atfd, path, mode, &cause);
	*err = fd == -1 ? errno : 0;
	if (fd == -1)
		printf("# %s: %s\n", path, cause != NULL ? cause : "(none)");
	free(cause);
	return (fd);
}

/* Missing parents and the directory are made, the latter with its mode. */
TEST(open_makes)
{
	char path[PATH_MAX], parent[PATH_MAX];
	mode_t old;
	int fd, sub, err;

	old = umask(077);
	fd = try_open(AT_FDCWD, at(path, sizeof(path), "a/b/c/"), 0750, &err);
	umask(old);
	ASSERT_OK(fd >= 0);
	ASSERT_EQ(mode_of(at(path, sizeof(path), "a/b/c")), 0750);
	/* Parents: 0755 less the umask. */
	ASSERT_EQ(mode_of(at(parent, sizeof(parent), "a/b")), 0700);
	/* It exists now: opened again, mode untouched. */
	ASSERT_EQ(chmod(path, 0700), 0);
	close(fd);
	fd = try_open(AT_FDCWD, path, 0755, &err);
	ASSERT_OK(fd >= 0);
	ASSERT_EQ(mode_of(path), 0700);

	/* Relative to a directory's descriptor. */
	old = umask(0);
	sub = try_open(fd, "locks", 0755, &err);
	umask(old);
	ASSERT_OK(sub >= 0);
	close(sub);
	ASSERT_EQ(mode_of(at(path, sizeof(path), "a/b/c/locks")), 0755);
	close(fd);
	return (0);
}

/* A symbolic link, a file, a writable directory: refused. */
TEST(open_refuses)
{
	static const mode_t bad[] = { 0777, 01777, 0775, 0757, 0722, 0730 };
	char path[PATH_MAX], target[PATH_MAX];
	size_t i;
	int fd, err;

	ASSERT_EQ(mkdir(at(target, sizeof(target), "real"), 0700), 0);
	ASSERT_EQ(symlink(target, at(path, sizeof(path), "link")), 0);
	ASSERT_EQ(try_open(AT_FDCWD, path, 0700, &err), -1);
	ASSERT_EQ(err, EPERM);
	/* Not even a link to a directory that would pass. */
	ASSERT_OK((fd = try_open(AT_FDCWD, target, 0700, &err)) >= 0);
	close(fd);

	ASSERT_OK((fd = creat(at(path, sizeof(path), "file"), 0600)) >= 0);
	close(fd);
	ASSERT_EQ(try_open(AT_FDCWD, path, 0700, &err), -1);
	ASSERT_EQ(err, ENOTDIR);
	ASSERT_EQ(
	    try_open(AT_FDCWD, at(path, sizeof(path), "file/sub"), 0700, &err),
	    -1);
	ASSERT_EQ(err, ENOTDIR);

	at(path, sizeof(path), "open");
	ASSERT_EQ(mkdir(path, 0700), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_EQ(chmod(path, bad[i]), 0);
		ASSERT_EQ(try_open(AT_FDCWD, path, 0700, &err), -1);
		ASSERT_EQ(err, EPERM);
	}
	ASSERT_EQ(chmod(path, 0755), 0);
	ASSERT_OK((fd = try_open(AT_FDCWD, path, 0700, &err)) >= 0);
	/* A later change is seen through the descriptor. */
	ASSERT_EQ(safedir_check(fd, 0, NULL), 0);
	ASSERT_EQ(chmod(path, 0777), 0);
	ASSERT_EQ(safedir_check(fd, 0, NULL), -1);
	ASSERT_EQ(errno, EPERM);
	close(fd);
	return (0);
}

/* The owner must be the effective user; root with SAFEDIR_ROOT_OK. */
TEST(owner)
{
	struct stat st;
	char *cause = NULL, path[PATH_MAX];
	int fd, err;

	memset(&st, 0, sizeof(st));
	st.st_mode = S_IFDIR | 0755;
	st.st_uid = geteuid();
	ASSERT_EQ(safedir_stat_check(&st, 0, NULL), 0);
	st.st_uid = geteuid() + 1;
	ASSERT_EQ(safedir_stat_check(&st, 0, &cause), -1);
	ASSERT_EQ(errno, EPERM);
	ASSERT_OK(cause != NULL && strstr(cause, "mode 0755") != NULL);
	ASSERT_OK(strstr(cause, "not owned by") != NULL);
	free(cause);
	cause = NULL;
	st.st_uid = 0;
	ASSERT_EQ(safedir_stat_check(&st, SAFEDIR_ROOT_OK, NULL), 0);
	st.st_mode = S_IFDIR | 0775;
	ASSERT_EQ(safedir_stat_check(&st, SAFEDIR_ROOT_OK, NULL), -1);
	st.st_mode = S_IFREG | 0600;
	st.st_uid = geteuid();
	ASSERT_EQ(safedir_stat_check(&st, 0, NULL), -1);
	ASSERT_EQ(errno, ENOTDIR);

	if (geteuid() != 0)
		return (0);
	/* As root: a real directory of another user's. */
	ASSERT_EQ(mkdir(at(path, sizeof(path), "theirs"), 0700), 0);
	ASSERT_EQ(chown(path, 65534, 65534), 0);
	ASSERT_EQ(try_open(AT_FDCWD, path, 0700, &err), -1);
	ASSERT_EQ(err, EPERM);
	ASSERT_EQ(safedir_path_check(path, SAFEDIR_ROOT_OK, NULL), -1);
	ASSERT_EQ(chown(path, 0, 0), 0);
	ASSERT_OK((fd = try_open(AT_FDCWD, path, 0700, &err)) >= 0);
	close(fd);
	return (0);
}

/* safedir_path_check: a link, a missing directory, a good one. */
TEST(path_check)
{
	char path[PATH_MAX], target[PATH_MAX], *cause = NULL;

	at(target, sizeof(target), "pc");
	ASSERT_EQ(mkdir(target, 0755), 0);
	ASSERT_EQ(safedir_path_check(target, SAFEDIR_ROOT_OK, NULL), 0);
	ASSERT_EQ(symlink(target, at(path, sizeof(path), "pclink")), 0);
	ASSERT_EQ(safedir_path_check(path, SAFEDIR_ROOT_OK, &cause), -1);
	ASSERT_EQ(errno, EPERM);
	ASSERT_OK(cause != NULL && strstr(cause, "symbolic link") != NULL);
	free(cause);
	ASSERT_EQ(safedir_path_check(
	              at(path, sizeof(path), "none"), SAFEDIR_ROOT_OK, NULL),
	    -1);
	ASSERT_EQ(errno, ENOENT);
	return (0);
}

/*
 * A directory removed under its descriptor: refreshed only once one is
 * there again (not made), and only a safe one.
 */
TEST(refresh)
{
	char path[PATH_MAX], *cause = NULL;
	int top, fd, old, err;

	ASSERT_OK((top = try_open(AT_FDCWD, at(path, sizeof(path), "rt"), 0755,
	               &err)) >= 0);
	ASSERT_OK((fd = try_open(top, "locks", 0755, &err)) >= 0);
	old = fd;
	ASSERT_EQ(safedir_refresh(top, "locks", &fd, NULL), 0);
	ASSERT_EQ(fd, old);
	ASSERT_EQ(rmdir(at(path, sizeof(path), "rt/locks")), 0);
	ASSERT_EQ(safedir_refresh(top, "locks", &fd, NULL), -1);
	ASSERT_EQ(errno, ENOENT);
	ASSERT_EQ(fd, old);
	ASSERT_EQ(mkdir(path, 0777), 0);
	ASSERT_EQ(chmod(path, 0777), 0);
	ASSERT_EQ(safedir_refresh(top, "locks", &fd, &cause), -1);
	ASSERT_EQ(errno, EPERM);
	ASSERT_OK(cause != NULL && strstr(cause, "mode 0777") != NULL);
	free(cause);
	ASSERT_EQ(fd, old);
	ASSERT_EQ(chmod(path, 0755), 0);
	ASSERT_EQ(safedir_refresh(top, "locks", &fd, NULL), 0);
	ASSERT_OK(fd >= 0);
	ASSERT_EQ(mkdirat(fd, "x", 0700), 0); /* the new directory */
	ASSERT_EQ(mode_of(at(path, sizeof(path), "rt/locks/x")) >= 0, 1);
	close(fd);
	close(top);
	return (0);
}

/* Modes narrowed to a maximum, with a word on what changed. */
TEST(tighten)
{
	char path[PATH_MAX], *what = NULL;
	int fd;

	at(path, sizeof(path), "db");
	ASSERT_OK((fd = open(path, O_RDWR | O_CREAT, 0600)) >= 0);
	ASSERT_EQ(fchmod(fd, 0664), 0);
	ASSERT_EQ(safedir_tighten(fd, 0600, (gid_t)-1, &what), 1);
	ASSERT_STREQ(what, "mode 0664, now 0600");
	free(what);
	ASSERT_EQ(mode_of(path), 0600);
	ASSERT_EQ(safedir_tighten(fd, 0600, (gid_t)-1, &what), 0);
	ASSERT_OK(what == NULL);
	/* Never wider than it was. */
	ASSERT_EQ(safedir_tighten(fd, 0640, getegid(), &what), 0);
	ASSERT_EQ(mode_of(path), 0600);
	ASSERT_EQ(fchmod(fd, 0644), 0);
	ASSERT_EQ(safedir_tighten(fd, 0640, getegid(), &what), 1);
	ASSERT_STREQ(what, "mode 0644, now 0640");
	free(what);
	if (geteuid() == 0) {
		/* The group is changed when group bits stay. */
		ASSERT_EQ(safedir_tighten(fd, 0640, 65534, &what), 1);
		ASSERT_OK(strstr(what, "now 0640 group 65534") != NULL);
		free(what);
	}
	close(fd);
	return (0);
}

/* safedir_open_path of path: the descriptor, or -1 with *err and *cause. */
static int
try_path(const char *path, int *err, char **cause)
{
	int fd;

	*cause = NULL;
	fd = safedir_open_path(path, O_RDONLY | O_CLOEXEC, cause);
	*err = fd == -1 ? errno : 0;
	if (fd == -1)
		printf("# %s: %s\n", path, *cause != NULL ? *cause : "(none)");
	return (fd);
}

/*
 * A path opened one component at a time: links of the effective user in
 * a directory only it may write in are followed, others refused, whether
 * the last component or one above it.
 */
TEST(open_path)
{
	char path[PATH_MAX], p2[PATH_MAX], *cause;
	int fd, err;

	ASSERT_EQ(mkdir(at(path, sizeof(path), "p"), 0755), 0);
	ASSERT_EQ(chmod(path, 0755), 0);
	ASSERT_EQ(mkdir(at(path, sizeof(path), "p/real"), 0755), 0);
	ASSERT_OK((fd = open(at(path, sizeof(path), "p/real/f"),
	               O_WRONLY | O_CREAT, 0600)) >= 0);
	close(fd);
	ASSERT_EQ(symlink("real", at(path, sizeof(path), "p/link")), 0);
	ASSERT_EQ(symlink(at(p2, sizeof(p2), "p/real/f"),
	              at(path, sizeof(path), "p/flink")),
	    0);
	ASSERT_EQ(symlink("loop", at(path, sizeof(path), "p/loop")), 0);
	ASSERT_OK((fd = try_path(
	               at(path, sizeof(path), "p/link/f"), &err, &cause)) >= 0);
	close(fd);
	ASSERT_OK((fd = try_path(
	               at(path, sizeof(path), "p/flink"), &err, &cause)) >= 0);
	close(fd);
	ASSERT_OK((fd = try_path(at(path, sizeof(path), "p//real/./f"), &err,
	               &cause)) >= 0);
	close(fd);
	ASSERT_EQ(
	    try_path(at(path, sizeof(path), "p/loop/f"), &err, &cause), -1);
	ASSERT_EQ(err, ELOOP);
	free(cause);
	ASSERT_EQ(try_path(at(path, sizeof(path), "p/none"), &err, &cause), -1);
	ASSERT_EQ(err, ENOENT);
	ASSERT_STREQ(cause, strerror(ENOENT));
	free(cause);
	ASSERT_EQ(
	    try_path(at(path, sizeof(path), "p/real/f/x"), &err, &cause), -1);
	ASSERT_EQ(err, ENOTDIR);
	free(cause);
	ASSERT_EQ(try_path("relative", &err, &cause), -1);
	ASSERT_EQ(err, EINVAL);
	free(cause);
	/* Others may write in p now: its links are refused, and named. */
	ASSERT_EQ(chmod(at(path, sizeof(path), "p"), 0777), 0);
	ASSERT_EQ(
	    try_path(at(path, sizeof(path), "p/link/f"), &err, &cause), -1);
	ASSERT_EQ(err, EPERM);
	at(p2, sizeof(p2), "p/link is a symbolic link, refused");
	ASSERT_OK(cause != NULL && strstr(cause, p2) != NULL);
	ASSERT_OK(strstr(cause, "mode 0777") != NULL);
	free(cause);
	ASSERT_EQ(
	    try_path(at(path, sizeof(path), "p/flink"), &err, &cause), -1);
	ASSERT_EQ(err, EPERM);
	ASSERT_OK(strncmp(cause, "is a symbolic link, refused", 27) == 0);
	free(cause);
	ASSERT_EQ(chmod(at(path, sizeof(path), "p"), 0755), 0);
	return (0);
}

int
main(void)
{
	const char *tmp = getenv("TMPDIR");

	if (tmp == NULL || *tmp == '\0')
		tmp = "/tmp";
	snprintf(dir, sizeof(dir), "%s/test-safedir.XXXXXX", tmp);
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return (1);
	}
	RUN(open_makes);
	RUN(open_refuses);
	RUN(owner);
	RUN(path_check);
	RUN(refresh);
	RUN(tighten);
	RUN(open_path);
	if (test_failed == 0)
		test_rmtree(dir);
	else
		printf("# kept %s\n", dir);
	TEST_MAIN_END();
}
