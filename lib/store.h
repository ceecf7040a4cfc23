/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * state.db: vigil's memory in SQLite (WAL).  Run history with bounded
 * retention, the operator's intent per instance, and crash recovery of
 * runs left open.  All SQL lives in the store files (store.c: the
 * database; store-history.c: runs; store-intent.c: intents) and
 * queue-sqlite.c; other callers see no sqlite3 type.
 * Every call may fail (disk full, read-only, corrupt, locked): it returns
 * -1 with *cause set, and supervision goes on without it.
 */

#ifndef VIGIL_STORE_H
#define VIGIL_STORE_H

#include <sys/types.h>

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

struct sqlite3;
struct store;

/* One recorded run.  Times are microseconds since the Unix epoch, 0 when
 * not (yet) known. */
struct store_run {
	int64_t id;
	char job[65];
	int instance;
	char run_id[33];
	long pid;
	int64_t started;
	int64_t ready;
	int64_t ended;
	int exit_code;               /* -1 when it did not exit normally */
	int signal;                  /* -1 when it was not killed by a signal */
	char reason[PATH_MAX + 128]; /* whole: an exec error names a path */
	int64_t message;             /* a queue run's message, or 0 */
};

/* What the operator asked of one instance. */
struct store_intent {
	char job[65];
	int instance;
	int held;    /* stopped with vigilctl stop: stays down */
	int started; /* started with vigilctl start: stays up */
	long uid;    /* who */
	int64_t at;  /* when, microseconds since the epoch */
};

/* The alert state of a failing instance (store-alert.c). */
struct store_alert {
	char job[65];
	int instance;
	int state;             /* 1 failing, 2 crash loop */
	int64_t since;         /* failing since, wall usec */
	unsigned int failures; /* failed runs since */
	int64_t said;          /* the last alert said, wall usec */
	uint64_t delay;        /* the restart delay then, usec */
};

typedef void (*store_run_cb)(const struct store_run *, void *);
typedef void (*store_alert_cb)(const struct store_alert *, void *);
typedef void (*store_intent_cb)(const struct store_intent *, void *);

struct store *store_open(const char *, char **);
void store_close(struct store *);
int store_run_begin(struct store *, const char *, int, const char *, long,
    int64_t, int64_t *, char **);
int store_run_ready(struct store *, int64_t, int64_t, char **);
int store_run_message(struct store *, int64_t, int64_t, char **);
int store_run_end(
    struct store *, int64_t, int64_t, int, int, const char *, int, char **);
int store_run_skipped(struct store *, const char *, int, int64_t, int, char **);
int store_last_start(struct store *, const char *, int64_t *, char **);
int store_runs_close_open(
    struct store *, int64_t, const char *, size_t *, char **);
int store_history(
    struct store *, const char *, int, store_run_cb, void *, char **);
int store_history_instance(
    struct store *, const char *, int, int, store_run_cb, void *, char **);
int store_intent_set(struct store *, const struct store_intent *, char **);
int store_intent_clear(struct store *, const char *, int, char **);
int store_intents(struct store *, store_intent_cb, void *, char **);
int store_alert_set(struct store *, const struct store_alert *, char **);
int store_alert_clear(struct store *, const char *, int, char **);
int store_alerts(struct store *, store_alert_cb, void *, char **);
struct sqlite3 *store_db(struct store *);
int store_in_batch(const struct store *);
int store_txn_begin(struct store *, char **);
int store_txn_commit(struct store *, char **);
int store_batch_begin(struct store *, char **);
int store_batch_end(struct store *, char **);
void store_busy_timeout_set(struct store *, int);
void store_error_seen(struct store *);
int store_is_busy(const struct store *);
int store_fault_guard(void);
int store_fault_taken(void);
int64_t store_now(void);
/* The files of a database on disk: the database, its -wal, its -shm. */
#define STORE_NFILES 3
struct store_disk {
	dev_t dev[STORE_NFILES];
	ino_t ino[STORE_NFILES];
	int present[STORE_NFILES];
};

#define STORE_FILES_DELETED 1
#define STORE_FILES_REPLACED 2
#define STORE_FILES_AUX 3
int store_files_check(struct store *, char **);
int store_copy(struct store *, const char *, char **);
void store_disk_get(const struct store *, struct store_disk *);
int store_put_back(
    const char *, const char *, const struct store_disk *, char **, char **);
int store_ids_keep(struct store *, const char *, int, char **);
int store_ids_reserve(struct store *, int64_t, char **);

#endif
