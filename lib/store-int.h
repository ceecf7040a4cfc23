/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * What the store files (store.c, store-history.c, store-intent.c) share
 * and no one else sees: struct store with its prepared statements, and
 * the helpers that run one.  Never included outside lib/store*.c: SQLite
 * stays inside the store.
 */

#ifndef VIGIL_STORE_INT_H
#define VIGIL_STORE_INT_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "store.h"

/* The statements of the store, prepared at open (store_sql in store.c). */
enum store_stmt {
	STORE_BEGIN,
	STORE_COMMIT,
	STORE_ROLLBACK,
	STORE_RUN_INSERT,
	STORE_RUN_READY,
	STORE_RUN_MESSAGE,
	STORE_RUN_END,
	STORE_RUN_PRUNE,
	STORE_RUNS_CLOSE,
	STORE_HISTORY,
	STORE_INTENT_SET,
	STORE_INTENT_CLEAR,
	STORE_INTENTS,
	STORE_RUN_SKIPPED,
	STORE_LAST_START,
	STORE_ALERT_SET,
	STORE_ALERT_CLEAR,
	STORE_ALERTS,
	STORE_NSTMT,
};

/* An open state.db. */
struct store {
	sqlite3 *db;
	sqlite3_stmt *st[STORE_NSTMT];
	int batch;  /* store_batch_begin: one transaction for many calls */
	int busy;   /* the last failure: another connection held the lock */
	char *path; /* NULL: in memory */
	struct store_disk disk; /* the files it opened (store-keep.c) */
	char *ids_file;   /* the queue's id mark (store_ids_keep), or NULL */
	int64_t ids_mark; /* no id given passes it */
	int ids_owner;    /* brings the mark down at close: vigild */
};

int store_fail(struct store *, sqlite3_stmt *, char **);
int store_done(struct store *, sqlite3_stmt *, char **);
int store_bind_opt(sqlite3_stmt *, int, int64_t);
void store_column_text(sqlite3_stmt *, int, char *, size_t);
int64_t store_column_opt(sqlite3_stmt *, int, int64_t);
char *store_dir_of(const char *);
int store_file_create(const char *, char **);
int store_move_aside(const char *, const char *, char **, char **);
void store_files_note(struct store *);
void store_ids_close(struct store *);

#endif
