/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * vigild's use of state.db (lib/store.c): run history, the operator's
 * intent, and recovery of runs left open by a vigild that died.  The store
 * is never in the way: when it cannot be opened or written, this says so
 * once a minute at most, supervision goes on from memory, and the store is
 * opened again on a later write, thirty seconds on.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/wait.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "queue.h"
#include "store.h"
#include "vigild.h"
#include "xmalloc.h"

#define STATE_RETRY_USEC (30 * 1000000LL)
#define STATE_WARN_USEC (60 * 1000000LL)

static struct store *state_store;
static struct queue *state_q; /* on state_store, opened on demand */
static char *state_path;
static int64_t state_retry_at; /* wall clock, usec: next reopen attempt */
static int64_t state_warned_at;
static uint64_t state_lost_writes;

/* A store call failed: log (rate-limited), drop the handle, retry later. */
static void
state_failed(const char *what, char *cause)
{
	int64_t now = store_now();

	state_lost_writes++;
	if (now - state_warned_at >= STATE_WARN_USEC) {
		log_warnx("%s: %s; supervising from memory, retrying in 30s "
		          "(%llu records lost so far)",
		    what, cause ? cause : "failed",
		    (unsigned long long)state_lost_writes);
		state_warned_at = now;
	}
	free(cause);
	queue_close(state_q);
	state_q = NULL;
	store_close(state_store);
	state_store = NULL;
	state_retry_at = now + STATE_RETRY_USEC;
}

/* Return the store, opening it again if the retry time has come. */
static struct store *
state_get(void)
{
	char *cause = NULL;

	if (state_store != NULL)
		return (state_store);
	if (state_path == NULL || store_now() < state_retry_at)
		return (NULL);
	state_store = store_open(state_path, &cause);
	if (state_store == NULL) {
		state_failed("state.db", cause);
		return (NULL);
	}
	if (cause != NULL) {
		log_warnx("%s: %s", state_path, cause);
		free(cause);
	}
	log_info("%s: open", state_path);
	return (state_store);
}

/*
 * Open STATE/state.db at start-up and close the runs a dead vigild left
 * open as "lost" (their leftover processes go through the lock reclaim).
 */
void
state_open(void)
{
	char *cause = NULL;
	size_t n = 0;

	xasprintf(&state_path, "%s/state.db", vigild.state_dir);
	if (state_get() == NULL)
		return;
	if (store_runs_close_open(
	        state_store, store_now(), "lost", &n, &cause) == -1) {
		state_failed("state.db", cause);
		return;
	}
	if (n > 0)
		log_warnx("%zu runs of a previous vigild ended unseen: "
		          "recorded as lost",
		    n);
}

/* Close the store at exit. */
void
state_close(void)
{
	queue_close(state_q);
	state_q = NULL;
	store_close(state_store);
	state_store = NULL;
	free(state_path);
	state_path = NULL;
}

/* A run started: record it. */
void
state_run_begin(struct inst *in)
{
	struct store *s;
	char *cause = NULL;

	in->run_row = 0;
	if ((s = state_get()) == NULL)
		return;
	if (store_run_begin(s, in->job->name, in->index, in->run_id,
	        (long)in->pid, store_now(), &in->run_row, &cause) == -1)
		state_failed("state.db", cause);
}

/* The run became ready (RUNNING). */
void
state_run_ready(struct inst *in)
{
	struct store *s;
	char *cause = NULL;

	if (in->run_row == 0 || (s = state_get()) == NULL)
		return;
	if (store_run_ready(s, in->run_row, store_now(), &cause) == -1)
		state_failed("state.db", cause);
}

/* The run ended with a wait status (ignored after an exec failure). */
void
state_run_end(struct inst *in, int status, const char *reason)
{
	struct store *s;
	char *cause = NULL;
	int code = -1, sig = -1;

	if (in->run_row == 0 || (s = state_get()) == NULL) {
		in->run_row = 0;
		return;
	}
	if (!in->exec_failed && WIFEXITED(status))
		code = WEXITSTATUS(status);
	else if (!in->exec_failed && WIFSIGNALED(status))
		sig = WTERMSIG(status);
	if (store_run_end(s, in->run_row, store_now(), code, sig, reason,
	        vigild.conf->history_keep, &cause) == -1)
		state_failed("state.db", cause);
	in->run_row = 0;
}

/* A periodic slot at (wall usec) was skipped: a run was still going. */
void
state_run_skipped(struct inst *in, int64_t at)
{
	struct store *s;
	char *cause = NULL;

	if ((s = state_get()) == NULL)
		return;
	if (store_run_skipped(s, in->job->name, in->index,
	        at > 0 ? at : store_now(), vigild.conf->history_keep,
	        &cause) == -1)
		state_failed("state.db", cause);
}

/* When the job's last run or slot started (wall usec), 0 if unknown. */
int64_t
state_last_start(const char *job)
{
	struct store *s;
	char *cause = NULL;
	int64_t at = 0;

	if ((s = state_get()) == NULL)
		return (0);
	if (store_last_start(s, job, &at, &cause) == -1) {
		state_failed("state.db", cause);
		return (0);
	}
	return (at);
}

/*
 * Remember what the operator asked of an instance: held (stopped by hand)
 * or started by hand; both clear means the job's own settings rule.
 */
void
state_intent(struct inst *in, int held, int started, long uid)
{
	struct store_intent it;
	struct store *s;
	char *cause = NULL;
	int r;

	in->intent_uid = uid;
	in->intent_at = store_now();
	if ((s = state_get()) == NULL)
		return;
	memset(&it, 0, sizeof(it));
	strlcpy(it.job, in->job->name, sizeof(it.job));
	it.instance = in->index;
	it.held = held;
	it.started = started;
	it.uid = uid;
	it.at = in->intent_at;
	if (held || started)
		r = store_intent_set(s, &it, &cause);
	else
		r = store_intent_clear(s, in->job->name, in->index, &cause);
	if (r == -1)
		state_failed("state.db", cause);
}

static void
state_intent_apply(const struct store_intent *it, void *arg)
{
	struct job *j;
	struct inst *in;

	if ((j = supervise_find_job(it->job)) == NULL || it->instance < 0 ||
	    it->instance >= j->ninsts)
		return;
	in = &j->insts[it->instance];
	in->held = it->held;
	in->by_hand = it->started;
	in->intent_uid = it->uid;
	in->intent_at = it->at;
}

/* At start-up: give each instance the intent recorded for it. */
void
state_intents_load(void)
{
	struct store *s;
	char *cause = NULL;

	if ((s = state_get()) == NULL)
		return;
	if (store_intents(s, state_intent_apply, NULL, &cause) == -1)
		state_failed("state.db", cause);
}

/*
 * Run history of a job, oldest first: the newest n runs.  Return 0, or -1
 * with *cause when state.db is not available.
 */
int
state_history(const char *job, int n, store_run_cb cb, void *arg, char **cause)
{
	struct store *s;

	if ((s = state_get()) == NULL) {
		xasprintf(cause, "state.db is not available");
		return (-1);
	}
	if (store_history(s, job, n, cb, arg, cause) == -1) {
		state_failed("state.db", cause ? xstrdup(*cause) : NULL);
		return (-1);
	}
	return (0);
}

/* The queue of state.db, or NULL while the store is out of reach. */
struct queue *
state_queue(void)
{
	struct store *s;
	char *cause = NULL;

	if (state_q != NULL)
		return (state_q);
	if ((s = state_get()) == NULL)
		return (NULL);
	if ((state_q = queue_open(s, &cause)) == NULL)
		state_failed("state.db queue", cause);
	return (state_q);
}

/* A queue call failed with cause (taken): as any store failure. */
void
state_queue_failed(char *cause)
{
	state_failed("state.db queue", cause);
}

/*
 * Gather the writes that follow into one transaction until state_batch_end
 * (the runs of the children one SIGCHLD reaps, their messages): one commit
 * instead of two per run.
 */
void
state_batch_begin(void)
{
	char *cause = NULL;

	if (state_store == NULL || state_path == NULL)
		return;
	if (store_batch_begin(state_store, &cause) == -1)
		state_failed("state.db", cause);
}

void
state_batch_end(void)
{
	char *cause = NULL;

	if (state_store == NULL)
		return;
	if (store_batch_end(state_store, &cause) == -1)
		state_failed("state.db", cause);
}
