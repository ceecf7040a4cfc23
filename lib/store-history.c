/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The history of runs in state.db (table runs): a run's start, readiness
 * and end, a skipped periodic slot, the runs a dead vigild left open, and
 * the newest runs of a job or of one instance, oldest first.  An ended
 * run prunes its job's rows beyond history_keep in the same transaction.
 */

#include "config.h"

#include <sys/types.h>

#include <stdint.h>
#include <string.h>

#include <sqlite3.h>

#include "store.h"
#include "store-int.h"

/*
 * Record the start of a run of instance of job, with its run id, pid and
 * start time (usec since the epoch).  Return 0 with the run's row id
 * (always > 0) in *id, for store_run_ready and store_run_end, or -1 with
 * *cause.
 */
int
store_run_begin(struct store *s, const char *job, int instance,
    const char *run_id, long pid, int64_t started, int64_t *id, char **cause)
{
	sqlite3_stmt *st = s->st[STORE_RUN_INSERT];

	if (sqlite3_bind_text(st, 1, job, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int(st, 2, instance) != SQLITE_OK ||
	    sqlite3_bind_text(st, 3, run_id, -1, SQLITE_STATIC) != SQLITE_OK ||
	    store_bind_opt(st, 4, pid > 0 ? pid : -1) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 5, started) != SQLITE_OK)
		return (store_fail(s, st, cause));
	if (store_done(s, st, cause) == -1)
		return (-1);
	*id = sqlite3_last_insert_rowid(s->db);
	return (0);
}

/*
 * Record the message (its id) that run id of a queue job works.  Return
 * 0, or -1 with *cause.
 */
int
store_run_message(struct store *s, int64_t id, int64_t msg, char **cause)
{
	sqlite3_stmt *st = s->st[STORE_RUN_MESSAGE];

	if (sqlite3_bind_int64(st, 1, id) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 2, msg) != SQLITE_OK)
		return (store_fail(s, st, cause));
	return (store_done(s, st, cause));
}

/*
 * Record when run id became ready (usec since the epoch).  A run that is
 * no longer recorded is not an error.  Return 0, or -1 with *cause.
 */
int
store_run_ready(struct store *s, int64_t id, int64_t ready, char **cause)
{
	sqlite3_stmt *st = s->st[STORE_RUN_READY];

	if (sqlite3_bind_int64(st, 1, id) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 2, ready) != SQLITE_OK)
		return (store_fail(s, st, cause));
	return (store_done(s, st, cause));
}

/*
 * Keep only the latest keep runs of the job of row id (keep 0: all), and
 * commit the transaction the caller began.  Return 0, or -1 with *cause.
 */
static int
store_run_prune_commit(struct store *s, int64_t id, int keep, char **cause)
{
	sqlite3_stmt *pr = s->st[STORE_RUN_PRUNE];

	if (keep > 0) {
		if (sqlite3_bind_int64(pr, 1, id) != SQLITE_OK ||
		    sqlite3_bind_int(pr, 2, keep) != SQLITE_OK)
			return (store_fail(s, pr, cause));
		if (store_done(s, pr, cause) == -1)
			return (-1);
	}
	return (store_txn_commit(s, cause));
}

/*
 * Record the end of run id: when (usec), the exit code or the signal (-1
 * for none) and the reason (exited, stopped, killed, exec failed, timeout,
 * lost; NULL for none).  Then delete that job's ended runs older than its
 * newest keep (keep < 1: delete nothing), in the same transaction.  A run
 * that is no longer recorded is not an error.  Return 0, or -1 with
 * *cause; nothing is changed then.
 */
int
store_run_end(struct store *s, int64_t id, int64_t ended, int exit_code,
    int signal, const char *reason, int keep, char **cause)
{
	sqlite3_stmt *st = s->st[STORE_RUN_END];

	if (store_txn_begin(s, cause) == -1)
		return (-1);
	if (sqlite3_bind_int64(st, 1, id) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 2, ended) != SQLITE_OK ||
	    store_bind_opt(st, 3, exit_code) != SQLITE_OK ||
	    store_bind_opt(st, 4, signal) != SQLITE_OK ||
	    sqlite3_bind_text(st, 5, reason, -1, SQLITE_STATIC) != SQLITE_OK)
		return (store_fail(s, st, cause));
	if (store_done(s, st, cause) == -1)
		return (-1);
	return (store_run_prune_commit(s, id, keep, cause));
}

/*
 * Record a slot of a periodic job that was skipped at usec because a run
 * was still going: a row with no pid, ended at once, reason "skipped".
 * Prune as store_run_end does.  Return 0, or -1 with *cause.
 */
int
store_run_skipped(struct store *s, const char *job, int instance, int64_t at,
    int keep, char **cause)
{
	sqlite3_stmt *st = s->st[STORE_RUN_SKIPPED];
	int64_t id;

	if (store_txn_begin(s, cause) == -1)
		return (-1);
	if (sqlite3_bind_text(st, 1, job, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int(st, 2, instance) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 3, at) != SQLITE_OK)
		return (store_fail(s, st, cause));
	if (store_done(s, st, cause) == -1)
		return (-1);
	id = sqlite3_last_insert_rowid(s->db);
	return (store_run_prune_commit(s, id, keep, cause));
}

/*
 * Set *at to the start (usec since the epoch) of the job's latest recorded
 * run or skipped slot, or to 0 if none is recorded.  Return 0, or -1 with
 * *cause.
 */
int
store_last_start(struct store *s, const char *job, int64_t *at, char **cause)
{
	sqlite3_stmt *st = s->st[STORE_LAST_START];
	int rc;

	if (sqlite3_bind_text(st, 1, job, -1, SQLITE_STATIC) != SQLITE_OK)
		return (store_fail(s, st, cause));
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW)
		return (store_fail(s, st, cause));
	*at = sqlite3_column_type(st, 0) == SQLITE_NULL ?
	    0 :
	    sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return (0);
}

/*
 * Close every run still open (left so by a vigild that died) with the
 * given end time and reason, and no exit code or signal.  Return 0 with
 * their number in *n (n may be NULL), or -1 with *cause.
 */
int
store_runs_close_open(
    struct store *s, int64_t now, const char *reason, size_t *n, char **cause)
{
	sqlite3_stmt *st = s->st[STORE_RUNS_CLOSE];

	if (sqlite3_bind_int64(st, 1, now) != SQLITE_OK ||
	    sqlite3_bind_text(st, 2, reason, -1, SQLITE_STATIC) != SQLITE_OK)
		return (store_fail(s, st, cause));
	if (store_done(s, st, cause) == -1)
		return (-1);
	if (n != NULL)
		*n = (size_t)sqlite3_changes(s->db);
	return (0);
}

/* Fill r from a row of STORE_HISTORY. */
static void
store_run_fill(sqlite3_stmt *st, struct store_run *r)
{
	memset(r, 0, sizeof(*r));
	r->id = sqlite3_column_int64(st, 0);
	store_column_text(st, 1, r->job, sizeof(r->job));
	r->instance = sqlite3_column_int(st, 2);
	store_column_text(st, 3, r->run_id, sizeof(r->run_id));
	r->pid = (long)sqlite3_column_int64(st, 4);
	r->started = sqlite3_column_int64(st, 5);
	r->ready = sqlite3_column_int64(st, 6);
	r->ended = sqlite3_column_int64(st, 7);
	r->exit_code = (int)store_column_opt(st, 8, -1);
	r->signal = (int)store_column_opt(st, 9, -1);
	store_column_text(st, 10, r->reason, sizeof(r->reason));
	r->message = store_column_opt(st, 11, 0);
}

/*
 * Call cb(run, arg) for the newest n runs of job (all of them when n is
 * negative), oldest first.  Times not known are 0, a missing exit code or
 * signal is -1, a missing reason "" (a run still open).  The run is
 * borrowed for the call.  cb may use the store, but not store_history.
 * Return 0, or -1 with *cause (cb may have been called for some runs).
 */
int
store_history(struct store *s, const char *job, int n, store_run_cb cb,
    void *arg, char **cause)
{
	return (store_history_instance(s, job, -1, n, cb, arg, cause));
}

/*
 * As store_history, for the runs of one instance of job only (all of them
 * when instance is negative).
 */
int
store_history_instance(struct store *s, const char *job, int instance, int n,
    store_run_cb cb, void *arg, char **cause)
{
	sqlite3_stmt *st = s->st[STORE_HISTORY];
	struct store_run r;
	int rc;

	if (sqlite3_bind_text(st, 1, job, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int(st, 2, n < 0 ? -1 : n) != SQLITE_OK ||
	    sqlite3_bind_int(st, 3, instance < 0 ? -1 : instance) != SQLITE_OK)
		return (store_fail(s, st, cause));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		store_run_fill(st, &r);
		cb(&r, arg);
	}
	if (rc != SQLITE_DONE)
		return (store_fail(s, st, cause));
	sqlite3_reset(st);
	return (0);
}
