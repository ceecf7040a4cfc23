/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Lock files.  vigild takes an OFD write lock on RUNTIME/vigild.lock (one
 * daemon per runtime dir) and on RUNTIME/locks/NAME.lock for each job
 * instance.  The instance's descriptor is inherited by the child, so the
 * lock stays held while any process of the job keeps it, even after vigild
 * died.  Plain POSIX record locks would not do: they are not inherited by
 * fork and vanish when the process closes any descriptor of the file.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lock.h"
#include "proc.h"

/*
 * Open (creating it, mode 0644) the lock file at path, close-on-exec and
 * without following a symlink.  Return the descriptor, or -1 with errno.
 */
int
lock_open(const char *path)
{
	return (open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
}

/*
 * Take a write lock on the whole file without waiting.  Return 0 when it
 * is ours (also when this description already held it), or -1 with errno
 * EAGAIN when another open file description holds it.
 */
int
lock_try(int fd)
{
	struct flock fl;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	if (fcntl(fd, F_OFD_SETLK, &fl) == -1) {
		if (errno == EACCES)
			errno = EAGAIN;
		return (-1);
	}
	return (0);
}

/*
 * Read the holder record of a lock file into *h.  Return 0, or -1 with
 * errno ENOENT when the file holds no (valid) record.
 */
int
lock_holder_read(int fd, struct lock_holder *h)
{
	char buf[128];
	long pid, pgid, vigild;
	uint64_t st;
	ssize_t n;

	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n == -1)
		return (-1);
	buf[n] = '\0';
	if (sscanf(buf, "%ld %ld %" SCNu64 " %ld", &pid, &pgid, &st, &vigild) !=
	        4 ||
	    pid <= 0 || pgid <= 0) {
		errno = ENOENT;
		return (-1);
	}
	h->pid = (pid_t)pid;
	h->pgid = (pid_t)pgid;
	h->starttime = st;
	h->vigild = (pid_t)vigild;
	return (0);
}

/*
 * Replace the holder record.  Every record is LOCK_RECORD_SIZE bytes
 * (padded with spaces), so one pwrite replaces the last one whole, without
 * a truncate.  Return 0, or -1 with errno.
 */
int
lock_holder_write(int fd, const struct lock_holder *h)
{
	char buf[LOCK_RECORD_SIZE + 1];
	int n;

	n = snprintf(buf, sizeof(buf), "%ld %ld %" PRIu64 " %ld", (long)h->pid,
	    (long)h->pgid, h->starttime, (long)h->vigild);
	if (n < 0 || n >= LOCK_RECORD_SIZE) {
		errno = EOVERFLOW;
		return (-1);
	}
	memset(buf + n, ' ', (size_t)(LOCK_RECORD_SIZE - 1 - n));
	buf[LOCK_RECORD_SIZE - 1] = '\n';
	if (pwrite(fd, buf, LOCK_RECORD_SIZE, 0) != LOCK_RECORD_SIZE)
		return (-1);
	return (0);
}

/* Empty the holder record.  Return 0, or -1 with errno. */
int
lock_holder_clear(int fd)
{
	return (ftruncate(fd, 0));
}

/*
 * Check a holder record against the live system.  The pid counts only if
 * the process there started at the recorded time.  When it is gone, its
 * process group may live on (a grandchild that kept the group); since the
 * kernel does not reuse a pid while a group carries that id, a live group
 * with the recorded pgid is still the holder's.
 */
enum lock_holder_status
lock_holder_check(const struct lock_holder *h)
{
	uint64_t st;

	if (proc_starttime(h->pid, &st) == 0) {
		if (st == h->starttime)
			return (LOCK_HOLDER_ALIVE);
		/* The pid was reused; a group led by it is not ours. */
		if (h->pgid == h->pid)
			return (LOCK_HOLDER_GONE);
	}
	if (proc_group_exists(h->pgid))
		return (LOCK_HOLDER_GROUP);
	return (LOCK_HOLDER_GONE);
}
