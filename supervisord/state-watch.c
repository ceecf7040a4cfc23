/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * state.db is never lost without a word.  An inotify watch on the state
 * directory (no polling: nothing wakes vigild while nothing happens)
 * sees state.db, its -wal or its -shm deleted, renamed or replaced, and
 * the directory itself go; 100 ms later (an `rm state.db*` is over by
 * then) a check compares the files at the path with those the store has
 * open (store_files_check).  When they differ, vigild says so (its log,
 * a line of `vigilctl status`, status --json, the metrics, on_event's
 * "state-db-lost") and puts the database back: a copy of the open
 * database, as its connection sees it, through SQLite's online backup
 * (store_copy), the store closed, the copy moved to the path (a
 * stranger's file there moved aside as state.db.replaced-SECONDS), the
 * store opened again ("state-db-restored").  Everything acknowledged is
 * kept: queued messages, the operator's stops and starts, the history.
 * vigild is single-threaded, so no write comes between the copy and the
 * close.  A copy that fails (a full disk) is tried again, from 1 s
 * doubling to 30 s, the old file still open and written meanwhile.
 * A corrupt file moved aside at open is reported the same way.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/inotify.h>
#include <sys/stat.h>

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "duration.h"
#include "effects.h"
#include "evloop.h"
#include "log.h"
#include "state.h"
#include "store.h"
#include "timefmt.h"
#include "vigild.h"
#include "xmalloc.h"

#define WATCH_SETTLE (100 * DURATION_USEC_PER_MSEC)
#define WATCH_RETRY_MIN (1 * DURATION_USEC_PER_SEC)
#define WATCH_RETRY_MAX (30 * DURATION_USEC_PER_SEC)
#define WATCH_MASK                                                             \
	(IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE |                 \
	    IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

static sd_event_source *watch_src;   /* inotify on the state directory */
static sd_event_source *watch_timer; /* the check, soon after a change */
static uint64_t watch_delay;         /* the retry delay after a failure */
static struct state_health watch_health;

static void watch_arm(uint64_t);
static void watch_aside(const char *);

/* Is name one of the database's files: state.db, -wal, -shm? */
static int
watch_is_ours(const char *name)
{
	return (strcmp(name, "state.db") == 0 ||
	    strcmp(name, "state.db-wal") == 0 ||
	    strcmp(name, "state.db-shm") == 0);
}

static int
watch_event(sd_event_source *s, const struct inotify_event *ev, void *arg)
{
	(void)s;
	(void)arg;
	if ((ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) ||
	    (ev->len > 0 && watch_is_ours(ev->name)))
		watch_arm(WATCH_SETTLE);
	return (0);
}

/* Watch the state directory (again: after it was made anew). */
static void
watch_add(void)
{
	int r;

	watch_src = sd_event_source_disable_unref(watch_src);
	r = sd_event_add_inotify(evloop_event(), &watch_src, vigild.state_dir,
	    WATCH_MASK, watch_event, NULL);
	if (r < 0)
		log_warnx("%s: cannot watch it (%s): a deleted state.db "
		          "would go unnoticed",
		    vigild.state_dir, strerror(-r));
}

/* Record an event for status, metrics and on_event, and log it. */
static void watch_say(const char *event, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void
watch_say(const char *event, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	(void)xvasprintf(&msg, fmt, ap);
	va_end(ap);
	log_warnx("%s", msg);
	free(watch_health.what);
	watch_health.what = msg;
	watch_health.at = store_now();
	hook_vigild(event, msg);
}

/*
 * The state directory is gone (rm -r): make it again, as at start-up,
 * and watch the new one.  0, or -1 (said).
 */
static int
watch_dir_again(void)
{
	const struct conf *c = vigild.conf;
	mode_t mode = c->has_socket_gid ? 0750 : 0700;
	struct stat st;

	if (lstat(vigild.state_dir, &st) == 0)
		return (0);
	if (mkdir(vigild.state_dir, mode) == -1 && errno != EEXIST) {
		log_warn("%s: cannot make it again", vigild.state_dir);
		return (-1);
	}
	if (c->has_socket_gid &&
	    chown(vigild.state_dir, (uid_t)-1, c->socket_gid) == -1)
		log_warn("%s: chgrp", vigild.state_dir);
	log_warnx("%s: the state directory was deleted: made it again",
	    vigild.state_dir);
	watch_add();
	return (0);
}

/* A copy failed: keep the old file open and try again later. */
static void
watch_failed(const char *path, char *cause)
{
	char d[32];

	watch_delay = watch_delay == 0 ? WATCH_RETRY_MIN : 2 * watch_delay;
	if (watch_delay > WATCH_RETRY_MAX)
		watch_delay = WATCH_RETRY_MAX;
	log_warnx("%s: cannot put it back: %s; writing on into the open "
	          "file, trying again in %s",
	    path, cause, duration_format(watch_delay, d, sizeof(d)));
	free(watch_health.failing);
	watch_health.failing = cause;
	watch_arm(watch_delay);
}

/*
 * Put the open database back at path: copy, close, move (a stranger's
 * file there aside), open again.
 */
static void
watch_restore(struct store *s, const char *path)
{
	struct store_disk ours;
	char *copy, *aside = NULL, *cause = NULL;

	xasprintf(&copy, "%s.restore", path);
	if (watch_dir_again() == -1 || store_copy(s, copy, &cause) == -1) {
		watch_failed(path,
		    cause != NULL ? cause : xstrdup("no state directory"));
		free(copy);
		return;
	}
	store_disk_get(s, &ours);
	state_sqlite_detach();
	if (store_put_back(path, copy, &ours, &aside, &cause) == -1) {
		/* The copy is all there is: it stays where it is, said. */
		watch_say("state-db-lost",
		    "%s: cannot put the copy of the open database back (%s): "
		    "it is %s; move it to %s while vigild is stopped",
		    path, cause, copy, path);
		free(cause);
		free(copy);
		state_sqlite_reattach();
		return;
	}
	free(copy);
	watch_delay = 0;
	free(watch_health.failing);
	watch_health.failing = NULL;
	state_sqlite_reattach();
	watch_health.restored++;
	if (aside != NULL)
		watch_say("state-db-restored",
		    "%s: put back from vigild's open database; the file "
		    "found there is %s",
		    path, aside);
	else
		watch_say("state-db-restored",
		    "%s: put back from vigild's open database", path);
	free(aside);
}

/* The check, soon after a change in the state directory. */
static int
watch_check(sd_event_source *src, uint64_t usec, void *arg)
{
	struct store *s;
	const char *path = state_sqlite_path();
	char *what = NULL;

	(void)src;
	(void)usec;
	(void)arg;
	/* Closed after a failure: the reopen finds what is there. */
	if (path == NULL || (s = state_sqlite_store()) == NULL)
		return (0);
	if (store_files_check(s, &what) == 0)
		return (0);
	if (watch_health.failing == NULL) {
		watch_health.lost++;
		watch_say("state-db-lost",
		    "%s: %s under vigild: putting it back from vigild's open "
		    "database (nothing acknowledged is lost)",
		    path, what);
	}
	free(what);
	watch_restore(s, path);
	return (0);
}

static void
watch_arm(uint64_t delay)
{
	evloop_timer_in(&watch_timer, CLOCK_MONOTONIC, delay,
	    DURATION_USEC_PER_MSEC, watch_check, NULL);
}

/*
 * At start-up, before state.db is opened (a corrupt file moved aside is
 * reported here): watch its directory.
 */
void
state_watch_start(void)
{
	state_sqlite_aside = watch_aside;
	if (vigild.state_dirfd == -1 || evloop_event() == NULL)
		return;
	watch_add();
}

/* At exit. */
void
state_watch_stop(void)
{
	state_sqlite_aside = NULL;
	watch_src = sd_event_source_disable_unref(watch_src);
	watch_timer = sd_event_source_disable_unref(watch_timer);
	free(watch_health.what);
	free(watch_health.failing);
	memset(&watch_health, 0, sizeof(watch_health));
}

/* state.db was found corrupt and moved aside (cause says where). */
static void
watch_aside(const char *cause)
{
	watch_health.lost++;
	watch_say("state-db-lost", "%s: %s", state_sqlite_path(), cause);
}

/* What happened to state.db, for status and the metrics. */
const struct state_health *
state_watch_health(void)
{
	return (&watch_health);
}
