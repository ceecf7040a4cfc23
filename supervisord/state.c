/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * vigild's state: run history, the operator's intent, and the queue's
 * operations (its handle, the outcomes of its runs).  The seam is struct
 * state_ops (vigild.h); each state_* call goes to the backend of the job
 * concerned (state_of), and a call without a job to the default backend;
 * start-up, exit and batches reach every backend.  The default backend
 * is state_sqlite (state-sqlite.c): STATE/state.db, its writes kept in
 * memory until they commit and retried while the store fails
 * (state-sqlite-pending.c).  The second, state_cluster (cluster-queue.c),
 * takes the outcomes of the messages of cluster queue jobs to PostgreSQL.
 */

#include "config.h"

#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>

#include "cluster.h"
#include "conf.h"
#include "jobs-view.h"
#include "queue.h"
#include "state.h"
#include "store.h"

/* Every backend, the default first. */
static const struct state_ops *const state_backends[] = {
	&state_sqlite,
#ifdef HAVE_LIBPQ
	&state_cluster,
#endif
};
#define STATE_NBACKENDS (sizeof(state_backends) / sizeof(state_backends[0]))

/*
 * The backend of job j's state; NULL: the default one.  Queue jobs with
 * cluster = true keep their messages in PostgreSQL (state_cluster, in
 * cluster-queue.c, which leaves the rest to state_sqlite).
 */
static const struct state_ops *
state_of(const struct job *j)
{
	const struct job_spec *spec = j != NULL ? job_spec_of(j) : NULL;

	/* (A job with cluster = true loads only with a cluster section.) */
	if (spec != NULL && spec->cluster && spec->kind == CONF_KIND_QUEUE)
		return (&state_cluster);
	return (state_backends[0]);
}

/*
 * At start-up (after vigild.lock): open every backend, and close the runs
 * a dead vigild left open as "lost" (their leftover processes go through
 * the lock reclaim).
 */
void
state_open(void)
{
	size_t i;

	for (i = 0; i < STATE_NBACKENDS; i++)
		state_backends[i]->open();
}

/*
 * At exit: a last try at what each backend keeps (a queue message whose
 * outcome is lost runs again after the next start), then close them.
 */
void
state_close(void)
{
	size_t i;

	for (i = 0; i < STATE_NBACKENDS; i++)
		state_backends[i]->close();
}

/*
 * Gather the writes that follow into one transaction per backend until
 * state_batch_end (the runs of the children one SIGCHLD reaps, their
 * messages; a claim and the runs it begins): one commit instead of one
 * per write.  Batches nest.
 */
void
state_batch_begin(void)
{
	size_t i;

	for (i = 0; i < STATE_NBACKENDS; i++)
		state_backends[i]->batch_begin();
}

/* Write the writes of the batch (and any kept before), and commit. */
void
state_batch_end(void)
{
	size_t i;

	for (i = 0; i < STATE_NBACKENDS; i++)
		state_backends[i]->batch_end();
}

/*
 * A run of in started (in->pid, in->run_id): record it.  in->run_row is
 * the backend's until the run ends.
 */
void
state_run_begin(struct inst *in)
{
	state_of(inst_job(in))->run_started(in);
}

/* The run of in became ready (RUNNING). */
void
state_run_ready(struct inst *in)
{
	state_of(inst_job(in))->run_ready(in);
}

/*
 * The run of in ended with a wait status (ignored after an exec failure)
 * and a reason (NULL: none).
 */
void
state_run_end(struct inst *in, int status, const char *reason)
{
	state_of(inst_job(in))->run_ended(in, status, reason);
}

/* A periodic slot at (wall usec) was skipped: a run was still going. */
void
state_run_skipped(struct inst *in, int64_t at)
{
	state_of(inst_job(in))->run_skipped(in, at);
}

/* When the job's last run or slot started (wall usec), 0 if unknown. */
int64_t
state_last_start(const char *job)
{
	return (state_of(job_find(job))->last_start(job));
}

/*
 * Run history of a job, oldest first: the newest n runs (of one instance,
 * or of all with instance -1), each given to cb.  Return 0, or -1 with
 * *cause when the history is not available.
 */
int
state_history(const char *job, int instance, int n, store_run_cb cb, void *arg,
    char **cause)
{
	const struct state_ops *be = state_of(job_find(job));

	return (be->history(job, instance, n, cb, arg, cause));
}

/*
 * Remember what the operator (uid) asked of an instance: held (stopped by
 * hand) or started by hand; both clear means the job's own settings rule.
 * Sets in->intent_uid and in->intent_at.
 */
void
state_intent(struct inst *in, int held, int started, long uid)
{
	state_of(inst_job(in))->intent(in, held, started, uid);
}

/*
 * Record the alert state of in (alert.c): in the default backend, for
 * every job (it is this node's, also for a cluster job).
 */
void
state_alert(const struct inst *in)
{
	if (state_backends[0]->alert != NULL)
		state_backends[0]->alert(in);
}

/* At start-up: give each instance the alert state recorded for it. */
void
state_alerts_load(void)
{
	if (state_backends[0]->alerts_load != NULL)
		state_backends[0]->alerts_load();
}

/* At start-up: give each instance the intent recorded for it. */
void
state_intents_load(void)
{
	size_t i;

	for (i = 0; i < STATE_NBACKENDS; i++)
		state_backends[i]->intents_load();
}

/*
 * The queue of the default backend, once every write kept before is
 * written, or NULL while its store fails.
 */
struct queue *
state_queue(void)
{
	return (state_of(NULL)->queue());
}

/* A call on state_queue()'s queue failed with cause (taken). */
void
state_queue_failed(char *cause)
{
	state_of(NULL)->queue_failed(cause);
}

/* The run of message id in slot in succeeded: the message is done. */
void
state_queue_done(const struct inst *in, int64_t id)
{
	state_of(inst_job(in))->queue_done(in, id);
}

/* Message id was stopped or never ran: available again, uncounted. */
void
state_queue_release(const struct inst *in, int64_t id)
{
	state_of(inst_job(in))->queue_release(in, id);
}

/*
 * The run of message id failed (exit code or signal, -1 for none; what
 * describes it; tail is the end of its output, len bytes): available
 * again at retry_at, or dead once max_attempts are spent (queue_fail).
 */
void
state_queue_fail(const struct inst *in, int64_t id, int max_attempts,
    int64_t retry_at, int code, int sig, const char *what, const char *tail,
    size_t len)
{
	state_of(inst_job(in))
	    ->queue_fail(
	        in, id, max_attempts, retry_at, code, sig, what, tail, len);
}
