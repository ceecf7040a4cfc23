/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The queue job's dispatcher: a job of kind "queue" has `concurrency`
 * instances, its slots.  A free slot holds its lock and rests in WAITING;
 * the dispatcher claims messages from state.db for the free slots in one
 * transaction and starts one run per message.  It runs when something
 * may have changed (a slot came free, an enqueue, a retry), deferred to
 * the end of the loop turn so that many such events make one claim, and
 * at the due time of the earliest delayed message: one CLOCK_REALTIME
 * timer per job, armed only while a slot is free.  Nothing polls.
 *
 * At a job's first start the slots take their locks first: a leftover run
 * of a vigild that died still holds its slot's lock and is reclaimed (see
 * claim.c).  Only when every wanted slot holds its lock are the
 * messages that vigild left running made available again.
 */

#include "config.h"

#include <sys/types.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backoff.h"
#include "cluster.h"
#include "duration.h"
#include "effects.h"
#include "evloop.h"
#include "inst.h"
#include "jobs.h"
#include "lock.h"
#include "log.h"
#include "msgfate.h"
#include "queue.h"
#include "signame.h"
#include "state.h"
#include "store.h"
#include "vigild.h"
#include "xmalloc.h"

/* Dispatch after a state.db failure: when the store is retried. */
#define DISPATCH_STORE_RETRY (30 * DURATION_USEC_PER_SEC)
/* Timer slack of the due timer. */
#define DISPATCH_ACCURACY (1 * DURATION_USEC_PER_MSEC)
/* A leftover outside the slots holds a lock: look again after this. */
#define DISPATCH_LEFTOVER_RECHECK (5 * DURATION_USEC_PER_SEC)
/* Messages claimed in one transaction at most. */
#define DISPATCH_BATCH 64

static void dispatch_due_arm(struct job *, int64_t);

/* Is the slot free for a message? */
static int
dispatch_slot_free(const struct inst *in)
{
	return (in->life.want && in->state == JOB_WAITING &&
	    in->q.msg.id == 0 && in->run.pid == 0);
}

/* Is the slot still taking its lock (or reclaiming it)? */
static int
dispatch_slot_settling(const struct inst *in)
{
	return (in->life.want && in->run.pid == 0 &&
	    (in->state == JOB_STARTING || in->state == JOB_BLOCKED));
}

/* Messages left running by a dead vigild: available again, once. */
static int
dispatch_recover(struct job *j, struct queue *q)
{
	char *cause = NULL;
	size_t n = 0;
	int i;

	for (i = 0; i < j->ninsts; i++) {
		if (dispatch_slot_settling(j->insts[i]))
			return (-1); /* its slot_ready kicks again */
	}
	if (claim_held_elsewhere(j)) {
		log_warnx(
		    "%s: messages left running wait for that lock", j->name);
		dispatch_due_arm(j, store_now() + DISPATCH_LEFTOVER_RECHECK);
		return (-1);
	}
	if (queue_recover(q, j->name, &n, &cause) == -1) {
		state_queue_failed(cause);
		return (-1);
	}
	if (n > 0)
		log_warnx("%s: %zu messages left running by an earlier vigild "
		          "are available again",
		    j->name, n);
	j->recovered = 1;
	return (0);
}

/* Start the run of message msgs[i] in slot free_slots[i], i < n. */
static void
dispatch_start(struct inst **free_slots, struct queue_msg *msgs, int n,
    int cluster, uint64_t sent)
{
	int i;

	for (i = 0; i < n; i++) {
		free_slots[i]->q.msg = msgs[i];
		memset(&msgs[i], 0, sizeof(msgs[i]));
		log_debug("%s: message %" PRId64 " attempt %d",
		    free_slots[i]->label, free_slots[i]->q.msg.id,
		    free_slots[i]->q.msg.attempts);
		if (cluster)
			cluster_queue_bind(free_slots[i], sent);
		inst_feed(free_slots[i], LIFE_EV_MSG);
		if (free_slots[i]->run.pid > 0)
			inst_reason(free_slots[i],
			    "message %" PRId64 ", attempt %d",
			    free_slots[i]->q.msg.id,
			    free_slots[i]->q.msg.attempts);
	}
}

/* The job's free slots, at most max of them, into v. */
static int
dispatch_free_slots(struct job *j, struct inst **v, int max)
{
	int i, n = 0;

	for (i = 0; i < j->ninsts && n < max; i++) {
		if (dispatch_slot_free(j->insts[i]))
			v[n++] = j->insts[i];
	}
	return (n);
}

/*
 * A claim of a cluster queue job came back (claimed at sent): its
 * messages start in the slots free now, the others go back.  due: when
 * the next message is due (wall usec), 0 if none is waiting, -1 if the
 * claim failed.
 */
static void
dispatch_claimed(
    struct job *j, struct queue_msg *msgs, int n, uint64_t sent, int64_t due)
{
	struct inst *free_slots[DISPATCH_BATCH];
	int nfree = 0, i;

	j->claiming = 0;
	if (!vigild.shutting_down && !j->retiring && j->next_spec == NULL)
		nfree = dispatch_free_slots(j, free_slots, DISPATCH_BATCH);
	if (nfree > n)
		nfree = n;
	dispatch_start(free_slots, msgs, nfree, 1, sent);
	for (i = nfree; i < n; i++)
		cluster_queue_giveback(&msgs[i]);
	if (due == -1) {
		dispatch_due_arm(j, store_now() + DURATION_USEC_PER_SEC);
		return;
	}
	if (n > 0 && due == 0) {
		dispatch_kick(j); /* all it asked for: perhaps more */
		return;
	}
	if (due != 0 && due <= store_now())
		due = store_now() + DURATION_USEC_PER_SEC; /* never spin */
	dispatch_due_arm(j, due);
}

/*
 * A cluster queue job: one claim on its way at a time; its answer kicks
 * again.  Without the database the connection's return kicks.
 */
static void
dispatch_cluster(struct job *j, int nfree)
{
	if (j->claiming)
		return;
	if (cluster_queue_claim(j, nfree, dispatch_claimed) == 0)
		j->claiming = 1;
}

/* Claim messages for the job's free slots and start their runs. */
static void
dispatch_run(struct job *j)
{
	struct queue_msg msgs[DISPATCH_BATCH];
	struct inst *free_slots[DISPATCH_BATCH];
	struct queue *q;
	char *cause = NULL;
	int64_t now, due;
	int nfree, n = 0, claim;

	if (vigild.shutting_down || j->retiring || j->next_spec != NULL)
		return;
	nfree = dispatch_free_slots(j, free_slots, DISPATCH_BATCH);
	if (nfree == 0)
		return; /* a slot coming free kicks again */
	if (j->spec->cluster) {
		dispatch_cluster(j, nfree);
		return;
	}
	if ((q = state_queue()) == NULL) {
		dispatch_due_arm(j, store_now() + DISPATCH_STORE_RETRY);
		return;
	}
	if (!j->recovered && dispatch_recover(j, q) == -1) {
		if (!j->recovered && state_queue() == NULL)
			dispatch_due_arm(j, store_now() + DISPATCH_STORE_RETRY);
		return;
	}
	/*
	 * The earliest due time first, on its own index: when nothing is due
	 * the claim would walk every delayed message.
	 */
	now = store_now();
	if (queue_next_due(q, j->name, &due, &cause) == -1) {
		state_queue_failed(cause);
		dispatch_due_arm(j, now + DISPATCH_STORE_RETRY);
		return;
	}
	/* The claim and the runs it begins: one commit. */
	claim = due != 0 && due <= now;
	if (claim) {
		state_batch_begin();
		if (queue_claim_batch(
		        q, j->name, now, msgs, nfree, &n, &cause) == -1) {
			state_queue_failed(cause); /* before the batch ends */
			state_batch_end();
			dispatch_due_arm(j, now + DISPATCH_STORE_RETRY);
			return;
		}
	}
	dispatch_start(free_slots, msgs, n < nfree ? n : nfree, 0, 0);
	if (claim)
		state_batch_end();
	if (n == nfree && nfree == DISPATCH_BATCH) {
		dispatch_kick(j); /* more free slots than one batch */
		return;
	}
	if (n < nfree) {
		/* All due messages are out: wake at the next delayed one. */
		if (n > 0 && queue_next_due(q, j->name, &due, &cause) == -1) {
			state_queue_failed(cause);
			due = now + DISPATCH_STORE_RETRY;
		}
		if (n == 0 && due != 0 && due <= now)
			due = now + DURATION_USEC_PER_SEC; /* never spin */
		dispatch_due_arm(j, due);
	} else
		dispatch_due_arm(j, 0); /* no slot free: runs ending kick */
}

static int
dispatch_kicked(sd_event_source *s, void *arg)
{
	struct job *j = arg;

	(void)sd_event_source_set_enabled(j->kick, SD_EVENT_OFF);
	dispatch_run(j);
	return (0);
}

static int
dispatch_due(sd_event_source *s, uint64_t usec, void *arg)
{
	struct job *j = arg;

	(void)sd_event_source_set_enabled(j->due, SD_EVENT_OFF);
	dispatch_run(j);
	return (0);
}

/* Wake the job's dispatch at wall clock usec at (0: not at all). */
static void
dispatch_due_arm(struct job *j, int64_t at)
{
	if (at <= 0) {
		if (j->due != NULL)
			(void)sd_event_source_set_enabled(j->due, SD_EVENT_OFF);
		return;
	}
	evloop_timer_at(&j->due, CLOCK_REALTIME, (uint64_t)at,
	    DISPATCH_ACCURACY, dispatch_due, j);
}

/*
 * Something changed for queue job j (a slot came free, a message came):
 * claim at the end of this loop turn.
 */
void
dispatch_kick(struct job *j)
{
	if (j->spec->kind != CONF_KIND_QUEUE)
		return;
	evloop_defer(&j->kick, dispatch_kicked, j);
}

/*
 * Message of in failed (v says how): retried later, or on the dead list,
 * with the end of its output.  what says why it ended.
 */
static void
dispatch_failed(
    struct inst *in, const struct msg_verdict *v, const char *what, int status)
{
	const struct job_spec *spec = in->job->spec;
	char tail[4096], delay[32];
	int64_t id = in->q.msg.id;
	size_t tlen = joblog_inst_tail(in, tail, sizeof(tail));

	state_queue_fail(in, id, spec->max_attempts,
	    store_now() + (int64_t)v->delay, v->code, v->sig,
	    v->why ? what : NULL, tail, tlen);
	if (v->fate == MSG_FATE_DEAD) {
		log_warnx("%s: message %" PRId64 " is dead after %d attempts "
		          "(%s)",
		    in->label, id, in->q.msg.attempts, what);
		counters_msg(in, COUNT_MSG_DEAD);
		hook_failure(in, "dead", status, id);
		return;
	}
	counters_msg(in, COUNT_MSG_RETRY);
	log_info("%s: message %" PRId64 " attempt %d of %d failed (%s); "
	         "retrying in %s",
	    in->label, id, in->q.msg.attempts, spec->max_attempts, what,
	    duration_format(v->delay, delay, sizeof(delay)));
}

/*
 * The run of slot in ended with wait status status (-1: it never started)
 * and success as the job's success_exit_codes see it: settle its message
 * as msg_fate decides (lib/msgfate.c).  state.c keeps the outcome until
 * it is written: never lost.
 */
static void
dispatch_run_end(struct inst *in, int status, int success, const char *end)
{
	const struct job_spec *spec = in->job->spec;
	const struct backoff b = { spec->retry_delay, spec->retry_delay_max };
	const struct msg_end e = { in->q.deleted, status, success,
		in->life.exec_failed, in->life.cause, in->q.msg.attempts,
		spec->max_attempts };
	struct msg_verdict v;
	const char *what = end != NULL ? end : "never started";
	int64_t id = in->q.msg.id;

	if (id == 0)
		return;
	msg_fate(&e, &b, arc4random(), &v);
	switch (v.fate) {
	case MSG_FATE_DROP:
		log_info("%s: message %" PRId64 " was deleted while it ran; "
		         "its outcome is dropped",
		    in->label, id);
		break;
	case MSG_FATE_RELEASE:
		state_queue_release(in, id);
		log_info("%s: message %" PRId64 " stopped; available again",
		    in->label, id);
		break;
	case MSG_FATE_DONE:
		counters_msg(in, COUNT_MSG_DONE);
		state_queue_done(in, id);
		log_debug("%s: message %" PRId64 " done", in->label, id);
		break;
	case MSG_FATE_RETRY:
	case MSG_FATE_DEAD:
		dispatch_failed(in, &v, what, status);
		break;
	}
	in->q.deleted = 0;
	queue_msg_clear(&in->q.msg);
	dispatch_kick(in->job);
}

/*
 * Message id was deleted (vigilctl delete): if a slot runs it, its run
 * goes on, but its outcome is no longer recorded, retried or reported as
 * a message's.
 */
void
dispatch_msg_deleted(int64_t id)
{
	struct job *j;
	int i;

	RB_FOREACH(j, job_tree, &vigild.jobs) {
		if (j->spec->kind != CONF_KIND_QUEUE)
			continue;
		for (i = 0; i < j->ninsts; i++) {
			if (j->insts[i]->q.msg.id == id)
				j->insts[i]->q.deleted = 1;
		}
	}
}

/* The job goes away: its dispatch sources with it. */
static void
dispatch_job_free(struct job *j)
{
	j->kick = sd_event_source_disable_unref(j->kick);
	j->due = sd_event_source_disable_unref(j->due);
}

/*
 * A slot stops before its message ran (or without running it): give the
 * message back, its attempt not counted.
 */
static void
dispatch_slot_drop(struct inst *in)
{
	if (in->q.msg.id != 0)
		dispatch_run_end(in, -1, 0, NULL);
}

/* The child's stdin: the message's payload. */
static int
dispatch_stdin(struct inst *in, int *fdp, char **cause)
{
	*fdp = run_memfd(in->q.msg.payload, in->q.msg.len, cause);
	return (*fdp == -1 ? -1 : 0);
}

/* The child's environment: which message, which attempt. */
static void
dispatch_env(struct inst *in, char **env)
{
	xasprintf(&env[0], "VIGIL_MESSAGE_ID=%" PRId64, in->q.msg.id);
	xasprintf(&env[1], "VIGIL_ATTEMPT=%d", in->q.msg.attempts);
}

/* A queue job's slots, one per unit of concurrency. */
static int
dispatch_ninsts(const struct job_spec *spec)
{
	return (spec->concurrency);
}

/* A run stopped drains first, then gets stop_timeout. */
static uint64_t
dispatch_stop_time(const struct job_spec *spec)
{
	return (spec->drain_timeout + spec->stop_timeout);
}

/* A slot is up once it holds its lock, free or working. */
static int
dispatch_start_settled(const struct inst *in, enum job_state s, int *ok)
{
	if (s != JOB_RUNNING && s != JOB_WAITING)
		return (-1);
	*ok = 1;
	return (1);
}

const struct kind_ops queue_kind = {
	.stdin_fd = dispatch_stdin,
	.env = dispatch_env,
	.kick = dispatch_kick,
	.msg_drop = dispatch_slot_drop,
	.run_end = dispatch_run_end,
	.job_free = dispatch_job_free,
	.ninsts = dispatch_ninsts,
	.stop_time = dispatch_stop_time,
	.start_settled = dispatch_start_settled,
	.keep_tail = 1,
};
