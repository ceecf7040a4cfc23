/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The SQLite backend of vigild's state (struct state_ops, state.c):
 * STATE/state.db (lib/store.c) for run history, the operator's intent,
 * the alert states, the queue (lib/queue-sqlite.c on the same
 * connection) and the outcomes of its runs.  Here are its operations and
 * their table, state_sqlite: a write is a record handed to
 * state-sqlite-pending.c, kept there until its transaction commits; a
 * read asks the store once every record kept before is written.  The
 * store itself, its failures and retries, the batches, start-up (runs
 * left open by a vigild that died) and exit are state-sqlite-pending.c's.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/wait.h>

#include <stdint.h>
#include <string.h>

#include "inst.h"
#include "jobs-view.h"
#include "jobs.h"
#include "state-sqlite-int.h"
#include "state.h"
#include "store.h"
#include "xmalloc.h"

static int64_t state_seq; /* the last STATE_RUN's seq */

/* A new record of kind op for instance in. */
static struct state_rec *
state_rec_new(enum state_op op, const struct inst *in)
{
	struct state_rec *r;

	r = xcalloc(1, sizeof(*r));
	r->op = op;
	r->code = r->sig = -1;
	strlcpy(r->it.job, in->job->name, sizeof(r->it.job));
	r->it.instance = in->index;
	return (r);
}

/* A run started: record it (its row id comes once it is written). */
static void
state_sqlite_run_started(struct inst *in)
{
	struct state_rec *r;

	r = state_rec_new(STATE_RUN, in);
	r->seq = ++state_seq;
	memcpy(r->run_id, in->run.id, sizeof(r->run_id));
	r->pid = (long)in->run.pid;
	r->msg = in->q.msg.id; /* a queue run's message, else 0 */
	r->started = store_now();
	in->run.row = -r->seq;
	state_rec_add(r);
}

/* The run became ready (RUNNING). */
static void
state_sqlite_run_ready(struct inst *in)
{
	struct state_rec *r;

	if (in->run.row < 0) {
		/* Not written yet: with its row, when it is. */
		if ((r = state_rec_find_run(-in->run.row)) != NULL)
			r->ready = store_now();
		return;
	}
	if (in->run.row == 0)
		return;
	r = state_rec_new(STATE_READY, in);
	r->row = in->run.row;
	r->ready = store_now();
	state_rec_add(r);
}

/* The run ended with a wait status (ignored after an exec failure). */
static void
state_sqlite_run_ended(struct inst *in, int status, const char *reason)
{
	struct state_rec *r;

	if (in->run.row < 0)
		r = state_rec_find_run(-in->run.row);
	else if (in->run.row > 0) {
		r = state_rec_new(STATE_END, in);
		r->row = in->run.row;
	} else
		r = NULL;
	in->run.row = 0;
	if (r == NULL)
		return; /* its row was lost */
	r->ended = store_now();
	if (!in->life.exec_failed && WIFEXITED(status))
		r->code = WEXITSTATUS(status);
	else if (!in->life.exec_failed && WIFSIGNALED(status))
		r->sig = WTERMSIG(status);
	r->reason = reason != NULL ? xstrdup(reason) : NULL;
	if (r->op == STATE_END)
		state_rec_add(r);
}

/* A periodic slot at (wall usec) was skipped: a run was still going. */
static void
state_sqlite_run_skipped(struct inst *in, int64_t at)
{
	struct state_rec *r;

	r = state_rec_new(STATE_SKIPPED, in);
	r->started = at > 0 ? at : store_now();
	state_rec_add(r);
}

/* When the job's last run or slot started (wall usec), 0 if unknown. */
static int64_t
state_sqlite_last_start(const char *job)
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
 * or started by hand; both clear means the job's own settings rule.  An
 * earlier intent for it not written yet is replaced.
 */
static void
state_sqlite_intent(struct inst *in, int held, int started, long uid)
{
	struct state_rec *r;

	in->intent_uid = uid;
	in->intent_at = store_now();
	r = state_rec_new(STATE_INTENT, in);
	r->it.held = held;
	r->it.started = started;
	r->it.uid = uid;
	r->it.at = in->intent_at;
	state_rec_replace(r);
}

/*
 * Remember the alert state of an instance (alert.c); an earlier one not
 * written yet is replaced.
 */
static void
state_sqlite_alert(const struct inst *in)
{
	struct state_rec *r;

	r = state_rec_new(STATE_ALERT, in);
	strlcpy(r->al.job, in->job->name, sizeof(r->al.job));
	r->al.instance = in->index;
	r->al.state = in->alert.state;
	r->al.since = in->alert.since;
	r->al.failures = in->alert.failures;
	r->al.said = in->alert.said;
	r->al.delay = in->alert.delay;
	state_rec_replace(r);
}

static void
state_alert_apply(const struct store_alert *a, void *arg)
{
	struct job *j;
	struct inst *in;

	(void)arg;
	if ((j = job_find(a->job)) == NULL || a->instance < 0 ||
	    a->instance >= j->ninsts)
		return;
	in = j->insts[a->instance];
	in->alert.state = a->state;
	in->alert.since = a->since;
	in->alert.failures = a->failures;
	in->alert.said = a->said;
	in->alert.delay = a->delay;
}

/* At start-up: give each instance the alert state recorded for it. */
static void
state_sqlite_alerts_load(void)
{
	struct store *s;
	char *cause = NULL;

	if ((s = state_get()) == NULL)
		return;
	if (store_alerts(s, state_alert_apply, NULL, &cause) == -1)
		state_failed("state.db", cause);
}

static void
state_intent_apply(const struct store_intent *it, void *arg)
{
	struct job *j;
	struct inst *in;

	if ((j = job_find(it->job)) == NULL || it->instance < 0 ||
	    it->instance >= j->ninsts)
		return;
	in = j->insts[it->instance];
	life_intent_restore(&in->life,
	    it->held        ? LIFE_INTENT_DOWN :
	        it->started ? LIFE_INTENT_UP :
	                      LIFE_INTENT_NONE);
	in->intent_uid = it->uid;
	in->intent_at = it->at;
}

/* At start-up: give each instance the intent recorded for it. */
static void
state_sqlite_intents_load(void)
{
	struct store *s;
	char *cause = NULL;

	if ((s = state_get()) == NULL)
		return;
	if (store_intents(s, state_intent_apply, NULL, &cause) == -1)
		state_failed("state.db", cause);
}

/*
 * Run history of a job, oldest first: the newest n runs (of one instance,
 * or of all with instance -1).  Return 0, or -1 with *cause when state.db
 * is not available.
 */
static int
state_sqlite_history(const char *job, int instance, int n, store_run_cb cb,
    void *arg, char **cause)
{
	struct store *s;

	if ((s = state_get()) == NULL) {
		xasprintf(cause, "state.db is not available");
		return (-1);
	}
	if (store_history_instance(s, job, instance, n, cb, arg, cause) == -1) {
		state_failed("state.db", cause ? xstrdup(*cause) : NULL);
		return (-1);
	}
	return (0);
}

/*
 * The queue of state.db, once every record kept before is written, or
 * NULL while the store fails.
 */
static struct queue *
state_sqlite_queue(void)
{
	struct store *s;
	struct queue *q;
	char *cause = NULL;

	if ((s = state_get()) == NULL)
		return (NULL);
	if ((q = state_queue_open(s, &cause)) == NULL)
		state_failed("state.db queue", cause);
	return (q);
}

/* A queue call failed with cause (taken): as any store failure. */
static void
state_sqlite_queue_failed(char *cause)
{
	state_failed("state.db queue", cause);
}

/* The run of message id in slot in succeeded: the message is done. */
static void
state_sqlite_queue_done(const struct inst *in, int64_t id)
{
	struct state_rec *r;

	r = state_rec_new(STATE_DONE, in);
	r->msg = id;
	state_rec_add(r);
}

/* Message id was stopped or never ran: available again, uncounted. */
static void
state_sqlite_queue_release(const struct inst *in, int64_t id)
{
	struct state_rec *r;

	r = state_rec_new(STATE_RELEASE, in);
	r->msg = id;
	state_rec_add(r);
}

/*
 * The run of message id failed (exit code or signal, -1 for none; what
 * describes why, NULL when it simply exited or died of a signal; tail
 * is the end of its output, len bytes): available
 * again at retry_at, or dead once max_attempts are spent (queue_fail).
 */
static void
state_sqlite_queue_fail(const struct inst *in, int64_t id, int max_attempts,
    int64_t retry_at, int code, int sig, const char *what, const char *tail,
    size_t len)
{
	struct state_rec *r;

	r = state_rec_new(STATE_FAIL, in);
	r->msg = id;
	r->max_attempts = max_attempts;
	r->retry_at = retry_at;
	r->code = code;
	r->sig = sig;
	r->ended = store_now();
	r->what = what != NULL ? xstrdup(what) : NULL;
	if (len > 0) {
		r->tail = xmalloc(len);
		memcpy(r->tail, tail, len);
		r->tail_len = len;
	}
	state_rec_add(r);
}

const struct state_ops state_sqlite = {
	.name = "sqlite",
	.open = state_sqlite_open,
	.close = state_sqlite_close,
	.batch_begin = state_sqlite_batch_begin,
	.batch_end = state_sqlite_batch_end,
	.run_started = state_sqlite_run_started,
	.run_ready = state_sqlite_run_ready,
	.run_ended = state_sqlite_run_ended,
	.run_skipped = state_sqlite_run_skipped,
	.last_start = state_sqlite_last_start,
	.history = state_sqlite_history,
	.intent = state_sqlite_intent,
	.intents_load = state_sqlite_intents_load,
	.alert = state_sqlite_alert,
	.alerts_load = state_sqlite_alerts_load,
	.queue = state_sqlite_queue,
	.queue_failed = state_sqlite_queue_failed,
	.queue_done = state_sqlite_queue_done,
	.queue_release = state_sqlite_queue_release,
	.queue_fail = state_sqlite_queue_fail,
};
