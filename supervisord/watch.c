/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * watch = {...}: a service restarted when something under one of its
 * paths changes (pm2's --watch, for development).  One inotify descriptor
 * for vigild, an I/O source of the loop; each watched directory is one
 * watch descriptor, shared by the jobs that watch it.  Directories are
 * watched whole, subdirectories included, and a new subdirectory is
 * followed; a file is watched through its directory, by name (editors
 * replace files by renaming).  A burst of changes is one restart, once
 * watch_delay has passed without another.  Ignored: the directories of
 * version control and caches (.git, .hg, .svn, __pycache__,
 * node_modules) and the files editors and interpreters write beside the
 * code (*.swp, *.swo, *.swx, *~, .#*, #*#, 4913, *.pyc), or a restart
 * would make the next change itself.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/tree.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "duration.h"
#include "effects.h"
#include "evloop.h"
#include "inst.h"
#include "jobs.h"
#include "log.h"
#include "safedir.h"
#include "xmalloc.h"

#define WATCH_MASK                                                             \
	(IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM |  \
	    IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF | IN_ONLYDIR)

/* A job's interest in a directory: everything below it, or one name. */
struct watch_ref {
	struct job *job;
	char *only; /* a watched file's name, or NULL */
};

/* One watch descriptor: a directory. */
struct watch_dir {
	int wd;
	char *path;
	struct watch_ref *refs;
	size_t nrefs;
	RB_ENTRY(watch_dir) entry;
};

static int
watch_cmp(struct watch_dir *a, struct watch_dir *b)
{
	return (a->wd < b->wd ? -1 : a->wd > b->wd);
}

RB_HEAD(watch_tree, watch_dir);
RB_PROTOTYPE(watch_tree, watch_dir, entry, watch_cmp)
RB_GENERATE(watch_tree, watch_dir, entry, watch_cmp)

static struct watch_tree watch_dirs = RB_INITIALIZER(&watch_dirs);
static int watch_fd = -1;
static sd_event_source *watch_src;
static size_t watch_ndirs;

static int watch_readable(sd_event_source *, int, uint32_t, void *);

/* Is name one of what a change of is never a reason to restart? */
static int
watch_ignored(const char *name, int is_dir)
{
	static const char *const dirs[] = { ".git", ".hg", ".svn",
		"__pycache__", "node_modules" };
	static const char *const files[] = { "*.swp", "*.swo", "*.swx", "*~",
		".#*", "#*#", "4913", "*.pyc" };
	size_t i;

	for (i = 0; is_dir && i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (strcmp(name, dirs[i]) == 0)
			return (1);
	}
	for (i = 0; !is_dir && i < sizeof(files) / sizeof(files[0]); i++) {
		if (fnmatch(files[i], name, 0) == 0)
			return (1);
	}
	return (0);
}

/* The inotify descriptor, made on first use. */
static int
watch_open(void)
{
	if (watch_fd != -1)
		return (0);
	if ((watch_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) == -1) {
		log_warn("watch: inotify_init1");
		return (-1);
	}
	evloop_io(&watch_src, watch_fd, EPOLLIN, watch_readable, NULL);
	return (0);
}

/*
 * Open the directory path, through no symbolic link a user could have
 * made (safedir_open_path): a job's user who owns a directory above it
 * must not point vigild at a directory of root's.  The descriptor, or -1
 * (logged).
 */
static int
watch_open_dir(struct job *j, const char *path)
{
	char *cause;
	int fd;

	fd =
	    safedir_open_path(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, &cause);
	if (fd == -1) {
		log_warnx("%s: watch %s: %s", j->name, path, cause);
		free(cause);
	}
	return (fd);
}

/*
 * Watch directory path for job j (everything, or only the name only);
 * with dirfd, leave the directory open there (the caller closes it).
 */
static int
watch_add(struct job *j, const char *path, const char *only, int *dirfd)
{
	struct watch_dir key, *d;
	char fdpath[64];
	size_t i;
	int fd, saved;

	if ((fd = watch_open_dir(j, path)) == -1)
		return (-1);
	memset(&key, 0, sizeof(key));
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	key.wd = inotify_add_watch(watch_fd, fdpath, WATCH_MASK);
	saved = errno;
	if (key.wd == -1 || dirfd == NULL)
		close(fd);
	else
		*dirfd = fd;
	errno = saved;
	if (key.wd == -1 && errno == ENOSPC) {
		log_warnx("%s: watch %s: no inotify watch left (sysctl "
		          "fs.inotify.max_user_watches; %zu in use by vigild)",
		    j->name, path, watch_ndirs);
		return (-1);
	}
	if (key.wd == -1) {
		log_warn("%s: watch %s", j->name, path);
		return (-1);
	}
	if ((d = RB_FIND(watch_tree, &watch_dirs, &key)) == NULL) {
		d = xcalloc(1, sizeof(*d));
		d->wd = key.wd;
		d->path = xstrdup(path);
		RB_INSERT(watch_tree, &watch_dirs, d);
		watch_ndirs++;
	}
	for (i = 0; i < d->nrefs; i++) {
		if (d->refs[i].job == j &&
		    (d->refs[i].only == NULL ||
		        (only != NULL && strcmp(d->refs[i].only, only) == 0)))
			return (0);
	}
	d->refs = xreallocarray(d->refs, d->nrefs + 1, sizeof(*d->refs));
	d->refs[d->nrefs].job = j;
	d->refs[d->nrefs++].only = only != NULL ? xstrdup(only) : NULL;
	return (0);
}

/* Watch the directory path and every directory below it for job j. */
static void
watch_tree_add(struct job *j, const char *path)
{
	char sub[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *dir;
	int fd;

	if (watch_add(j, path, NULL, &fd) == -1)
		return;
	if ((dir = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	while ((de = readdir(dir)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    watch_ignored(de->d_name, 1) ||
		    (size_t)snprintf(sub, sizeof(sub), "%s/%s", path,
		        de->d_name) >= sizeof(sub))
			continue;
		/* Never through a symbolic link: no loops. */
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(st.st_mode))
			watch_tree_add(j, sub);
	}
	closedir(dir);
}

/* Start watching the job's paths. */
void
watch_job_attach(struct job *j)
{
	char dir[PATH_MAX], *slash;
	struct stat st;
	size_t i;
	int fd, isdir, missing;

	if (j->spec->nwatch == 0 || watch_open() == -1)
		return;
	for (i = 0; i < j->spec->nwatch; i++) {
		const char *path = j->spec->watch[i];

		fd = safedir_open_path(path, O_PATH | O_CLOEXEC, NULL);
		missing = fd == -1 && errno == ENOENT;
		isdir = fd != -1 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
		if (fd != -1)
			close(fd);
		if (isdir) {
			watch_tree_add(j, path);
			continue;
		}
		/* A file, there or to come: through its directory. */
		strlcpy(dir, path, sizeof(dir));
		slash = strrchr(dir, '/');
		*slash = '\0';
		if (watch_add(j, dir[0] != '\0' ? dir : "/", slash + 1, NULL) ==
		    -1)
			continue;
		if (missing)
			log_warnx("%s: watch %s: not there yet (its directory "
			          "is watched)",
			    j->name, path);
	}
	log_debug(
	    "%s: %zu directories watched by vigild", j->name, watch_ndirs);
}

/* Forget the directory d (its watch descriptor is gone or going). */
static void
watch_dir_free(struct watch_dir *d)
{
	size_t i;

	RB_REMOVE(watch_tree, &watch_dirs, d);
	watch_ndirs--;
	for (i = 0; i < d->nrefs; i++)
		free(d->refs[i].only);
	free(d->refs);
	free(d->path);
	free(d);
}

/* Stop watching for the job (it goes, or its spec changes). */
void
watch_job_detach(struct job *j)
{
	struct watch_dir *d, *next;
	size_t i, k;

	j->watch_timer = sd_event_source_disable_unref(j->watch_timer);
	free(j->watch_last);
	j->watch_last = NULL;
	j->watch_changes = 0;
	RB_FOREACH_SAFE(d, watch_tree, &watch_dirs, next) {
		for (i = k = 0; i < d->nrefs; i++) {
			if (d->refs[i].job == j)
				free(d->refs[i].only);
			else
				d->refs[k++] = d->refs[i];
		}
		d->nrefs = k;
		if (k == 0) {
			(void)inotify_rm_watch(watch_fd, d->wd);
			watch_dir_free(d);
		}
	}
}

/*
 * Does a change restart the instance?  If it runs or is meant to, and
 * after a crash too (FATAL, EXITED: the fix is what changed); never
 * after an operator's stop, nor a job never started.
 */
static int
watch_restarts(const struct inst *in)
{
	return (in->life.intent != LIFE_INTENT_DOWN &&
	    (in->life.want || job_state_is_active(in->state) ||
	        in->state == JOB_FATAL || in->state == JOB_EXITED));
}

static int
watch_restartable(const struct job *j)
{
	int i;

	for (i = 0; i < j->ninsts; i++) {
		if (watch_restarts(j->insts[i]))
			return (1);
	}
	return (0);
}

/* Quiet for watch_delay after the last change: restart what runs. */
static int
watch_quiet(sd_event_source *s, uint64_t usec, void *arg)
{
	struct job *j = arg;
	struct inst *in;
	int i;

	(void)s;
	(void)usec;
	log_info("%s: %u change%s under its watched paths (last: %s)%s",
	    j->name, j->watch_changes, j->watch_changes == 1 ? "" : "s",
	    j->watch_last != NULL ? j->watch_last : "?",
	    watch_restartable(j) ? ": restarting" :
	                           ": nothing runs, nothing restarted");
	j->watch_changes = 0;
	for (i = 0; i < j->ninsts; i++) {
		in = j->insts[i];
		if (!watch_restarts(in))
			continue;
		inst_stop(in);
		inst_start(in);
	}
	return (0);
}

/* Something changed for job j (path, for the log): (re)start the wait. */
static void
watch_changed(struct job *j, const char *path)
{
	j->watch_changes++;
	free(j->watch_last);
	j->watch_last = xstrdup(path);
	evloop_timer_in(&j->watch_timer, CLOCK_MONOTONIC, j->spec->watch_delay,
	    1000, watch_quiet, j);
}

/* One event of directory d: the jobs it concerns, new directories. */
static void
watch_event(struct watch_dir *d, const struct inotify_event *ev)
{
	const char *name = ev->len > 0 ? ev->name : "";
	int is_dir = (ev->mask & IN_ISDIR) != 0;
	char path[PATH_MAX];
	size_t i, n = d->nrefs;

	if (watch_ignored(name, is_dir) ||
	    (size_t)snprintf(path, sizeof(path), "%s/%s", d->path, name) >=
	        sizeof(path))
		return;
	for (i = 0; i < n && i < d->nrefs; i++) {
		struct watch_ref r = d->refs[i];

		if (r.only != NULL && strcmp(r.only, name) != 0)
			continue;
		/* A new directory below, or a watched name made a directory. */
		if (is_dir && (ev->mask & (IN_CREATE | IN_MOVED_TO)) != 0)
			watch_tree_add(r.job, path);
		watch_changed(r.job, path);
	}
}

static int
watch_readable(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	char buf[16384]
	    __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	struct watch_dir key, *d;
	ssize_t n;
	char *p;

	(void)s;
	(void)revents;
	(void)arg;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (p = buf; p < buf + n; p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)p;
			if (ev->mask & IN_Q_OVERFLOW) {
				log_warnx("watch: inotify queue overflow: "
				          "changes were lost");
				continue;
			}
			memset(&key, 0, sizeof(key));
			key.wd = ev->wd;
			if ((d = RB_FIND(watch_tree, &watch_dirs, &key)) ==
			    NULL)
				continue;
			if (ev->mask & IN_IGNORED) {
				watch_dir_free(d); /* the directory went */
				continue;
			}
			watch_event(d, ev);
		}
	}
	return (0);
}

/* vigild exits: the descriptor and what is left. */
void
watch_free(void)
{
	struct watch_dir *d, *next;

	RB_FOREACH_SAFE(d, watch_tree, &watch_dirs, next)
		watch_dir_free(d);
	watch_src = sd_event_source_disable_unref(watch_src);
	if (watch_fd != -1)
		close(watch_fd);
	watch_fd = -1;
}
