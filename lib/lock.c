/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Lock files.  vigild takes an OFD write lock on RUNTIME/vigild.lock (one
 * daemon per runtime dir), on STATE_DIR/vigild.lock (one daemon per state
 * dir; it holds an owner record "PID RUNTIME_DIR" that names vigild to
 * another one, and to enqueue --direct) and on RUNTIME/locks/NAME.lock for each job
 * instance.  The instance's descriptor is inherited by the child, so the
 * lock stays held while any process of the job keeps it, even after vigild
 * died.  Plain POSIX record locks would not do: they are not inherited by
 * fork and vanish when the process closes any descriptor of the file.
 *
 * Who holds a lock is decided only from facts a job cannot forge: the
 * holder record lives in RUNTIME/locks/NAME.holder, which no job gets a
 * descriptor of, and a process counts as a holder only if the kernel lists
 * the lock among its descriptors (the "lock:" lines of /proc/PID/fdinfo).
 */

#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lock.h"
#include "proc.h"

/*
 * Open (creating it) a file of vigild's in a directory that vigild checked,
 * close-on-exec, without following a symlink and without blocking on
 * something planted there.  Refuse anything but a regular file of vigild's
 * user with one link (EPERM), and narrow a wider mode to mode.
 */
static int
lock_open_file(int dirfd, const char *path, mode_t mode)
{
	struct stat st;
	int fd;

	fd = openat(dirfd, path,
	    O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, mode);
	if (fd == -1)
		return (-1);
	if (fstat(fd, &st) == -1)
		goto fail;
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    st.st_nlink != 1) {
		errno = EPERM;
		goto fail;
	}
	if ((st.st_mode & 07777) != mode && fchmod(fd, mode) == -1)
		goto fail;
	return (fd);
fail:
	close(fd);
	return (-1);
}

/*
 * Open the lock file at path, mode 0600: a user who could open it could
 * take a read lock and keep the job from starting.  Return the
 * descriptor, or -1 with errno (EPERM: not a regular file of ours).
 */
int
lock_open(const char *path)
{
	return (lock_open_file(AT_FDCWD, path, 0600));
}

/* As lock_open, for the file name in the directory open at dirfd. */
int
lock_openat(int dirfd, const char *name)
{
	return (lock_open_file(dirfd, name, 0600));
}

/*
 * Open the holder record file at path (mode 0644: pids are no secret).
 * Its descriptor is never given to a job.  Return it, or -1 with errno.
 */
int
lock_record_open(const char *path)
{
	return (lock_open_file(AT_FDCWD, path, 0644));
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
 * Is the file open at fd write-locked by another open file description?
 * Only asks (F_OFD_GETLK): nothing is taken.  Return 1 or 0, or -1 with
 * errno.
 */
int
lock_is_held(int fd)
{
	struct flock fl;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	if (fcntl(fd, F_OFD_GETLK, &fl) == -1)
		return (-1);
	return (fl.l_type != F_UNLCK);
}

/*
 * Replace the owner record of a daemon's lock file (one the daemon alone
 * has open): "PID DIR\n", DIR its runtime directory.  Return 0, or -1 with
 * errno.
 */
int
lock_owner_write(int fd, pid_t pid, const char *dir)
{
	char *buf;
	int n;

	if ((n = asprintf(&buf, "%ld %s\n", (long)pid, dir)) == -1)
		return (-1);
	if (ftruncate(fd, 0) == -1 || pwrite(fd, buf, (size_t)n, 0) != n) {
		free(buf);
		return (-1);
	}
	free(buf);
	return (0);
}

/*
 * Read the owner record of lock_owner_write: the pid into *pid and the
 * directory into *dir, which the caller frees.  Return 0, or -1 with
 * errno (ENOENT: no valid record).
 */
int
lock_owner_read(int fd, pid_t *pid, char **dir)
{
	char buf[PATH_MAX + 32], *sp, *nl, *end;
	ssize_t n;
	long v;

	if ((n = pread(fd, buf, sizeof(buf) - 1, 0)) == -1)
		return (-1);
	buf[n] = '\0';
	errno = 0;
	v = strtol(buf, &end, 10);
	sp = end;
	if (errno != 0 || v <= 0 || v > INT_MAX || *sp != ' ' ||
	    sp[1] == '\0' || (nl = strchr(sp, '\n')) == NULL) {
		errno = ENOENT;
		return (-1);
	}
	*nl = '\0';
	if ((*dir = strdup(sp + 1)) == NULL)
		return (-1);
	*pid = (pid_t)v;
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

/*
 * Empty the holder record: a blank record of full size, so that the next
 * write needs no new space (a full file system cannot fail it).  Return 0,
 * or -1 with errno.
 */
int
lock_holder_clear(int fd)
{
	char buf[LOCK_RECORD_SIZE];

	memset(buf, ' ', sizeof(buf));
	buf[LOCK_RECORD_SIZE - 1] = '\n';
	if (pwrite(fd, buf, LOCK_RECORD_SIZE, 0) != LOCK_RECORD_SIZE)
		return (-1);
	return (0);
}

/* Does the fdinfo file at path show an OFD write lock? */
static int
lock_fdinfo_has_ofd(const char *path)
{
	char line[256], type[16], mode[16];
	FILE *f;
	int found = 0;

	if ((f = fopen(path, "re")) == NULL)
		return (0);
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "lock: %*d: %15s %*s %15s", type, mode) == 2 &&
		    strcmp(type, "OFDLCK") == 0 && strcmp(mode, "WRITE") == 0)
			found = 1;
	}
	fclose(f);
	return (found);
}

/*
 * Does process pid hold the OFD write lock of the file open at lock_fd?
 * True only if one of its descriptors is that file and the kernel lists
 * an OFD write lock on it: a lock is shown only with the descriptors of
 * the open file description that owns it.  Return 1 or 0.
 */
int
lock_pid_holds(pid_t pid, int lock_fd)
{
	char dir[64], path[64 + NAME_MAX + 1];
	struct stat want, st;
	struct dirent *de;
	DIR *d;
	int found = 0;

	if (pid <= 0 || fstat(lock_fd, &want) == -1)
		return (0);
	snprintf(dir, sizeof(dir), "/proc/%ld/fd", (long)pid);
	if ((d = opendir(dir)) == NULL)
		return (0);
	while (!found && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &st) == -1 || st.st_dev != want.st_dev ||
		    st.st_ino != want.st_ino)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/fdinfo/%s", (long)pid,
		    de->d_name);
		found = lock_fdinfo_has_ofd(path);
	}
	closedir(d);
	return (found);
}

struct lock_scan {
	pid_t pgid; /* only members of this group; 0: any process */
	int fd;     /* the lock file */
	pid_t self; /* never this process */
	pid_t found;
};

static int
lock_scan_one(pid_t pid, void *arg)
{
	struct lock_scan *sc = arg;
	pid_t pgid;

	if (pid == sc->self)
		return (0);
	if (sc->pgid != 0 && (proc_pgid(pid, &pgid) == -1 || pgid != sc->pgid))
		return (0);
	if (!lock_pid_holds(pid, sc->fd))
		return (0);
	sc->found = pid;
	return (1);
}

/*
 * Check a holder record against the kernel.  The record names the process
 * group vigild started; a member of it counts only if the kernel shows it
 * holding the lock open at lock_fd.  The recorded pid counts only if the
 * process there started at the recorded time; when it is gone, its group
 * may live on (a grandchild that kept the group), and since the kernel
 * does not reuse a pid while a group carries that id, a live group with
 * the recorded id is still the one vigild started.  Store the holder's pid
 * in *holder.
 */
enum lock_holder_status
lock_holder_check(const struct lock_holder *h, int lock_fd, pid_t *holder)
{
	struct lock_scan sc;
	uint64_t st;

	*holder = 0;
	if (proc_starttime(h->pid, &st) == 0) {
		/* The pid was reused: neither it nor its group is ours. */
		if (st != h->starttime)
			return (LOCK_HOLDER_GONE);
		if (lock_pid_holds(h->pid, lock_fd)) {
			*holder = h->pid;
			return (LOCK_HOLDER_ALIVE);
		}
	}
	/* vigild's children lead their own group (setsid). */
	if (h->pgid != h->pid || !proc_group_exists(h->pgid))
		return (LOCK_HOLDER_GONE);
	memset(&sc, 0, sizeof(sc));
	sc.pgid = h->pgid;
	sc.fd = lock_fd;
	sc.self = getpid();
	if (proc_each(lock_scan_one, &sc) <= 0)
		return (LOCK_HOLDER_GONE);
	*holder = sc.found;
	return (LOCK_HOLDER_GROUP);
}

/*
 * Find a process that holds the lock of the file open at lock_fd (not this
 * one), by a scan of every process: slow, for naming a holder in a
 * message.  Return its pid, or 0 when none was found.
 */
pid_t
lock_find_holder(int lock_fd)
{
	struct lock_scan sc;

	memset(&sc, 0, sizeof(sc));
	sc.fd = lock_fd;
	sc.self = getpid();
	if (proc_each(lock_scan_one, &sc) <= 0)
		return (0);
	return (sc.found);
}
