/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The alert state of failing instances in state.db (table alert): since
 * when an instance fails, how many runs failed since, when an alert was
 * last said and the restart delay it had reached, so that a restart of
 * vigild goes on from there (no new burst of alerts, nor of starts).  An
 * instance that is well has no row.
 */

#include "config.h"

#include <sys/types.h>

#include <stdint.h>
#include <string.h>

#include <sqlite3.h>

#include "store.h"
#include "store-int.h"

/*
 * Record the alert state of instance a->instance of a->job, replacing
 * what was recorded for it.  Return 0, or -1 with *cause.
 */
int
store_alert_set(struct store *s, const struct store_alert *a, char **cause)
{
	sqlite3_stmt *st = s->st[STORE_ALERT_SET];

	if (sqlite3_bind_text(st, 1, a->job, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int(st, 2, a->instance) != SQLITE_OK ||
	    sqlite3_bind_int(st, 3, a->state) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 4, a->since) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 5, a->failures) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 6, a->said) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 7, (int64_t)a->delay) != SQLITE_OK)
		return (store_fail(s, st, cause));
	return (store_done(s, st, cause));
}

/*
 * Forget the alert state of instance of job: it is well again (none
 * recorded is not an error).  Return 0, or -1 with *cause.
 */
int
store_alert_clear(struct store *s, const char *job, int instance, char **cause)
{
	sqlite3_stmt *st = s->st[STORE_ALERT_CLEAR];

	if (sqlite3_bind_text(st, 1, job, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int(st, 2, instance) != SQLITE_OK)
		return (store_fail(s, st, cause));
	return (store_done(s, st, cause));
}

/*
 * Call cb(alert, arg) for every instance recorded as failing, by job then
 * instance; the record is borrowed for the call.  Return 0, or -1 with
 * *cause.
 */
int
store_alerts(struct store *s, store_alert_cb cb, void *arg, char **cause)
{
	sqlite3_stmt *st = s->st[STORE_ALERTS];
	struct store_alert a;
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		memset(&a, 0, sizeof(a));
		store_column_text(st, 0, a.job, sizeof(a.job));
		a.instance = sqlite3_column_int(st, 1);
		a.state = sqlite3_column_int(st, 2);
		a.since = sqlite3_column_int64(st, 3);
		a.failures = (unsigned int)sqlite3_column_int64(st, 4);
		a.said = sqlite3_column_int64(st, 5);
		a.delay = (uint64_t)sqlite3_column_int64(st, 6);
		cb(&a, arg);
	}
	if (rc != SQLITE_DONE)
		return (store_fail(s, st, cause));
	sqlite3_reset(st);
	return (0);
}
