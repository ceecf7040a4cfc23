/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * state.db, the database: the schema and every statement of the store,
 * opening it (migrations, a corrupt file moved aside), transactions and
 * batches, and the helpers the other store files share to run a
 * statement.  Run history is in store-history.c, the operator's intent in
 * store-intent.c, what keeps the database from being lost (its files on
 * disk, a copy put back, the message ids' mark) in store-keep.c; these
 * and queue-sqlite.c (the job queue's messages, on store_db) are the only
 * files that speak SQL.  The database runs in WAL
 * mode with synchronous NORMAL (a commit costs no fsync; a power cut may
 * lose the last runs, never the file) and a 50 ms busy timeout, since
 * vigild is single-threaded and must not wait long.  The schema is
 * versioned by PRAGMA user_version and migrated forward at open; a file
 * from a newer vigil is left alone.  A file that is not a database or is
 * corrupt is moved aside and replaced.
 *
 * Every statement is prepared once, at open, and reset after each use, so
 * a failed call leaves nothing behind: the store keeps working once the
 * disk has room again or the lock is free.  Retention is incremental: each
 * ended run deletes only the rows of its job that fell out of the newest
 * history_keep, found through the (job, id) index, so the cost of a run
 * does not grow with the number of runs ever recorded.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
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

#define STORE_BUSY_MS 50

/*
 * The statements, prepared at open.  The prune (?1 a run's id, ?2 keep)
 * deletes the ended rows of that run's job older than its keep newest;
 * both the OFFSET walk and the range delete run on the (job, id) index, so
 * they touch about keep index entries and the rows deleted, however long
 * the job's past.  Open runs are not pruned: their vigild still holds
 * their id.
 */
static const char *store_sql[STORE_NSTMT] = {
	[STORE_BEGIN] = "BEGIN IMMEDIATE",
	[STORE_COMMIT] = "COMMIT",
	[STORE_ROLLBACK] = "ROLLBACK",
	[STORE_RUN_INSERT] = "INSERT INTO runs (job, instance, run_id, pid, "
	                     "started) VALUES (?1, ?2, ?3, ?4, ?5)",
	[STORE_RUN_READY] = "UPDATE runs SET ready = ?2 WHERE id = ?1",
	[STORE_RUN_MESSAGE] = "UPDATE runs SET message = ?2 WHERE id = ?1",
	[STORE_RUN_END] = "UPDATE runs SET ended = ?2, exit_code = ?3, "
	                  "signal = ?4, reason = ?5 WHERE id = ?1",
	[STORE_RUN_PRUNE] = "DELETE FROM runs WHERE job = "
	                    "(SELECT job FROM runs WHERE id = ?1) AND id <= "
	                    "(SELECT id FROM runs WHERE job = "
	                    "(SELECT job FROM runs WHERE id = ?1) "
	                    "ORDER BY id DESC LIMIT 1 OFFSET ?2) "
	                    "AND ended IS NOT NULL",
	[STORE_RUNS_CLOSE] = "UPDATE runs SET ended = ?1, reason = ?2 "
	                     "WHERE ended IS NULL",
	[STORE_HISTORY] = "SELECT id, job, instance, run_id, pid, started, "
	                  "ready, ended, exit_code, signal, reason, message "
	                  "FROM "
	                  "(SELECT * FROM runs WHERE job = ?1 "
	                  "AND (?3 < 0 OR instance = ?3) "
	                  "ORDER BY id DESC LIMIT ?2) ORDER BY id",
	[STORE_INTENT_SET] =
	    "INSERT INTO intent (job, instance, held, "
	    "started, uid, at) VALUES (?1, ?2, ?3, ?4, ?5, "
	    "?6) ON CONFLICT (job, instance) DO UPDATE SET "
	    "held = excluded.held, started = excluded.started, "
	    "uid = excluded.uid, at = excluded.at",
	[STORE_INTENT_CLEAR] = "DELETE FROM intent WHERE job = ?1 AND "
	                       "instance = ?2",
	[STORE_INTENTS] = "SELECT job, instance, held, started, uid, at "
	                  "FROM intent ORDER BY job, instance",
	[STORE_RUN_SKIPPED] = "INSERT INTO runs (job, instance, run_id, "
	                      "started, ended, reason) VALUES (?1, ?2, '', "
	                      "?3, ?3, 'skipped')",
	[STORE_LAST_START] = "SELECT max(started) FROM runs WHERE job = ?1",
	[STORE_ALERT_SET] =
	    "INSERT INTO alert (job, instance, state, since, failures, said, "
	    "delay) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (job, "
	    "instance) DO UPDATE SET state = excluded.state, since = "
	    "excluded.since, failures = excluded.failures, said = "
	    "excluded.said, delay = excluded.delay",
	[STORE_ALERT_CLEAR] = "DELETE FROM alert WHERE job = ?1 AND "
	                      "instance = ?2",
	[STORE_ALERTS] = "SELECT job, instance, state, since, failures, said, "
	                 "delay FROM alert ORDER BY job, instance",
};

/*
 * Forward migrations: store_migrations[v] takes user_version v to v + 1.
 * Append only; never edit a step that has shipped.
 */
static const char *store_migrations[] = {
	/* 0 -> 1 */
	"CREATE TABLE runs (id INTEGER PRIMARY KEY, job TEXT NOT NULL, "
	"instance INTEGER NOT NULL, run_id TEXT NOT NULL, pid INTEGER, "
	"started INTEGER NOT NULL, ready INTEGER, ended INTEGER, "
	"exit_code INTEGER, signal INTEGER, reason TEXT);"
	"CREATE INDEX runs_job ON runs (job, id);"
	"CREATE INDEX runs_open ON runs (id) WHERE ended IS NULL;"
	"CREATE TABLE intent (job TEXT NOT NULL, instance INTEGER NOT NULL, "
	"held INTEGER NOT NULL, started INTEGER NOT NULL, uid INTEGER, "
	"at INTEGER, PRIMARY KEY (job, instance));",
	/* 1 -> 2: the job queue (queue-sqlite.c); state 0 available, 1 running, 2
	 * dead. */
	"CREATE TABLE queue (id INTEGER PRIMARY KEY, job TEXT NOT NULL, "
	"payload BLOB NOT NULL, unique_key TEXT, priority INTEGER NOT NULL, "
	"state INTEGER NOT NULL, due INTEGER NOT NULL, "
	"attempts INTEGER NOT NULL, created INTEGER NOT NULL, "
	"updated INTEGER NOT NULL, last_exit INTEGER, last_signal INTEGER, "
	"last_error TEXT, output BLOB);"
	"CREATE INDEX queue_claim ON queue (job, state, priority DESC, due, id);"
	"CREATE UNIQUE INDEX queue_unique ON queue (job, unique_key) "
	"WHERE unique_key IS NOT NULL AND state < 2;",
	/* 2 -> 3: the next due time of a job's waiting messages, at once. */
	"CREATE INDEX queue_due ON queue (job, due) WHERE state = 0;",
	/*
	 * 3 -> 4: message ids are never reused (AUTOINCREMENT), so an old id
	 * given to retry or delete cannot name a newer message.
	 */
	"CREATE TABLE queue_v4 (id INTEGER PRIMARY KEY AUTOINCREMENT, "
	"job TEXT NOT NULL, payload BLOB NOT NULL, unique_key TEXT, "
	"priority INTEGER NOT NULL, state INTEGER NOT NULL, "
	"due INTEGER NOT NULL, attempts INTEGER NOT NULL, "
	"created INTEGER NOT NULL, updated INTEGER NOT NULL, "
	"last_exit INTEGER, last_signal INTEGER, last_error TEXT, "
	"output BLOB);"
	"INSERT INTO queue_v4 SELECT * FROM queue;"
	"DROP TABLE queue;"
	"ALTER TABLE queue_v4 RENAME TO queue;"
	"CREATE INDEX queue_claim ON queue (job, state, priority DESC, due, id);"
	"CREATE UNIQUE INDEX queue_unique ON queue (job, unique_key) "
	"WHERE unique_key IS NOT NULL AND state < 2;"
	"CREATE INDEX queue_due ON queue (job, due) WHERE state = 0;",
	/*
	 * 4 -> 5: the alert state of failing instances (store-alert.c), so
	 * that a restart of vigild is not a fresh burst of alerts and starts;
	 * the message of a queue run.
	 */
	"CREATE TABLE alert (job TEXT NOT NULL, instance INTEGER NOT NULL, "
	"state INTEGER NOT NULL, since INTEGER NOT NULL, "
	"failures INTEGER NOT NULL, said INTEGER NOT NULL, "
	"delay INTEGER NOT NULL, PRIMARY KEY (job, instance));"
	/* and the message of a queue job's run, for history */
	"ALTER TABLE runs ADD COLUMN message INTEGER;",
};
#define STORE_VERSION                                                          \
	((int)(sizeof(store_migrations) / sizeof(store_migrations[0])))

/*
 * The connection's last error message, with the system's reason when the
 * file could not be opened or read.  The caller frees it.
 */
static char *
store_errstr(sqlite3 *db)
{
	char *msg;
	int rc, e;

	if (db == NULL)
		return (xstrdup("out of memory"));
	rc = sqlite3_errcode(db) & 0xff;
	e = sqlite3_system_errno(db);
	if ((rc == SQLITE_CANTOPEN || rc == SQLITE_IOERR) && e != 0)
		xasprintf(&msg, "%s (%s)", sqlite3_errmsg(db), strerror(e));
	else
		msg = xstrdup(sqlite3_errmsg(db));
	return (msg);
}

/* Is the connection's last error one of a damaged or foreign file? */
static int
store_is_corrupt(sqlite3 *db)
{
	int rc = sqlite3_errcode(db) & 0xff;

	return (rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT);
}

/* Read the integer a pragma returns, into *v. */
static int
store_pragma_int(sqlite3 *db, const char *sql, int *v)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return (-1);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		*v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return (rc == SQLITE_ROW ? 0 : -1);
}

/*
 * Run PRAGMA quick_check, which reads every page (but skips the index
 * cross-checks of integrity_check).  Return 0 when the file is sound, -1
 * with *why, and *corrupt set when it is damaged rather than unreadable.
 */
static int
store_quick_check(sqlite3 *db, int *corrupt, char **why)
{
	sqlite3_stmt *st;
	const char *msg;

	if (sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &st, NULL) !=
	    SQLITE_OK)
		goto fail;
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		goto fail;
	}
	msg = (const char *)sqlite3_column_text(st, 0);
	if (msg != NULL && strcmp(msg, "ok") == 0) {
		sqlite3_finalize(st);
		return (0);
	}
	*corrupt = 1;
	xasprintf(why, "quick_check: %s", msg != NULL ? msg : "failed");
	sqlite3_finalize(st);
	return (-1);
fail:
	*corrupt = store_is_corrupt(db);
	*why = store_errstr(db);
	return (-1);
}

/* Bring the schema from version to STORE_VERSION, in one transaction. */
static int
store_migrate(sqlite3 *db, int version, char **why)
{
	char sql[64];
	int v;

	if (version == STORE_VERSION)
		return (0);
	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	for (v = version; v < STORE_VERSION; v++) {
		if (sqlite3_exec(db, store_migrations[v], NULL, NULL, NULL) !=
		    SQLITE_OK)
			goto fail;
	}
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", STORE_VERSION);
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	return (0);
fail:
	*why = store_errstr(db);
	if (!sqlite3_get_autocommit(db))
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return (-1);
}

/* The directory of path ("." for a bare name), a new string. */
char *
store_dir_of(const char *path)
{
	char *dir, *slash;

	dir = xstrdup(path);
	if ((slash = strrchr(dir, '/')) == NULL) {
		free(dir);
		return (xstrdup("."));
	}
	slash[slash == dir ? 1 : 0] = '\0';
	return (dir);
}

/*
 * The mode of a new state.db in the directory of path: 0600, or 0640 with
 * the directory's group when only that group may read the directory (0750,
 * the state directory with socket_group).  Set *gid to that group, or -1.
 */
static mode_t
store_file_mode(const char *path, gid_t *gid)
{
	struct stat st;
	char *dir;
	mode_t mode = 0600;

	*gid = (gid_t)-1;
	dir = store_dir_of(path);
	if (stat(dir, &st) == 0 && (st.st_mode & 0077) == 0050) {
		mode = 0640;
		*gid = st.st_gid;
	}
	free(dir);
	return (mode);
}

/*
 * Create path before SQLite does, with the mode of store_file_mode
 * whatever the umask: queue payloads and output tails are no one else's
 * to read.  SQLite gives the -wal and -shm files the mode (and, as root,
 * the owner) of this file.  An existing file is left as it is, but a
 * symbolic link is refused.  0, or -1 with *why.
 */
int
store_file_create(const char *path, char **why)
{
	struct stat st;
	mode_t mode;
	gid_t gid;
	int fd;

	mode = store_file_mode(path, &gid);
	fd = open(path,
	    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
	    0600);
	if (fd == -1) {
		if (errno == EEXIST && lstat(path, &st) == 0 &&
		    S_ISLNK(st.st_mode)) {
			*why = xstrdup("a symbolic link: not following it");
			return (-1);
		}
		/* Let SQLite open (or fail on) whatever is there. */
		return (0);
	}
	if (gid != (gid_t)-1 && fchown(fd, (uid_t)-1, gid) == -1)
		mode = 0600;
	if (fchmod(fd, mode) == -1) {
		xasprintf(why, "chmod: %s", strerror(errno));
		close(fd);
		return (-1);
	}
	close(fd);
	return (0);
}

/*
 * Open the database at path and make it ready: version check, quick_check,
 * WAL, migrations.  The version is read before anything is written, so a
 * file from a newer vigil is not touched.  Return 0 with *dbp, or -1 with
 * *why (a bare message) and *corrupt set when the file should be moved
 * aside.
 */
static int
store_open_db(const char *path, sqlite3 **dbp, int *corrupt, char **why)
{
	sqlite3 *db = NULL;
	int version;

	*corrupt = 0;
	if (strcmp(path, ":memory:") != 0 && *path != '\0' &&
	    store_file_create(path, why) == -1)
		return (-1);
	if (sqlite3_open_v2(path, &db,
	        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
	            SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
	        NULL) != SQLITE_OK)
		goto fail;
	/* SQLite falls back to read-only quietly; every write would fail. */
	if (sqlite3_db_readonly(db, "main") == 1) {
		*why = xstrdup("the file is read-only");
		sqlite3_close(db);
		return (-1);
	}
	sqlite3_busy_timeout(db, STORE_BUSY_MS);
	if (store_pragma_int(db, "PRAGMA user_version", &version) == -1)
		goto fail;
	if (version < 0 || version > STORE_VERSION) {
		xasprintf(why,
		    "schema version %d is not one this vigil knows "
		    "(newest %d); not touching it",
		    version, STORE_VERSION);
		sqlite3_close(db);
		return (-1);
	}
	if (store_quick_check(db, corrupt, why) == -1) {
		sqlite3_close(db);
		return (-1);
	}
	if (sqlite3_exec(db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL) !=
	        SQLITE_OK ||
	    sqlite3_exec(db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL) !=
	        SQLITE_OK)
		goto fail;
	if (store_migrate(db, version, why) == -1) {
		*corrupt = store_is_corrupt(db);
		sqlite3_close(db);
		return (-1);
	}
	*dbp = db;
	return (0);
fail:
	*corrupt = db != NULL && store_is_corrupt(db);
	*why = store_errstr(db);
	sqlite3_close(db);
	return (-1);
}

/*
 * Rename path, and its -wal and -shm files when they exist, to
 * path.TAG-SECONDS (the WAL goes along so that it is never replayed
 * into the new file).  Return 0 with the new name in *aside, or -1 with
 * *why.
 */
int
store_move_aside(const char *path, const char *tag, char **aside, char **why)
{
	static const char *suffix[] = { "", "-wal", "-shm" };
	char *from, *to;
	long long now = (long long)time(NULL);
	size_t i;

	for (i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		xasprintf(&from, "%s%s", path, suffix[i]);
		xasprintf(&to, "%s.%s-%lld%s", path, tag, now, suffix[i]);
		if (rename(from, to) == -1 && (i == 0 || errno != ENOENT)) {
			xasprintf(why, "cannot move %s aside: %s", from,
			    strerror(errno));
			free(from);
			free(to);
			if (i > 0)
				free(*aside);
			return (-1);
		}
		free(from);
		if (i == 0)
			*aside = to;
		else
			free(to);
	}
	return (0);
}

/*
 * Open path, moving a corrupt file aside.  Return 0 with *dbp (and *aside
 * set to the corrupt file's new name, with *why saying what was wrong,
 * when one was moved), or -1 with *why.
 */
static int
store_open_or_replace(const char *path, sqlite3 **dbp, char **aside, char **why)
{
	char *first = NULL;
	int corrupt;

	*aside = NULL;
	if (store_open_db(path, dbp, &corrupt, &first) == 0)
		return (0);
	if (!corrupt || strcmp(path, ":memory:") == 0 || *path == '\0') {
		*why = first;
		return (-1);
	}
	if (store_move_aside(path, "corrupt", aside, why) == -1) {
		free(first);
		return (-1);
	}
	if (store_open_db(path, dbp, &corrupt, why) == -1) {
		free(first);
		free(*aside);
		*aside = NULL;
		return (-1);
	}
	*why = first;
	return (0);
}

/*
 * Open (creating it if needed) the state database at path, migrating its
 * schema forward.  Return the store, to be closed with store_close, or
 * NULL with *cause set: unreadable, read-only or locked file, missing
 * directory, or a schema newer than this vigil (the file is then left
 * untouched).
 *
 * A file that is not a database or fails quick_check is renamed, with its
 * -wal and -shm, to path.corrupt-SECONDS and a new database is created.
 * Then the store is returned AND *cause is set to a message that starts
 * with "moved aside", for the caller to log.  On success without that,
 * *cause is left alone.  *cause is owned by the caller; cause may be NULL.
 */
struct store *
store_open(const char *path, char **cause)
{
	struct store *s;
	sqlite3 *db;
	char *why = NULL, *aside = NULL;
	int i;

	if (store_open_or_replace(path, &db, &aside, &why) == -1) {
		if (cause != NULL)
			xasprintf(cause, "state.db: %s", why);
		free(why);
		return (NULL);
	}
	s = xcalloc(1, sizeof(*s));
	s->db = db;
	if (strcmp(path, ":memory:") != 0 && *path != '\0')
		s->path = xstrdup(path);
	for (i = 0; i < STORE_NSTMT; i++) {
		if (sqlite3_prepare_v3(db, store_sql[i], -1,
		        SQLITE_PREPARE_PERSISTENT, &s->st[i],
		        NULL) != SQLITE_OK) {
			if (cause != NULL)
				xasprintf(
				    cause, "state.db: %s", sqlite3_errmsg(db));
			store_close(s);
			free(why);
			free(aside);
			return (NULL);
		}
	}
	store_files_note(s);
	if (aside != NULL && cause != NULL)
		xasprintf(cause, "moved aside as %s (%s), created a new one",
		    aside, why);
	free(why);
	free(aside);
	return (s);
}

/* Finalise the statements and close the database.  NULL is a no-op. */
void
store_close(struct store *s)
{
	int i;

	if (s == NULL)
		return;
	store_ids_close(s);
	for (i = 0; i < STORE_NSTMT; i++)
		sqlite3_finalize(s->st[i]);
	sqlite3_close(s->db);
	free(s->path);
	free(s->ids_file);
	free(s);
}

/*
 * A call on the store's connection is failing: note whether the reason is
 * a lock another connection holds (SQLITE_BUSY past the busy timeout, or
 * SQLITE_LOCKED), for store_is_busy.  Call it before anything else runs
 * on the connection; queue-sqlite.c does, for its statements.
 */
void
store_error_seen(struct store *s)
{
	int rc = sqlite3_errcode(s->db) & 0xff;

	s->busy = rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
}

/*
 * Did the last failed call fail only because another connection (an
 * operator's sqlite3) held the database's lock?  The store is sound then,
 * and the same call may succeed once the lock is free; any other failure
 * may call for opening the file again.
 */
int
store_is_busy(const struct store *s)
{
	return (s->busy);
}

/*
 * A statement failed: set *cause from the connection, reset the statement
 * and roll back a transaction left open, so the next call starts clean.
 * Return -1.
 */
int
store_fail(struct store *s, sqlite3_stmt *st, char **cause)
{
	sqlite3_stmt *rb = s->st[STORE_ROLLBACK];
	char *msg;

	store_error_seen(s);
	if (cause != NULL) {
		msg = store_errstr(s->db);
		xasprintf(cause, "state.db: %s", msg);
		free(msg);
	}
	if (st != NULL)
		sqlite3_reset(st);
	if (!sqlite3_get_autocommit(s->db)) {
		sqlite3_step(rb);
		sqlite3_reset(rb);
	}
	return (-1);
}

/* Step a statement that returns no row, then reset it.  0, or store_fail. */
int
store_done(struct store *s, sqlite3_stmt *st, char **cause)
{
	if (sqlite3_step(st) != SQLITE_DONE)
		return (store_fail(s, st, cause));
	sqlite3_reset(st);
	return (0);
}

/* Bind an integer, or NULL when it is negative (not known). */
int
store_bind_opt(sqlite3_stmt *st, int i, int64_t v)
{
	if (v < 0)
		return (sqlite3_bind_null(st, i));
	return (sqlite3_bind_int64(st, i, v));
}

/*
 * Is a batch open?  Not once a failed call rolled it back: the calls that
 * follow then commit on their own.
 */
int
store_in_batch(const struct store *s)
{
	return (s->batch && !sqlite3_get_autocommit(s->db));
}

/* Begin a write transaction; inside a batch, the batch is the one. */
int
store_txn_begin(struct store *s, char **cause)
{
	if (store_in_batch(s))
		return (0);
	return (store_done(s, s->st[STORE_BEGIN], cause));
}

/* Commit what store_txn_begin began (nothing inside a batch). */
int
store_txn_commit(struct store *s, char **cause)
{
	if (store_in_batch(s))
		return (0);
	return (store_done(s, s->st[STORE_COMMIT], cause));
}

/*
 * Make the writes that follow, until store_batch_end, one transaction:
 * one commit for the runs of many children reaped at once.  Return 0, or
 * -1 with *cause (the calls then commit on their own).
 */
int
store_batch_begin(struct store *s, char **cause)
{
	if (store_done(s, s->st[STORE_BEGIN], cause) == -1)
		return (-1);
	s->batch = 1;
	return (0);
}

/* Commit the batch, if a failure did not roll it back.  0, or -1. */
int
store_batch_end(struct store *s, char **cause)
{
	int open = store_in_batch(s);

	s->batch = 0;
	if (!open)
		return (0);
	return (store_done(s, s->st[STORE_COMMIT], cause));
}

/* Copy a text column into buf, "" when NULL. */
void
store_column_text(sqlite3_stmt *st, int i, char *buf, size_t len)
{
	const char *v = (const char *)sqlite3_column_text(st, i);

	strlcpy(buf, v != NULL ? v : "", len);
}

/* An integer column, or dflt when NULL. */
int64_t
store_column_opt(sqlite3_stmt *st, int i, int64_t dflt)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return (dflt);
	return (sqlite3_column_int64(st, i));
}

/*
 * The store's connection, for the other files that keep their tables in
 * state.db (queue-sqlite.c).  Their statements must be finalised before
 * store_close.
 */
sqlite3 *
store_db(struct store *s)
{
	return (s->db);
}

/*
 * Wait up to ms milliseconds (instead of 50) for a lock another process
 * holds before a call fails: for a short-lived program such as vigilctl
 * that may wait, unlike vigild.
 */
void
store_busy_timeout_set(struct store *s, int ms)
{
	sqlite3_busy_timeout(s->db, ms);
}

/* The wall clock in microseconds since the Unix epoch. */
int64_t
store_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
}
