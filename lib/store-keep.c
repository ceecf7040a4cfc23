/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * What keeps state.db from being lost without a word: the identity of
 * its files on disk, a copy of the open database put back at its path,
 * and the high-water mark of the queue's message ids.
 *
 * A database deleted, renamed or replaced under an open connection goes
 * on working on the old file, which no one will ever open again: every
 * write after that is lost at the next start.  store_files_check compares
 * the files at the database's path (and its -wal and -shm) with those the
 * connection opened; store_copy writes the open database, as its
 * connection sees it (the WAL included), to a new file through SQLite's
 * online backup, and store_put_back puts that file at the path, a
 * stranger's file there moved aside first.
 *
 * Message ids must never repeat in a state directory's life: a producer
 * that made its handler idempotent on VIGIL_MESSAGE_ID relies on it.  The
 * ids come from the queue table's AUTOINCREMENT, which a new database
 * (the old one lost or moved aside as corrupt) starts again at 1.  So a
 * file beside the database, queue-ids, holds a number no id has passed:
 * an id is given only up to it, the file is raised (by STORE_IDS_BLOCK,
 * synced) before an id would pass it, and a database opened with a
 * lower sequence is raised to it.  At a clean close the mark comes down
 * to the last id given, so ids go on without a gap after a restart; after
 * a crash or a lost database they go on above the mark (up to
 * STORE_IDS_BLOCK later).
 */

#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store.h"
#include "store-int.h"
#include "xmalloc.h"

/* The ids the file is raised by: one synced write per so many. */
#define STORE_IDS_BLOCK 1000

static const char *const store_suffix[STORE_NFILES] = { "", "-wal", "-shm" };

/* The identity of path in slot i of d, not present when it is not there. */
static void
store_disk_one(const char *path, struct store_disk *d, int i)
{
	struct stat st;

	d->present[i] = lstat(path, &st) == 0;
	d->dev[i] = d->present[i] ? st.st_dev : 0;
	d->ino[i] = d->present[i] ? st.st_ino : 0;
}

/* Are slot i of a and of b the same file? */
static int
store_disk_same(const struct store_disk *a, const struct store_disk *b, int i)
{
	return (a->present[i] && b->present[i] && a->dev[i] == b->dev[i] &&
	    a->ino[i] == b->ino[i]);
}

/* The files at path now. */
static void
store_disk_at(const char *path, struct store_disk *d)
{
	char *p;
	int i;

	for (i = 0; i < STORE_NFILES; i++) {
		xasprintf(&p, "%s%s", path, store_suffix[i]);
		store_disk_one(p, d, i);
		free(p);
	}
}

/*
 * Note the files of s as they are now: the database, and its -wal and
 * -shm once a read has made SQLite open them.  Called once the store is
 * open.
 */
void
store_files_note(struct store *s)
{
	if (s->path == NULL)
		return;
	/* A read transaction opens the WAL and its index. */
	(void)sqlite3_exec(
	    s->db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
	store_disk_at(s->path, &s->disk);
}

/* The files s opened, for store_put_back once s is closed. */
void
store_disk_get(const struct store *s, struct store_disk *d)
{
	*d = s->disk;
}

/*
 * Are the files at the store's path those it has open?  Return 0 when
 * they are (or the store has no file); else, with *what ("state.db was
 * deleted or renamed", "state.db-wal was replaced by another file"),
 * STORE_FILES_DELETED (the database is gone), STORE_FILES_REPLACED
 * (another file is at its path) or STORE_FILES_AUX (its -wal or -shm is
 * gone or another).
 */
int
store_files_check(struct store *s, char **what)
{
	struct store_disk now;
	const char *base;
	int i, lost = 0;

	if (s->path == NULL)
		return (0);
	base =
	    strrchr(s->path, '/') != NULL ? strrchr(s->path, '/') + 1 : s->path;
	store_disk_at(s->path, &now);
	for (i = 0; i < STORE_NFILES; i++) {
		if (!s->disk.present[i]) {
			/* SQLite made it since: ours.  (The database is.) */
			s->disk.present[i] = now.present[i];
			s->disk.dev[i] = now.dev[i];
			s->disk.ino[i] = now.ino[i];
			continue;
		}
		if (store_disk_same(&s->disk, &now, i))
			continue;
		lost = now.present[i] ? 2 : 1;
		xasprintf(what, "%s%s was %s", base, store_suffix[i],
		    lost == 1 ? "deleted or renamed" :
		                "replaced by another file");
		if (i > 0)
			return (STORE_FILES_AUX);
		break;
	}
	if (lost == 0)
		return (0);
	return (lost == 1 ? STORE_FILES_DELETED : STORE_FILES_REPLACED);
}

/*
 * Write the open database of s, as its connection sees it (what its WAL
 * holds included), to a new file at to, made with the mode a new
 * state.db gets, through SQLite's online backup.  A file at to is
 * replaced.  Return 0, or -1 with *cause (to is then removed).
 */
int
store_copy(struct store *s, const char *to, char **cause)
{
	sqlite3 *dst = NULL;
	sqlite3_backup *b;
	char *why = NULL;
	int rc;

	if (unlink(to) == -1 && errno != ENOENT) {
		xasprintf(cause, "%s: %s", to, strerror(errno));
		return (-1);
	}
	if (store_file_create(to, &why) == -1) {
		xasprintf(cause, "%s: %s", to, why);
		free(why);
		return (-1);
	}
	rc = sqlite3_open_v2(to, &dst,
	    SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
	    NULL);
	if (rc == SQLITE_OK) {
		b = sqlite3_backup_init(dst, "main", s->db, "main");
		if (b == NULL)
			rc = sqlite3_errcode(dst);
		else {
			(void)sqlite3_backup_step(b, -1);
			rc = sqlite3_backup_finish(b);
		}
	}
	if (rc != SQLITE_OK) {
		xasprintf(cause, "copying the open database to %s: %s", to,
		    dst != NULL ? sqlite3_errmsg(dst) : "out of memory");
		sqlite3_close(dst);
		(void)unlink(to);
		return (-1);
	}
	if (sqlite3_close(dst) != SQLITE_OK) {
		xasprintf(cause, "%s: close failed", to);
		(void)unlink(to);
		return (-1);
	}
	return (0);
}

/* Sync the directory of path, so that a rename in it lasts. */
static void
store_dir_sync(const char *path)
{
	char *dir;
	int fd;

	dir = store_dir_of(path);
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) != -1) {
		(void)fsync(fd);
		close(fd);
	}
	free(dir);
}

/*
 * Move the database at path that is not ours (ours: the files the old
 * store had open) aside as path.replaced-SECONDS, with its -wal and -shm
 * when they are not ours either; *aside is its new name.  0, or -1.
 */
static int
store_aside_foreign(const char *path, const struct store_disk *ours,
    const struct store_disk *now, char **aside, char **cause)
{
	char *from, *to;
	int i;

	xasprintf(aside, "%s.replaced-%lld", path, (long long)time(NULL));
	for (i = 0; i < STORE_NFILES; i++) {
		if (!now->present[i] || store_disk_same(ours, now, i))
			continue;
		xasprintf(&from, "%s%s", path, store_suffix[i]);
		xasprintf(&to, "%s%s", *aside, store_suffix[i]);
		if (rename(from, to) == -1) {
			xasprintf(cause, "cannot move %s aside: %s", from,
			    strerror(errno));
			free(from);
			free(to);
			free(*aside);
			*aside = NULL;
			return (-1);
		}
		free(from);
		free(to);
	}
	return (0);
}

/*
 * Put the copy at copy (store_copy's) at path, the store that wrote it
 * closed (ours: the files it had open, store_disk_get).  A database at
 * path that is not ours is someone else's: it is moved aside first, with
 * its own -wal and -shm, as path.replaced-SECONDS (*aside, else NULL).
 * What is left of ours at path goes: a WAL is replayed into whatever
 * database opens beside it (SQLite does not checkpoint at close a
 * database that was moved, so ours may still be there).  Return 0, or -1
 * with *cause.
 */
int
store_put_back(const char *path, const char *copy,
    const struct store_disk *ours, char **aside, char **cause)
{
	struct store_disk now;
	char *p;
	int i;

	*aside = NULL;
	store_disk_at(path, &now);
	if (now.present[0] && !store_disk_same(ours, &now, 0) &&
	    store_aside_foreign(path, ours, &now, aside, cause) == -1)
		return (-1);
	for (i = 1; i < STORE_NFILES; i++) {
		xasprintf(&p, "%s%s", path, store_suffix[i]);
		if (unlink(p) == -1 && errno != ENOENT) {
			xasprintf(cause, "%s: %s", p, strerror(errno));
			free(p);
			return (-1);
		}
		free(p);
	}
	if (rename(copy, path) == -1) {
		xasprintf(cause, "%s: %s", path, strerror(errno));
		return (-1);
	}
	store_dir_sync(path);
	return (0);
}

/* Read the mark in file into *v: 0, 1 when there is none, or -1. */
static int
store_ids_read(const char *file, int64_t *v, char **cause)
{
	char buf[32], *end;
	ssize_t n;
	int fd;

	*v = 0;
	if ((fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		if (errno == ENOENT)
			return (1);
		xasprintf(cause, "%s: %s", file, strerror(errno));
		return (-1);
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		xasprintf(cause, "%s: %s", file, strerror(errno));
		return (-1);
	}
	buf[n] = '\0';
	errno = 0;
	*v = strtoll(buf, &end, 10);
	if (errno != 0 || end == buf || *v < 0 ||
	    (*end != '\n' && *end != '\0')) {
		xasprintf(cause, "%s: not a number", file);
		return (-1);
	}
	return (0);
}

/* Write mark v to file: a new file, synced, renamed over it. */
static int
store_ids_write(const char *file, int64_t v, char **cause)
{
	char *tmp, buf[32];
	int fd, len, ok;

	xasprintf(&tmp, "%s.new", file);
	len = snprintf(buf, sizeof(buf), "%" PRId64 "\n", v);
	(void)unlink(tmp);
	fd = open(
	    tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	ok = fd != -1 && write(fd, buf, (size_t)len) == len && fsync(fd) == 0;
	if (fd != -1 && close(fd) == -1)
		ok = 0;
	if (!ok || rename(tmp, file) == -1) {
		xasprintf(cause, "%s: %s", file, strerror(errno));
		(void)unlink(tmp);
		free(tmp);
		return (-1);
	}
	free(tmp);
	store_dir_sync(file);
	return (0);
}

/* The queue's AUTOINCREMENT sequence in *seq (0: none yet). */
static int
store_ids_seq(struct store *s, int64_t *seq)
{
	sqlite3_stmt *st;
	int rc;

	*seq = 0;
	if (sqlite3_prepare_v2(s->db,
	        "SELECT seq FROM sqlite_sequence WHERE name = 'queue'", -1, &st,
	        NULL) != SQLITE_OK)
		return (-1);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		*seq = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return (rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1);
}

/* Raise the queue's sequence to at least v (the next id is above it). */
static int
store_ids_raise(struct store *s, int64_t v, char **cause)
{
	char sql[320];

	snprintf(sql, sizeof(sql),
	    "UPDATE sqlite_sequence SET seq = %" PRId64 " WHERE name = "
	    "'queue' AND seq < %" PRId64 "; INSERT INTO sqlite_sequence "
	    "(name, seq) SELECT 'queue', %" PRId64 " WHERE NOT EXISTS "
	    "(SELECT 1 FROM sqlite_sequence WHERE name = 'queue')",
	    v, v, v);
	if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
		xasprintf(cause, "state.db: %s", sqlite3_errmsg(s->db));
		return (-1);
	}
	return (0);
}

/*
 * Keep the queue's message ids in file (the state directory's
 * queue-ids): raise the database's sequence to the mark the file holds
 * (a new database starts where the lost one stopped), then the mark a
 * block above the sequence.  From then on store_ids_reserve keeps every
 * id given below the mark.  owner: this is vigild, which brings the mark
 * down at its close; another program (vigilctl enqueue --direct, which
 * may run beside vigild) only ever raises it, since vigild may still give
 * ids below a mark it raised.  Return 0, or -1 with *cause.
 */
int
store_ids_keep(struct store *s, const char *file, int owner, char **cause)
{
	int64_t mark, seq;

	if (store_ids_read(file, &mark, cause) == -1)
		return (-1);
	if (store_ids_seq(s, &seq) == -1) {
		xasprintf(cause, "state.db: %s", sqlite3_errmsg(s->db));
		return (-1);
	}
	if (seq < mark) {
		if (store_ids_raise(s, mark, cause) == -1)
			return (-1);
		seq = mark;
	}
	if (store_ids_write(file, seq + STORE_IDS_BLOCK, cause) == -1)
		return (-1);
	free(s->ids_file);
	s->ids_file = xstrdup(file);
	s->ids_mark = seq + STORE_IDS_BLOCK;
	s->ids_owner = owner;
	return (0);
}

/*
 * The store is closing: bring the mark down to the sequence, which no id
 * has passed (ids below the mark were never given), so that the next
 * start goes on from the same place.  A failure leaves the higher mark,
 * which is as safe.
 */
void
store_ids_close(struct store *s)
{
	int64_t seq;
	char *cause = NULL;

	if (s->ids_file == NULL || !s->ids_owner ||
	    store_ids_seq(s, &seq) == -1 || seq >= s->ids_mark)
		return;
	if (store_ids_write(s->ids_file, seq, &cause) == -1)
		free(cause);
}

/*
 * Message id was just given (its transaction not yet committed): make
 * sure the mark is above it, raising the file first when it is not.
 * Return 0, or -1 with *cause: then the id must not be acknowledged.
 * Without store_ids_keep, nothing to do.
 */
int
store_ids_reserve(struct store *s, int64_t id, char **cause)
{
	if (s->ids_file == NULL || id <= s->ids_mark)
		return (0);
	if (store_ids_write(s->ids_file, id + STORE_IDS_BLOCK, cause) == -1)
		return (-1);
	s->ids_mark = id + STORE_IDS_BLOCK;
	return (0);
}
