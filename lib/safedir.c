/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Checked directories.  A root vigild writes into its log, state and
 * runtime directories; if another user could write there too, a symbolic
 * link planted as NAME.log would send job output (and a rotation's
 * truncation) to any file of root's.  So each directory vigild uses is
 * opened once, without following a symbolic link, and checked on the
 * descriptor (no path can be swapped between check and use): it must be a
 * directory of vigild's effective user that neither its group nor others
 * may write to.  A directory vigild makes gets exactly the mode asked for,
 * whatever the umask.
 *
 * Group write is refused too, even with socket_group: the members of that
 * group may run every vigilctl command, but nothing they do needs a file
 * of their own in these directories (connecting to a socket takes write
 * permission on the socket only), and a group-writable directory would let
 * them plant links for root to follow.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "safedir.h"
#include "xmalloc.h"

/* Set *cause (if cause is not NULL) to strerror(errno), errno kept. */
static void
safedir_errno(char **cause, const char *what)
{
	int saved = errno;

	if (cause != NULL)
		xasprintf(cause, "%s%s%s", what, *what != '\0' ? ": " : "",
		    strerror(saved));
	errno = saved;
}

/* "root (uid 0)", or "uid 1234" for a uid without a name. */
static void
safedir_user(uid_t uid, char *buf, size_t size)
{
	struct passwd *pw;

	if ((pw = getpwuid(uid)) != NULL)
		snprintf(buf, size, "%.64s (uid %lu)", pw->pw_name,
		    (unsigned long)uid);
	else
		snprintf(buf, size, "uid %lu", (unsigned long)uid);
}

/*
 * Is st a directory that may be trusted: owned by the effective user (or,
 * with SAFEDIR_ROOT_OK, by root) and writable by neither its group nor
 * others?  Return 0, or -1 with errno EPERM (ENOTDIR for something else
 * than a directory) and *cause (owned by the caller; cause may be NULL)
 * naming the owner and the mode.
 */
int
safedir_stat_check(const struct stat *st, int flags, char **cause)
{
	char owner[96];
	uid_t me = geteuid();
	mode_t mode = st->st_mode & 07777;

	if (!S_ISDIR(st->st_mode)) {
		if (cause != NULL)
			xasprintf(cause, "not a directory");
		errno = ENOTDIR;
		return (-1);
	}
	if (st->st_uid == me ||
	    ((flags & SAFEDIR_ROOT_OK) && st->st_uid == 0)) {
		if ((mode & (S_IWGRP | S_IWOTH)) == 0)
			return (0);
		if (cause != NULL) {
			safedir_user(st->st_uid, owner, sizeof(owner));
			xasprintf(cause,
			    "owner %s, mode %04o: its group or others may "
			    "write in it",
			    owner, (unsigned int)mode);
		}
	} else if (cause != NULL) {
		safedir_user(st->st_uid, owner, sizeof(owner));
		xasprintf(cause, "owner %s, mode %04o: not owned by uid %lu%s",
		    owner, (unsigned int)mode, (unsigned long)me,
		    (flags & SAFEDIR_ROOT_OK) && me != 0 ? " or root" : "");
	}
	errno = EPERM;
	return (-1);
}

/*
 * Check the directory open as fd (see safedir_stat_check).  Return 0, or
 * -1 with errno and *cause (cause may be NULL).
 */
int
safedir_check(int fd, int flags, char **cause)
{
	struct stat st;

	if (fstat(fd, &st) == -1) {
		safedir_errno(cause, "fstat");
		return (-1);
	}
	return (safedir_stat_check(&st, flags, cause));
}

/*
 * Check the directory at path without following a symbolic link, for a
 * program that only looks into it (vigilctl and its socket).  Return 0,
 * or -1 with errno (that of lstat, or EPERM) and *cause (may be NULL).
 */
int
safedir_path_check(const char *path, int flags, char **cause)
{
	struct stat st;

	if (lstat(path, &st) == -1) {
		safedir_errno(cause, "");
		return (-1);
	}
	if (S_ISLNK(st.st_mode)) {
		if (cause != NULL)
			xasprintf(cause, "a symbolic link");
		errno = EPERM;
		return (-1);
	}
	return (safedir_stat_check(&st, flags, cause));
}

/*
 * mkdir -p of s (changed in place, then restored) relative to atfd: the
 * parents with mode 0755, the last one with mode.  Set *created if the last
 * one was made here.  0, or -1 with errno.
 */
static int
safedir_make(int atfd, char *s, mode_t mode, int *created)
{
	char *p;
	int r;

	*created = 0;
	for (p = s + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		r = mkdirat(atfd, s, 0755);
		*p = '/';
		if (r == -1 && errno != EEXIST)
			return (-1);
	}
	if (mkdirat(atfd, s, mode) == 0)
		*created = 1;
	else if (errno != EEXIST)
		return (-1);
	return (0);
}

/* Open the directory s at atfd, never through a symbolic link. */
static int
safedir_opendir(int atfd, const char *s, char **cause)
{
	struct stat st;
	int fd, saved;

	fd = openat(atfd, s, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd != -1)
		return (fd);
	saved = errno;
	/* O_DIRECTORY makes a symbolic link ENOTDIR rather than ELOOP. */
	if ((saved == ENOTDIR || saved == ELOOP) &&
	    fstatat(atfd, s, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(st.st_mode)) {
		if (cause != NULL)
			xasprintf(cause, "a symbolic link");
		errno = EPERM;
		return (-1);
	}
	errno = saved;
	safedir_errno(cause, "");
	return (-1);
}

/*
 * Open the directory path (relative to atfd unless absolute), making it
 * and its missing parents first: the parents with mode 0755, the
 * directory itself with exactly mode.  The directory is opened with
 * O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC and checked on the descriptor, as
 * safedir_check does (no SAFEDIR_ROOT_OK).  Return the descriptor (the
 * caller closes it), or -1 with errno and *cause (cause may be NULL;
 * *cause is owned by the caller and does not repeat path): EPERM when the
 * directory exists but is not to be trusted (a symbolic link, another
 * owner, writable by group or others), else the errno of mkdir or open.
 */
int
safedir_open(int atfd, const char *path, mode_t mode, char **cause)
{
	char *s;
	size_t len;
	int fd = -1, created, saved;

	s = xstrdup(path);
	len = strlen(s);
	while (len > 1 && s[len - 1] == '/')
		s[--len] = '\0';
	if (*s == '\0') {
		errno = ENOENT;
		safedir_errno(cause, "");
		goto out;
	}
	if (safedir_make(atfd, s, mode, &created) == -1) {
		safedir_errno(cause, "mkdir");
		goto out;
	}
	if ((fd = safedir_opendir(atfd, s, cause)) == -1)
		goto out;
	if (created && fchmod(fd, mode) == -1) {
		safedir_errno(cause, "chmod");
		goto fail;
	}
	if (safedir_check(fd, 0, cause) == -1)
		goto fail;
	goto out;
fail:
	saved = errno;
	close(fd);
	fd = -1;
	errno = saved;
out:
	free(s);
	return (fd);
}

/*
 * If the directory open as *fd was removed (it has no link left), open
 * path at atfd again, without making it, and check it as safedir_open
 * does; then close the old descriptor and put the new one in *fd.  Return
 * 0 with *fd usable, or -1 with errno (ENOENT: not there again yet; EPERM:
 * not to be trusted) and *cause (cause may be NULL); *fd is then left
 * alone.
 */
int
safedir_refresh(int atfd, const char *path, int *fd, char **cause)
{
	struct stat st;
	int nfd, saved;

	if (fstat(*fd, &st) == -1) {
		safedir_errno(cause, "fstat");
		return (-1);
	}
	if (st.st_nlink > 0)
		return (0);
	if ((nfd = safedir_opendir(atfd, path, cause)) == -1)
		return (-1);
	if (safedir_check(nfd, 0, cause) == -1) {
		saved = errno;
		close(nfd);
		errno = saved;
		return (-1);
	}
	close(*fd);
	*fd = nfd;
	return (0);
}

/*
 * Narrow the mode of the file or directory open as fd to the bits of max,
 * and, if it keeps group bits and gid is not (gid_t)-1, give it group gid
 * (or, if that fails, take the group bits away too).  Return 1 when
 * something changed, with *what (owned by the caller) saying what, e.g.
 * "mode 0755, now 0700"; 0 when nothing needed to; -1 with errno.
 */
int
safedir_tighten(int fd, mode_t max, gid_t gid, char **what)
{
	struct stat st;
	mode_t was, mode;
	int regroup;

	*what = NULL;
	if (fstat(fd, &st) == -1)
		return (-1);
	was = st.st_mode & 07777;
	mode = was & max;
	regroup = gid != (gid_t)-1 && st.st_gid != gid && (mode & 070) != 0;
	if (mode == was && !regroup)
		return (0);
	if (mode != was && fchmod(fd, mode) == -1)
		return (-1);
	if (regroup && fchown(fd, (uid_t)-1, gid) == -1) {
		regroup = 0;
		mode &= ~(mode_t)070;
		if (fchmod(fd, mode) == -1)
			return (-1);
	}
	if (regroup)
		xasprintf(what, "mode %04o group %lu, now %04o group %lu",
		    (unsigned int)was, (unsigned long)st.st_gid,
		    (unsigned int)mode, (unsigned long)gid);
	else
		xasprintf(what, "mode %04o, now %04o", (unsigned int)was,
		    (unsigned int)mode);
	return (1);
}

/* The most symbolic links safedir_open_path follows (as Linux's 40). */
#define SAFEDIR_MAXLINKS 40

/* A path being resolved by safedir_open_path. */
struct safedir_walk {
	char *rest;  /* what is left to resolve, owned */
	char *shown; /* what was resolved, for messages, owned */
	int dirfd;   /* the directory reached, O_PATH */
	int nlinks;  /* symbolic links followed */
};

/*
 * May the symbolic link name in the directory w->dirfd be followed?  Only
 * if the link and its directory are root's (or vigild's user's) and
 * neither group nor others may write in the directory: nobody else could
 * have made it or put it there.  Return 0, or -1 with errno EPERM and
 * *cause naming the link (the last component is "it").
 */
static int
safedir_link_ok(
    const struct safedir_walk *w, const char *name, int last, char **cause)
{
	struct stat dst, lst;
	char lowner[96], downer[96];
	uid_t me = geteuid();

	if (fstat(w->dirfd, &dst) == -1 ||
	    fstatat(w->dirfd, name, &lst, AT_SYMLINK_NOFOLLOW) == -1) {
		safedir_errno(cause, "stat");
		return (-1);
	}
	if ((lst.st_uid == 0 || lst.st_uid == me) &&
	    (dst.st_uid == 0 || dst.st_uid == me) &&
	    (dst.st_mode & (S_IWGRP | S_IWOTH)) == 0)
		return (0);
	if (cause != NULL) {
		safedir_user(lst.st_uid, lowner, sizeof(lowner));
		safedir_user(dst.st_uid, downer, sizeof(downer));
		xasprintf(cause,
		    "%s%s%s%sis a symbolic link, refused: a link of %s in a "
		    "directory of %s, mode %04o (a link is followed only if "
		    "root owns it and its directory, and only root may write "
		    "there)",
		    last ? "" : w->shown, last ? "" : "/", last ? "" : name,
		    last ? "" : " ", lowner, downer,
		    (unsigned int)(dst.st_mode & 07777));
	}
	errno = EPERM;
	return (-1);
}

/*
 * Follow the symbolic link name in w->dirfd (checked by safedir_link_ok):
 * what is left becomes its target, then next (NULL at the end); an
 * absolute target starts again from "/".  Return 0, or -1 with errno.
 */
static int
safedir_follow(struct safedir_walk *w, const char *name, const char *next)
{
	char target[PATH_MAX], *rest;
	ssize_t n;
	int fd;

	if (++w->nlinks > SAFEDIR_MAXLINKS) {
		errno = ELOOP;
		return (-1);
	}
	if ((n = readlinkat(w->dirfd, name, target, sizeof(target))) == -1)
		return (-1);
	if ((size_t)n >= sizeof(target)) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	target[n] = '\0';
	if (target[0] == '/') {
		if ((fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
			return (-1);
		close(w->dirfd);
		w->dirfd = fd;
		w->shown[0] = '\0';
	}
	xasprintf(&rest, "%s/%s", target, next != NULL ? next : "");
	free(w->rest);
	w->rest = rest;
	return (0);
}

/*
 * One step of safedir_open_path: open the first component of w->rest in
 * w->dirfd.  Return 1 with *fd the file opened with oflags (the end), 0
 * when the walk goes on (into a directory, or through a link), -1 with
 * errno and *cause.
 */
static int
safedir_step(struct safedir_walk *w, int oflags, int *fd, char **cause)
{
	struct stat st;
	char *name = w->rest + strspn(w->rest, "/"), *next, *shown;
	int last, islink, saved;

	if ((next = strchr(name, '/')) != NULL)
		*next++ = '\0';
	last = next == NULL || next[strspn(next, "/")] == '\0';
	if (*name == '\0')
		name = ".";
	*fd = openat(w->dirfd, name,
	    last ? oflags | O_NOFOLLOW : O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (*fd != -1 && fstat(*fd, &st) == -1) {
		safedir_errno(cause, "fstat");
		close(*fd);
		return (-1);
	}
	saved = errno;
	if (*fd == -1)
		islink = (errno == ELOOP || errno == ENOTDIR) &&
		    fstatat(w->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISLNK(st.st_mode);
	else
		islink = S_ISLNK(st.st_mode);
	errno = saved;
	if (islink) {
		if (*fd != -1)
			close(*fd);
		if (safedir_link_ok(w, name, last, cause) == -1)
			return (-1);
		if (safedir_follow(w, name, next) == -1) {
			safedir_errno(cause, "");
			return (-1);
		}
		return (0);
	}
	if (*fd != -1 && last)
		return (1);
	if (*fd != -1 && !S_ISDIR(st.st_mode)) {
		close(*fd);
		*fd = -1;
		errno = ENOTDIR;
	}
	if (*fd == -1) {
		safedir_errno(cause, "");
		return (-1);
	}
	xasprintf(&shown, "%s/%s", w->shown, name);
	free(w->shown);
	w->shown = shown;
	close(w->dirfd);
	w->dirfd = *fd;
	memmove(w->rest, next, strlen(next) + 1);
	return (0);
}

/*
 * Open the absolute path with oflags (O_NOFOLLOW is added) for a job,
 * resolving it one component at a time from "/", each directory opened
 * with O_PATH | O_NOFOLLOW: no component can be swapped for a symbolic
 * link between a check and the use.  A symbolic link met on the way, the
 * last component included, is followed only if it and its directory
 * belong to root or to the effective user and neither group nor others
 * may write in that directory (as OpenSSH and sudo check a path); so
 * /var/run -> /run still works, and a link a job's user put in its own
 * directory does not.  Return the descriptor, or -1 with errno (EPERM for
 * a refused link) and *cause (owned by the caller; cause may be NULL),
 * which does not repeat path but names a refused link above its last
 * component.
 */
int
safedir_open_path(const char *path, int oflags, char **cause)
{
	struct safedir_walk w;
	int fd = -1, r, saved;

	if (path[0] != '/') {
		errno = EINVAL;
		if (cause != NULL)
			xasprintf(cause, "not an absolute path");
		return (-1);
	}
	memset(&w, 0, sizeof(w));
	if ((w.dirfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1) {
		safedir_errno(cause, "/");
		return (-1);
	}
	w.rest = xstrdup(path);
	w.shown = xstrdup("");
	while ((r = safedir_step(&w, oflags, &fd, cause)) == 0)
		;
	saved = errno;
	close(w.dirfd);
	free(w.rest);
	free(w.shown);
	errno = saved;
	return (r == 1 ? fd : -1);
}
