/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The operator's intent in state.db (table intent): per instance, whether
 * vigilctl stop held it down or vigilctl start brought it up, who asked
 * and when, so that it outlasts a restart of vigild.
 */

#include "config.h"

#include <sys/types.h>

#include <stdint.h>
#include <string.h>

#include <sqlite3.h>

#include "store.h"
#include "store-int.h"

/*
 * Record what the operator asked of instance it->instance of it->job,
 * replacing what was recorded for it.  Return 0, or -1 with *cause.
 */
int
store_intent_set(struct store *s, const struct store_intent *it, char **cause)
{
	sqlite3_stmt *st = s->st[STORE_INTENT_SET];

	if (sqlite3_bind_text(st, 1, it->job, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int(st, 2, it->instance) != SQLITE_OK ||
	    sqlite3_bind_int(st, 3, it->held != 0) != SQLITE_OK ||
	    sqlite3_bind_int(st, 4, it->started != 0) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 5, it->uid) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 6, it->at) != SQLITE_OK)
		return (store_fail(s, st, cause));
	return (store_done(s, st, cause));
}

/*
 * Forget the intent recorded for instance of job (none recorded is not an
 * error).  Return 0, or -1 with *cause.
 */
int
store_intent_clear(struct store *s, const char *job, int instance, char **cause)
{
	sqlite3_stmt *st = s->st[STORE_INTENT_CLEAR];

	if (sqlite3_bind_text(st, 1, job, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int(st, 2, instance) != SQLITE_OK)
		return (store_fail(s, st, cause));
	return (store_done(s, st, cause));
}

/*
 * Call cb(intent, arg) for every recorded intent, by job then instance.
 * The intent is borrowed for the call.  cb may use the store, but not
 * store_intents.  Return 0, or -1 with *cause.
 */
int
store_intents(struct store *s, store_intent_cb cb, void *arg, char **cause)
{
	sqlite3_stmt *st = s->st[STORE_INTENTS];
	struct store_intent it;
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		memset(&it, 0, sizeof(it));
		store_column_text(st, 0, it.job, sizeof(it.job));
		it.instance = sqlite3_column_int(st, 1);
		it.held = sqlite3_column_int(st, 2);
		it.started = sqlite3_column_int(st, 3);
		it.uid = (long)store_column_opt(st, 4, -1);
		it.at = sqlite3_column_int64(st, 5);
		cb(&it, arg);
	}
	if (rc != SQLITE_DONE)
		return (store_fail(s, st, cause));
	sqlite3_reset(st);
	return (0);
}
