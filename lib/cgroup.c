/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * cgroup v2 file operations (see cgroup.h).  The hierarchy is found from
 * /proc/self/mountinfo (the first cgroup2 mount: /sys/fs/cgroup on a pure
 * v2 host, /sys/fs/cgroup/unified on a hybrid one) and vigild's place in
 * it from /proc/self/cgroup ("0::PATH").  A cgroup is a directory: it is
 * made with mkdir, entered by writing a pid to cgroup.procs, watched
 * through cgroup.events ("populated 0" once every member is gone, zombies
 * included), emptied with cgroup.kill (Linux 5.14; before that, frozen,
 * each member killed, thawed) and removed with rmdir once empty.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "xmalloc.h"

/* Passes over cgroup.procs that a signal makes before it gives up. */
#define CGROUP_SIGNAL_PASSES 32
/* The largest control file read whole. */
#define CGROUP_FILE_MAX 65536

/* Copy a mountinfo field into buf, undoing its \ooo escapes. */
static int
cgroup_unescape(const char *s, size_t n, char *buf, size_t len)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		if (o + 1 >= len)
			return (-1);
		if (s[i] == '\\' && i + 3 < n && s[i + 1] >= '0' &&
		    s[i + 1] <= '3') {
			buf[o++] = (char)((s[i + 1] - '0') * 64 +
			    (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
			i += 3;
		} else
			buf[o++] = s[i];
	}
	buf[o] = '\0';
	return (0);
}

/* The n-th (0-based) space-separated field of line: start and length. */
static const char *
cgroup_field(const char *line, int n, size_t *len)
{
	const char *p = line, *end;

	while (n-- > 0) {
		if ((p = strchr(p, ' ')) == NULL)
			return (NULL);
		p++;
	}
	end = strpbrk(p, " \n");
	*len = end != NULL ? (size_t)(end - p) : strlen(p);
	return (p);
}

/*
 * In text (the contents of /proc/self/mountinfo), find the first cgroup2
 * mount: its mount point into mnt and the root of the hierarchy it shows
 * into root.  Return 0, or -1 (ENOENT: none).
 */
int
cgroup_mount_parse(
    const char *text, char *mnt, size_t mntlen, char *root, size_t rootlen)
{
	const char *line = text, *sep, *f;
	size_t n;

	for (; line != NULL && *line != '\0';
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if ((sep = strstr(line, " - ")) == NULL ||
		    (strchr(line, '\n') != NULL && sep > strchr(line, '\n')))
			continue;
		if (strncmp(sep + 3, "cgroup2 ", 8) != 0)
			continue;
		if ((f = cgroup_field(line, 3, &n)) == NULL ||
		    cgroup_unescape(f, n, root, rootlen) == -1 ||
		    (f = cgroup_field(line, 4, &n)) == NULL ||
		    cgroup_unescape(f, n, mnt, mntlen) == -1) {
			errno = EINVAL;
			return (-1);
		}
		return (0);
	}
	errno = ENOENT;
	return (-1);
}

/*
 * In text (the contents of /proc/self/cgroup), find the cgroup v2 line
 * "0::PATH": PATH into path.  Return 0, or -1 (ENOENT: none).
 */
int
cgroup_self_parse(const char *text, char *path, size_t len)
{
	const char *line = text, *end;
	size_t n;

	for (; line != NULL && *line != '\0';
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (strncmp(line, "0::", 3) != 0)
			continue;
		end = strchr(line, '\n');
		n = end != NULL ? (size_t)(end - line - 3) : strlen(line + 3);
		if (n + 1 > len) {
			errno = ENAMETOOLONG;
			return (-1);
		}
		memcpy(path, line + 3, n);
		path[n] = '\0';
		return (0);
	}
	errno = ENOENT;
	return (-1);
}

/*
 * Descriptors kept open for usage files stay below half the soft
 * RLIMIT_NOFILE (at most 4 per instance): the jobs' own descriptors
 * (locks, logs, pipes) come first.
 */
static int
cgroup_keep_max(void)
{
	static int max;
	struct rlimit rl;

	if (max == 0) {
		if (getrlimit(RLIMIT_NOFILE, &rl) == -1 ||
		    rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > INT_MAX)
			max = INT_MAX / 2;
		else
			max = (int)(rl.rlim_cur / 2);
	}
	return (max);
}

/*
 * Read a small file (name at dirfd) into buf, NUL-terminated, with one
 * read from its start (the usage files are a few hundred bytes; a short
 * read of a kernfs or proc file is all of it).  With cache, the file is
 * opened once and kept open in *cache (-2 remembers that it is not
 * there).  Return the length, or -1 with errno set.
 */
static ssize_t
cgroup_read_small(
    int dirfd, const char *name, int *cache, char *buf, size_t size)
{
	ssize_t n;
	int fd, e;

	if (cache != NULL && *cache == -2) {
		errno = ENOENT;
		return (-1);
	}
	if (cache != NULL && *cache >= 0)
		fd = *cache;
	else if ((fd = openat(
	              dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1) {
		if (cache != NULL && errno == ENOENT)
			*cache = -2;
		return (-1);
	} else if (cache != NULL && fd < cgroup_keep_max())
		*cache = fd;
	else
		cache = NULL; /* read it, and close it again */
	do
		n = pread(fd, buf, size - 1, 0);
	while (n == -1 && errno == EINTR);
	e = errno;
	if (cache == NULL)
		close(fd);
	if (n == -1) {
		errno = e;
		return (-1);
	}
	buf[n] = '\0';
	return (n);
}

/* Read a small file at (dirfd, name) whole, NUL-terminated. */
static char *
cgroup_slurp(int dirfd, const char *name)
{
	char *buf;
	size_t got = 0;
	ssize_t n;
	int fd, e;

	if ((fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return (NULL);
	buf = xmalloc(CGROUP_FILE_MAX + 1);
	while (got < CGROUP_FILE_MAX &&
	    (n = read(fd, buf + got, CGROUP_FILE_MAX - got)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			e = errno;
			free(buf);
			close(fd);
			errno = e;
			return (NULL);
		}
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	return (buf);
}

/*
 * Is word one of the space-separated words of the control file name at
 * dirfd (cgroup.controllers, cgroup.subtree_control)?  0 if unreadable.
 */
int
cgroup_lists(int dirfd, const char *name, const char *word)
{
	char *text = cgroup_slurp(dirfd, name), *w, *save = NULL;
	int found = 0;

	if (text == NULL)
		return (0);
	for (w = strtok_r(text, " \n", &save); w != NULL && !found;
	     w = strtok_r(NULL, " \n", &save))
		found = strcmp(w, word) == 0;
	free(text);
	return (found);
}

/* Is the cgroup at path delegated to its owner (systemd's xattr)? */
static int
cgroup_is_delegated(const char *path)
{
	static const char *const names[] = { "trusted.delegate",
		"user.delegate" };
	char v[8];
	ssize_t n;
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		n = getxattr(path, names[i], v, sizeof(v) - 1);
		if (n > 0) {
			v[n] = '\0';
			if (strcmp(v, "1") == 0)
				return (1);
		}
	}
	return (0);
}

/* vigild's own cgroup as a path under the mount, from mount and its root. */
static int
cgroup_self_path(
    struct cgroup_where *w, const char *root, const char *self, char **cause)
{
	size_t rlen = strcmp(root, "/") == 0 ? 0 : strlen(root);

	if (rlen > 0 &&
	    (strncmp(self, root, rlen) != 0 ||
	        (self[rlen] != '\0' && self[rlen] != '/'))) {
		xasprintf(cause,
		    "vigild's cgroup %s is not under the cgroup2 "
		    "mount (which shows %s)",
		    self, root);
		errno = ENOENT;
		return (-1);
	}
	if ((size_t)snprintf(w->self, sizeof(w->self), "%s%s", w->mount,
	        strcmp(self + rlen, "/") == 0 ? "" : self + rlen) >=
	    sizeof(w->self)) {
		xasprintf(cause, "cgroup path too long");
		errno = ENAMETOOLONG;
		return (-1);
	}
	return (0);
}

/* Does the directory dir lack the file name? */
static int
cgroup_lacks(const char *dir, const char *name)
{
	struct stat st;
	int fd, r;

	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return (0);
	r = fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == -1 &&
	    errno == ENOENT;
	close(fd);
	return (r);
}

/*
 * Find the cgroup2 hierarchy and vigild's cgroup in it.  Return 0, or -1
 * with *cause (ENOENT: no cgroup2 here).
 */
int
cgroup_find(struct cgroup_where *w, char **cause)
{
	char root[PATH_MAX], self[PATH_MAX], *mi, *cg;
	int r = -1;

	memset(w, 0, sizeof(*w));
	mi = cgroup_slurp(AT_FDCWD, "/proc/self/mountinfo");
	cg = cgroup_slurp(AT_FDCWD, "/proc/self/cgroup");
	if (mi == NULL || cg == NULL)
		xasprintf(cause, "/proc/self: %s", strerror(errno));
	else if (cgroup_mount_parse(
	             mi, w->mount, sizeof(w->mount), root, sizeof(root)) == -1)
		xasprintf(cause, "no cgroup2 file system is mounted");
	else if (cgroup_self_parse(cg, self, sizeof(self)) == -1)
		xasprintf(cause, "no cgroup v2 line in /proc/self/cgroup");
	else if (cgroup_self_path(w, root, self, cause) == 0) {
		/* The root of a hierarchy has no cgroup.events. */
		w->is_root = cgroup_lacks(w->self, "cgroup.events");
		w->delegated = cgroup_is_delegated(w->self);
		r = 0;
	}
	free(mi);
	free(cg);
	return (r);
}

/*
 * Open the cgroup name under the cgroup dirfd (made first when create).
 * Return a directory descriptor, or -1.
 */
int
cgroup_open(int dirfd, const char *name, int create)
{
	if (create && mkdirat(dirfd, name, 0755) == -1 && errno != EEXIST)
		return (-1);
	return (openat(
	    dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
}

/* Remove the empty cgroup name under dirfd; one already gone is fine. */
int
cgroup_remove(int dirfd, const char *name)
{
	if (unlinkat(dirfd, name, AT_REMOVEDIR) == -1 && errno != ENOENT)
		return (-1);
	return (0);
}

/* Write value to the control file name of the cgroup fd. */
int
cgroup_write(int fd, const char *name, const char *value)
{
	size_t len = strlen(value);
	ssize_t n;
	int wfd, e;

	if ((wfd = openat(fd, name, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return (-1);
	while ((n = write(wfd, value, len)) == -1 && errno == EINTR)
		;
	e = errno;
	close(wfd);
	if (n == -1) {
		errno = e;
		return (-1);
	}
	if ((size_t)n != len) {
		errno = EIO;
		return (-1);
	}
	return (0);
}

/* Move process pid (0: the caller) into the cgroup fd. */
int
cgroup_move(int fd, pid_t pid)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", (long)pid);
	return (cgroup_write(fd, "cgroup.procs", buf));
}

/*
 * Is anything left in the cgroup fd (or below it)?  Return 1, 0, or -1.
 * A process that exited counts as gone even before it is reaped.
 */
int
cgroup_populated(int fd)
{
	char *text = cgroup_slurp(fd, "cgroup.events"), *p;
	int r = -1;

	if (text == NULL)
		return (-1);
	if ((p = strstr(text, "populated ")) != NULL)
		r = p[10] == '1';
	else
		errno = EINVAL;
	free(text);
	return (r);
}

/* The processes in the cgroup fd: *pids (to free) and *n; cgroup.procs
 * kept open in *cache if not NULL. */
static int
cgroup_pids_read(int fd, int *cache, pid_t **pids, size_t *n)
{
	char small[4096], *text = small, *p, *end;
	ssize_t len;
	long v;

	*pids = NULL;
	*n = 0;
	/* Most cgroups hold a few processes: no allocation for those. */
	if ((len = cgroup_read_small(
	         fd, "cgroup.procs", cache, small, sizeof(small))) == -1)
		return (-1);
	if ((size_t)len == sizeof(small) - 1 &&
	    (text = cgroup_slurp(fd, "cgroup.procs")) == NULL)
		return (-1);
	for (p = text; *p != '\0'; p = end) {
		v = strtol(p, &end, 10);
		if (end == p)
			break;
		if (v > 0) {
			*pids = xreallocarray(*pids, *n + 1, sizeof(**pids));
			(*pids)[(*n)++] = (pid_t)v;
		}
		while (*end == '\n')
			end++;
	}
	if (text != small)
		free(text);
	return (0);
}

/* The processes in the cgroup fd: *pids (to free), *n. */
int
cgroup_pids(int fd, pid_t **pids, size_t *n)
{
	return (cgroup_pids_read(fd, NULL, pids, n));
}

static int
cgroup_seen(const pid_t *v, size_t n, pid_t pid)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (v[i] == pid)
			return (1);
	}
	return (0);
}

/* A pidfd for pid, or -1 (gone, or a kernel or valgrind without it). */
static int
cgroup_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return ((int)syscall(SYS_pidfd_open, pid, 0));
#else
	(void)pid;
	errno = ENOSYS;
	return (-1);
#endif
}

/* sig to the process behind pidfd pfd, else (no pidfd) to pid. */
static void
cgroup_send(int pfd, pid_t pid, int sig)
{
#ifdef SYS_pidfd_send_signal
	if (pfd != -1 && syscall(SYS_pidfd_send_signal, pfd, sig, NULL, 0) == 0)
		return;
	if (pfd != -1 && errno != ENOSYS)
		return; /* it is gone */
#endif
	(void)pfd;
	(void)kill(pid, sig);
}

/*
 * One pass of cgroup_signal over the members *cur (n of them): pin each
 * one not in done with a pidfd, read the members again into *cur (for
 * the next pass), and signal the pinned ones the cgroup still lists, so
 * that a pid reused by a process outside the cgroup between the two
 * reads is never signalled.  Return the number of new members.
 */
static size_t
cgroup_signal_pass(
    int fd, int sig, pid_t **cur, size_t *n, pid_t **done, size_t *ndone)
{
	pid_t *was = *cur;
	size_t nwas = *n, i, fresh = 0;
	int *pfd = xreallocarray(NULL, nwas + 1, sizeof(*pfd));

	for (i = 0; i < nwas; i++) {
		pfd[i] = -2;
		if (!cgroup_seen(*done, *ndone, was[i])) {
			pfd[i] = cgroup_pidfd(was[i]);
			fresh++;
		}
	}
	*cur = NULL;
	*n = 0;
	if (fresh > 0)
		(void)cgroup_pids(fd, cur, n); /* none on failure: none sent */
	for (i = 0; i < nwas; i++) {
		if (pfd[i] == -2)
			continue;
		if (cgroup_seen(*cur, *n, was[i]))
			cgroup_send(pfd[i], was[i], sig);
		if (pfd[i] >= 0)
			close(pfd[i]);
		*done = xreallocarray(*done, *ndone + 1, sizeof(**done));
		(*done)[(*ndone)++] = was[i];
	}
	free(pfd);
	free(was);
	return (fresh);
}

/*
 * Send sig to every process of the cgroup fd, those that arrive while it
 * goes included: the members are read again until no new one shows up.
 * Return the number of members seen, or -1.
 */
int
cgroup_signal(int fd, int sig)
{
	pid_t *cur, *done = NULL;
	size_t n, ndone = 0;
	int pass;

	if (cgroup_pids(fd, &cur, &n) == -1)
		return (-1);
	for (pass = 0; pass < CGROUP_SIGNAL_PASSES; pass++) {
		if (cgroup_signal_pass(fd, sig, &cur, &n, &done, &ndone) == 0)
			break;
	}
	free(cur);
	free(done);
	return ((int)ndone);
}

/*
 * SIGKILL to every process of the cgroup fd at once (cgroup.kill); on a
 * kernel without it, freeze the cgroup so that nothing forks meanwhile,
 * kill each member, and thaw it.
 */
int
cgroup_kill(int fd)
{
	int r;

	if (cgroup_write(fd, "cgroup.kill", "1") == 0)
		return (0);
	if (errno != ENOENT)
		return (-1);
	(void)cgroup_write(fd, "cgroup.freeze", "1");
	r = cgroup_signal(fd, SIGKILL);
	(void)cgroup_write(fd, "cgroup.freeze", "0");
	return (r == -1 ? -1 : 0);
}

/* The number after key (a line "key N") in the control file name. */
static uint64_t
cgroup_read_key(int fd, const char *name, int *cache, const char *key)
{
	char text[4096], *p;
	size_t klen = strlen(key);

	if (cgroup_read_small(fd, name, cache, text, sizeof(text)) == -1)
		return (UINT64_MAX);
	for (p = text; p != NULL && *p != '\0';
	     p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (klen == 0 || (strncmp(p, key, klen) == 0 && p[klen] == ' '))
			return (strtoull(p + klen, NULL, 10));
	}
	return (UINT64_MAX);
}

/* memory.events' oom_kill: processes the OOM killer took; UINT64_MAX
 * without a memory controller. */
uint64_t
cgroup_oom_kills(int fd)
{
	return (cgroup_read_key(fd, "memory.events", NULL, "oom_kill"));
}

/*
 * The resident memory of the cgroup's processes, from /proc/PID/statm;
 * the first one's file kept open in files (a run is mostly one process):
 * a reused pid cannot mislead it, the descriptor stays with the process
 * it was opened for and fails (ESRCH) once that one is gone.
 */
static uint64_t
cgroup_rss(const pid_t *pids, size_t n, struct cgroup_files *files)
{
	char path[64], buf[128];
	unsigned long size, rss;
	uint64_t sum = 0, page = (uint64_t)sysconf(_SC_PAGESIZE);
	ssize_t len;
	size_t i;
	int *cache;

	for (i = 0; i < n; i++) {
		cache = NULL;
		if (files != NULL && i == 0) {
			if (files->statm_pid != pids[0] && files->statm >= 0) {
				close(files->statm);
				files->statm = -1;
			}
			files->statm_pid = pids[0];
			cache = &files->statm;
		}
		snprintf(path, sizeof(path), "/proc/%ld/statm", (long)pids[i]);
		len =
		    cgroup_read_small(AT_FDCWD, path, cache, buf, sizeof(buf));
		if (len == -1 && cache != NULL && *cache >= 0) {
			/* The process it was opened for is gone. */
			close(*cache);
			*cache = -1;
			len = cgroup_read_small(
			    AT_FDCWD, path, cache, buf, sizeof(buf));
		}
		if (cache != NULL && *cache == -2)
			*cache = -1; /* a process gone is no missing file */
		if (len != -1 && sscanf(buf, "%lu %lu", &size, &rss) == 2)
			sum += (uint64_t)rss * page;
	}
	return (sum);
}

/*
 * What the cgroup fd uses: CPU from cpu.stat, memory from memory.current
 * (else the sum of its processes' RSS), tasks from pids.current (else
 * the number of its processes).  files, if not NULL, keeps the files
 * open for the next call (cgroup_files_close() closes them): a scrape
 * then costs a pread(2) per file, not a path lookup.
 */
int
cgroup_usage(int fd, struct cgroup_files *files, struct cgroup_usage *u)
{
	pid_t *pids;
	size_t n;

	u->cpu_usec = cgroup_read_key(
	    fd, "cpu.stat", files ? &files->cpu : NULL, "usage_usec");
	u->memory_bytes = cgroup_read_key(
	    fd, "memory.current", files ? &files->memory : NULL, "");
	u->tasks = cgroup_read_key(
	    fd, "pids.current", files ? &files->pids : NULL, "");
	if (u->memory_bytes != UINT64_MAX && u->tasks != UINT64_MAX)
		return (0);
	if (cgroup_pids_read(fd, files ? &files->procs : NULL, &pids, &n) == -1)
		return (-1);
	if (u->memory_bytes == UINT64_MAX)
		u->memory_bytes = cgroup_rss(pids, n, files);
	if (u->tasks == UINT64_MAX)
		u->tasks = n;
	free(pids);
	return (0);
}

/* Close the files cgroup_usage() kept open; mark them not opened. */
void
cgroup_files_close(struct cgroup_files *files)
{
	int *fds[5];
	size_t i;

	if (files == NULL)
		return;
	fds[0] = &files->cpu;
	fds[1] = &files->memory;
	fds[2] = &files->pids;
	fds[3] = &files->procs;
	fds[4] = &files->statm;
	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
	files->statm_pid = 0;
}
