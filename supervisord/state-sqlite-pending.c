/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The store of the SQLite backend of vigild's state and the writes
 * pending for it (state-sqlite.c makes them): STATE/state.db (lib/store.c)
 * opened at start-up, where the runs a vigild that died left open are
 * closed as lost, and opened again after a failure; the batches; a last
 * try at exit; the store as state-watch.c sees it.  The store is never in
 * the way: supervision goes on from memory while it cannot be written.
 *
 * Every write is a record on a list first, written at once (or, between
 * the batch's begin and end, with the batch) and dropped only
 * once its transaction committed.  When a write fails, the records stay
 * in memory, and the store is not used again until a retry time: 100 ms
 * after the first failure, doubling up to 30 s, when a timer writes what
 * is kept, in the order it came, and kicks the queue jobs' dispatch.  So a
 * lock an operator's sqlite3 holds for a moment costs a few retries, and
 * a queue message whose run ended meanwhile is settled soon after, not
 * left running until vigild restarts.  A lock held by another connection
 * keeps the store open; any other failure closes it, to be opened again
 * at the retry (a file moved aside, a full disk).  The history records
 * kept are capped (the oldest dropped and counted); queue outcomes and
 * intents are never dropped: there are no more of them than slots and
 * instances, since nothing is claimed while the store fails.  A write
 * into state.db-shm that faulted (SIGBUS: the file made immutable, or
 * truncated) is made harmless by store_fault_guard(); the store is then
 * closed as after a failure, and opened again at the retry.
 */

#include "config.h"

#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "evloop.h"
#include "inst.h"
#include "jobs-view.h"
#include "jobs.h"
#include "log.h"
#include "monotime.h"
#include "queue.h"
#include "state-sqlite-int.h"
#include "state.h"
#include "store.h"
#include "vigild.h"
#include "xmalloc.h"

#define STATE_RETRY_MIN (100 * DURATION_USEC_PER_MSEC)
#define STATE_RETRY_MAX (30 * DURATION_USEC_PER_SEC)
#define STATE_WARN_USEC (60 * 1000000LL)
/* Run history records kept in memory at most, while the store fails. */
#define STATE_KEEP_MAX 10000

TAILQ_HEAD(state_recs, state_rec);

/* Told of a corrupt file moved aside at open (state-watch.c). */
void (*state_sqlite_aside)(const char *);

static struct store *state_store;
static struct queue *state_q; /* on state_store, opened on demand */
static char *state_path;
static struct state_recs state_recs = TAILQ_HEAD_INITIALIZER(state_recs);
static size_t state_nrecs;      /* records on state_recs */
static size_t state_nkept;      /* history records among them */
static int state_batching;      /* batch_begin depth */
static uint64_t state_retry_at; /* monotonic usec: no store call before */
static uint64_t state_delay;    /* the current retry delay, 0: none */
static uint64_t state_failed_at;
static sd_event_source *state_timer;
static sd_event_source *state_fault_src; /* closes the store after a fault */
static int64_t state_warned_at;          /* wall clock usec */
static int state_warned;                 /* since the store last came back */
static uint64_t state_lost;              /* history records dropped */

static int
state_rec_is_history(const struct state_rec *r)
{
	return (r->op == STATE_RUN || r->op == STATE_READY ||
	    r->op == STATE_END || r->op == STATE_SKIPPED);
}

static void
state_rec_free(struct state_rec *r)
{
	if (r == NULL)
		return;
	free(r->reason);
	free(r->what);
	free(r->tail);
	free(r);
}

static void
state_rec_remove(struct state_rec *r)
{
	TAILQ_REMOVE(&state_recs, r, entry);
	state_nrecs--;
	if (state_rec_is_history(r))
		state_nkept--;
	state_rec_free(r);
}

/* The STATE_RUN record of seq still waiting, or NULL. */
struct state_rec *
state_rec_find_run(int64_t seq)
{
	struct state_rec *r;

	/* From the newest: a run's ready comes soon after its start. */
	TAILQ_FOREACH_REVERSE(r, &state_recs, state_recs, entry) {
		if (r->op == STATE_RUN && r->seq == seq)
			return (r);
	}
	return (NULL);
}

static int state_retry_fired(sd_event_source *, uint64_t, void *);

/* The retry timer: arm it for state_retry_at. */
static void
state_timer_arm(void)
{
	if (evloop_event() == NULL)
		return;
	evloop_timer_at(&state_timer, CLOCK_MONOTONIC, state_retry_at,
	    DURATION_USEC_PER_MSEC, state_retry_fired, NULL);
}

/*
 * A store call failed with cause (taken): log (at most once a minute),
 * close the store unless another connection's lock was all, and use it
 * again only after the retry delay: 100 ms, doubling up to 30 s, and
 * from 100 ms again after a minute without a failure.
 */
void
state_failed(const char *what, char *cause)
{
	uint64_t now = monotime_now();
	int64_t wall = store_now();
	char delay[32];

	if (state_delay == 0 || now - state_failed_at > 2 * STATE_RETRY_MAX)
		state_delay = STATE_RETRY_MIN;
	else if ((state_delay *= 2) > STATE_RETRY_MAX)
		state_delay = STATE_RETRY_MAX;
	state_failed_at = now;
	state_retry_at = now + state_delay;
	if (wall - state_warned_at >= STATE_WARN_USEC) {
		log_warnx("%s: %s; keeping writes in memory (%zu now, %llu "
		          "history records dropped so far), retrying in %s",
		    what, cause ? cause : "failed", state_nrecs,
		    (unsigned long long)state_lost,
		    duration_format(state_delay, delay, sizeof(delay)));
		state_warned_at = wall;
		state_warned = 1;
	}
	free(cause);
	if (state_store == NULL || !store_is_busy(state_store)) {
		queue_close(state_q);
		state_q = NULL;
		store_close(state_store);
		state_store = NULL;
	}
	state_timer_arm();
}

/*
 * After a fault in state.db-shm (store_fault_taken), SQLite's index is
 * vigild's own copy, which no other connection sees: close the store, to
 * be opened again at the retry.  From a loop turn of its own, since the
 * caller that saw the fault may hold the queue (state_q) still.
 */
static int
state_fault_fired(sd_event_source *s, void *arg)
{
	char *cause;

	state_fault_src = sd_event_source_disable_unref(state_fault_src);
	xasprintf(&cause,
	    "%s-shm: a write into SQLite's shared memory faulted (SIGBUS: "
	    "the file cannot be written; immutable? truncated?); state.db "
	    "closed",
	    state_path);
	queue_close(state_q);
	state_q = NULL;
	store_close(state_store);
	state_store = NULL;
	state_failed("state.db", cause);
	return (0);
}

/* Has a write into state.db-shm faulted?  Then close the store soon. */
static void
state_fault_check(void)
{
	if (!store_fault_taken() || state_fault_src != NULL)
		return;
	evloop_defer(&state_fault_src, state_fault_fired, NULL);
}

/*
 * Keep the queue's message ids above those ever given in this state
 * directory (store_ids_keep: STATE/queue-ids), on a store just opened.
 */
static void
state_ids_keep(struct store *s)
{
	char *file, *cause = NULL;

	xasprintf(&file, "%s/queue-ids", vigild.state_dir);
	if (store_ids_keep(s, file, 1, &cause) == -1) {
		log_warnx("%s; message ids may repeat should state.db be lost",
		    cause);
		free(cause);
	}
	free(file);
}

/*
 * The store, opened again if need be, or NULL before the retry time and
 * when it cannot be opened.  Records may still wait: see state_get.
 */
static struct store *
state_store_ready(void)
{
	char *cause = NULL;

	state_fault_check();
	if (state_path == NULL ||
	    (state_retry_at != 0 && monotime_now() < state_retry_at))
		return (NULL);
	if (state_store != NULL)
		return (state_store);
	state_store = store_open(state_path, &cause);
	if (state_store == NULL) {
		state_failed("state.db", cause);
		return (NULL);
	}
	if (cause != NULL) {
		/* Moved aside as corrupt: said as loudly as a loss. */
		if (state_sqlite_aside != NULL)
			state_sqlite_aside(cause);
		else
			log_warnx("%s: %s", state_path, cause);
		free(cause);
	}
	state_ids_keep(state_store);
	log_info("state: %s", state_path);
	return (state_store);
}

/* The queue on store s, opened if need be; NULL with *cause. */
struct queue *
state_queue_open(struct store *s, char **cause)
{
	if (state_q == NULL)
		state_q = queue_open(s, cause);
	return (state_q);
}

/* Write the run row of r, with its ready time and end if known. */
static int
state_rec_write_run(struct store *s, struct state_rec *r, char **cause)
{
	if (store_run_begin(s, r->it.job, r->it.instance, r->run_id, r->pid,
	        r->started, &r->row, cause) == -1)
		return (-1);
	if (r->msg != 0 && store_run_message(s, r->row, r->msg, cause) == -1)
		return (-1);
	if (r->ready != 0 && store_run_ready(s, r->row, r->ready, cause) == -1)
		return (-1);
	if (r->ended != 0 &&
	    store_run_end(s, r->row, r->ended, r->code, r->sig, r->reason,
	        vigild.conf->history_keep, cause) == -1)
		return (-1);
	return (0);
}

/* Write r inside the open transaction of s.  0, or -1 with *cause. */
static int
state_rec_write(struct store *s, struct state_rec *r, char **cause)
{
	struct queue *q = NULL;
	int dead;

	if (r->op >= STATE_DONE && (q = state_queue_open(s, cause)) == NULL)
		return (-1);
	switch (r->op) {
	case STATE_RUN:
		return (state_rec_write_run(s, r, cause));
	case STATE_READY:
		return (store_run_ready(s, r->row, r->ready, cause));
	case STATE_END:
		return (store_run_end(s, r->row, r->ended, r->code, r->sig,
		    r->reason, vigild.conf->history_keep, cause));
	case STATE_SKIPPED:
		return (store_run_skipped(s, r->it.job, r->it.instance,
		    r->started, vigild.conf->history_keep, cause));
	case STATE_INTENT:
		if (r->it.held || r->it.started)
			return (store_intent_set(s, &r->it, cause));
		return (
		    store_intent_clear(s, r->it.job, r->it.instance, cause));
	case STATE_ALERT:
		if (r->al.state != 0)
			return (store_alert_set(s, &r->al, cause));
		return (store_alert_clear(s, r->it.job, r->it.instance, cause));
	case STATE_DONE:
		return (queue_done(q, r->msg, cause));
	case STATE_RELEASE:
		return (queue_release(q, r->msg, cause));
	case STATE_FAIL:
		return (queue_fail(q, r->msg, r->max_attempts, r->retry_at,
		    r->code, r->sig, r->what, r->tail, r->tail_len, r->ended,
		    &dead, cause));
	}
	fatalx("%s: bad record %d", __func__, (int)r->op);
}

/*
 * Everything kept is written: give each run still going its row, and
 * forget the records.
 */
static void
state_recs_settle(void)
{
	struct state_rec *r, *next;
	struct job *j;
	struct inst *in;
	size_t n = state_nrecs;

	TAILQ_FOREACH_SAFE(r, &state_recs, entry, next) {
		if (r->op == STATE_RUN && r->ended == 0 &&
		    (j = job_find(r->it.job)) != NULL &&
		    r->it.instance < j->ninsts) {
			in = j->insts[r->it.instance];
			if (in->run.row == -r->seq)
				in->run.row = r->row;
		}
		state_rec_remove(r);
	}
	state_delay = 0;
	if (state_warned) {
		log_info("%s: written again (%zu records kept in memory)",
		    state_path, n);
		state_warned = 0;
	}
}

/*
 * Write every record in the batch open on s, and commit it.  On a
 * failure, the batch is rolled back and every record kept.
 */
static void
state_commit(struct store *s)
{
	struct state_rec *r;
	char *cause = NULL;

	TAILQ_FOREACH(r, &state_recs, entry) {
		if (state_rec_write(s, r, &cause) == -1) {
			(void)store_batch_end(s, NULL); /* rolled back */
			state_failed("state.db", cause);
			return;
		}
	}
	if (store_batch_end(s, &cause) == -1) {
		state_failed("state.db", cause);
		return;
	}
	state_recs_settle();
}

/* Write the records kept, in one transaction, unless it is not time. */
static void
state_flush(void)
{
	struct store *s;
	char *cause = NULL;

	if (TAILQ_EMPTY(&state_recs) || state_batching > 0 ||
	    (s = state_store_ready()) == NULL)
		return;
	if (store_batch_begin(s, &cause) == -1) {
		state_failed("state.db", cause);
		return;
	}
	state_commit(s);
}

/*
 * The store for a call of its own, once every record kept before is
 * written; NULL while the store fails.
 */
struct store *
state_get(void)
{
	if (state_batching == 0) {
		state_flush();
		if (!TAILQ_EMPTY(&state_recs))
			return (NULL);
	}
	return (state_store_ready());
}

/* The retry time came: write what is kept, then let dispatch claim. */
static int
state_retry_fired(sd_event_source *s, uint64_t usec, void *arg)
{
	struct job *j;

	if (state_get() == NULL)
		return (0); /* failed again: the timer is armed again */
	RB_FOREACH(j, job_tree, &vigild.jobs)
		queue_kind.kick(j);
	return (0);
}

/*
 * Keep r until it is written, and write it now unless a batch or the
 * retry time says later.  While the store fails, history over
 * STATE_KEEP_MAX records loses its oldest record.
 */
void
state_rec_add(struct state_rec *r)
{
	struct state_rec *old;

	if (state_delay != 0 && state_rec_is_history(r) &&
	    state_nkept >= STATE_KEEP_MAX) {
		TAILQ_FOREACH(old, &state_recs, entry) {
			/* The analyser loses track of TAILQ_REMOVE (as in
			 * waiters_cancel): no record on the list is freed. */
			/* NOLINTNEXTLINE(clang-analyzer-unix.Malloc) */
			if (state_rec_is_history(old))
				break;
		}
		state_rec_remove(old);
		state_lost++;
	}
	TAILQ_INSERT_TAIL(&state_recs, r, entry);
	state_nrecs++;
	if (state_rec_is_history(r))
		state_nkept++;
	state_flush();
}

/*
 * Open STATE/state.db at start-up and close the runs a dead vigild left
 * open as "lost" (their leftover processes go through the lock reclaim).
 */
void
state_sqlite_open(void)
{
	struct store *s;
	char *cause = NULL;
	size_t n = 0;

	xasprintf(&state_path, "%s/state.db", vigild.state_dir);
	if (store_fault_guard() == -1)
		log_warn("state: cannot catch SIGBUS in state.db-shm");
	if ((s = state_get()) == NULL)
		return;
	if (store_runs_close_open(s, store_now(), "lost", &n, &cause) == -1) {
		state_failed("state.db", cause);
		return;
	}
	if (n > 0)
		log_warnx("%zu runs of a previous vigild ended unseen: "
		          "recorded as lost",
		    n);
}

/* The store as it is open now, or NULL (state-watch.c). */
struct store *
state_sqlite_store(void)
{
	return (state_store);
}

/* The path of state.db, or NULL before start-up. */
const char *
state_sqlite_path(void)
{
	return (state_path);
}

/*
 * Close the store (and the queue on it) for state-watch.c to put another
 * file at its path; what is kept in memory stays, for the reopen.
 */
void
state_sqlite_detach(void)
{
	queue_close(state_q);
	state_q = NULL;
	store_close(state_store);
	state_store = NULL;
}

/* Open the store again now and write what was kept meanwhile. */
void
state_sqlite_reattach(void)
{
	state_retry_at = 0;
	(void)state_get();
}

/*
 * At exit: a last try at what is kept (a queue message whose outcome is
 * lost runs again after the next start), then close the store.
 */
void
state_sqlite_close(void)
{
	struct state_rec *r, *next;

	state_batching = 0;
	state_retry_at = 0;
	state_flush();
	if (state_nrecs > 0)
		log_warnx("%s: %zu records could not be written", state_path,
		    state_nrecs);
	TAILQ_FOREACH_SAFE(r, &state_recs, entry, next)
		state_rec_remove(r);
	state_timer = sd_event_source_disable_unref(state_timer);
	state_fault_src = sd_event_source_disable_unref(state_fault_src);
	queue_close(state_q);
	state_q = NULL;
	store_close(state_store);
	state_store = NULL;
	free(state_path);
	state_path = NULL;
}

/*
 * Keep r (an intent or an alert state: what the instance is now) in place
 * of a record of the same kind for the same instance not written yet.
 */
void
state_rec_replace(struct state_rec *r)
{
	struct state_rec *old, *next;

	TAILQ_FOREACH_SAFE(old, &state_recs, entry, next) {
		if (old->op == r->op && strcmp(old->it.job, r->it.job) == 0 &&
		    old->it.instance == r->it.instance)
			state_rec_remove(old);
	}
	state_rec_add(r);
}

/*
 * Gather the writes that follow into one transaction until the batch's end
 * (the runs of the children one SIGCHLD reaps, their messages; a claim and
 * the runs it begins): one commit instead of one per write.
 */
void
state_sqlite_batch_begin(void)
{
	struct store *s;
	char *cause = NULL;

	if (state_batching++ > 0 || (s = state_store_ready()) == NULL)
		return;
	if (store_batch_begin(s, &cause) == -1)
		state_failed("state.db", cause);
}

/* Write the records of the batch (and any kept before), and commit. */
void
state_sqlite_batch_end(void)
{
	if (state_batching == 0 || --state_batching > 0)
		return;
	if (state_store != NULL && store_in_batch(state_store)) {
		state_commit(state_store);
		return;
	}
	/* The batch never began, or a failed call rolled it back. */
	if (state_store != NULL)
		(void)store_batch_end(state_store, NULL);
	state_flush();
}
