/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Clients waiting for outcomes: start and restart wait for RUNNING (and
 * min_uptime), stop for nothing left, wait for a named state.  Each wait
 * sits on two lists, its instance's and its client's; the supervisor
 * calls waiters_notify() on every change of an instance, and the reply
 * ends, with exit 0 if every wait succeeded and 1 otherwise, once the
 * last wait of the client is over.  A roll chains waits: the next
 * instance is restarted only once the one before has started well, and a
 * failure ends the roll.  The client stays with server.c,
 * which only keeps this module's per-client record for it (its park).
 */

#include "config.h"

#include <sys/types.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cluster.h"
#include "cmd.h"
#include "duration.h"
#include "evloop.h"
#include "inst.h"
#include "jobs-view.h"
#include "jobs.h"
#include "log.h"
#include "server.h"
#include "xmalloc.h"

/* One wait of a client for an instance. */
struct waiter {
	struct waiters_client *wc;
	struct inst *inst;
	enum wait_kind kind;
	enum job_state target;
	uint64_t token; /* WAIT_ASKED: the request (cluster_request) */
	TAILQ_ENTRY(waiter) ientry; /* on the instance */
	TAILQ_ENTRY(waiter) centry; /* on the client */
};

/* The waits of one client. */
struct waiters_client {
	struct client *client;
	TAILQ_HEAD(, waiter) waits;
	int code;               /* exit code once the waits end */
	const char *report;     /* "started": "LABEL: started" per success */
	sd_event_source *timer; /* ends the waits with a failure */
	/* A roll (restart --rolling): the labels still to do, in order, and
	 * what is done to each before its wait. */
	char **roll;
	size_t nroll, iroll;
	waiters_step_fn step;
};

static void waiters_client_gone(struct client *);

/* The monotonic clock in usec, as the supervisor's run times. */
static uint64_t
waiters_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * DURATION_USEC_PER_SEC +
	    (uint64_t)ts.tv_nsec / 1000);
}

/* The client's record, made (and the client parked) on first use. */
static struct waiters_client *
waiters_client_get(struct client *c)
{
	struct waiters_client *wc = server_client_parked(c);

	if (wc != NULL)
		return (wc);
	wc = xcalloc(1, sizeof(*wc));
	wc->client = c;
	TAILQ_INIT(&wc->waits);
	server_client_park(c, waiters_client_gone, wc);
	return (wc);
}

/* Forget what is left of the client's roll. */
static void
waiters_roll_clear(struct waiters_client *wc)
{
	size_t i;

	for (i = 0; wc->roll != NULL && i < wc->nroll; i++)
		free(wc->roll[i]);
	free(wc->roll);
	wc->roll = NULL;
	wc->nroll = wc->iroll = 0;
}

/* Forget the client's record (its waits are gone already). */
static void
waiters_client_free(struct waiters_client *wc)
{
	waiters_roll_clear(wc);
	wc->timer = sd_event_source_disable_unref(wc->timer);
	server_client_park(wc->client, NULL, NULL);
	free(wc);
}

/* Take w off its lists and free it; its request is forgotten. */
static void
waiters_remove(struct waiter *w)
{
	TAILQ_REMOVE(&w->wc->waits, w, centry);
	TAILQ_REMOVE(&w->inst->waiters, w, ientry);
	if (w->token != 0)
		cluster_request_forget(w->token);
	free(w);
}

/* The client went away, or may not wait: drop its waits silently. */
static void
waiters_client_gone(struct client *c)
{
	struct waiters_client *wc = server_client_parked(c);
	struct waiter *w;

	if (wc == NULL)
		return;
	/* The analyser loses track of TAILQ_REMOVE (as in waiters_cancel). */
	while ((w = TAILQ_FIRST(&wc->waits)) != NULL)
		/* NOLINTNEXTLINE(clang-analyzer-unix.Malloc) */
		waiters_remove(w);
	waiters_client_free(wc);
}

static int
waiters_stable_reached(sd_event_source *s, uint64_t usec, void *arg)
{
	struct inst *in = arg;

	in->stable = sd_event_source_disable_unref(in->stable);
	waiters_notify(in);
	return (0);
}

/*
 * Has the current run lasted min_uptime?  If not, wake the instance's
 * waiters when it has: only clients waiting for a start pay for a timer.
 */
static int
waiters_is_stable(struct inst *in)
{
	uint64_t at = in->run.started + in->job->spec->min_uptime;

	if (in->run.pid == 0 || waiters_now() >= at)
		return (1);
	if (in->stable == NULL) {
		evloop_timer_at(&in->stable, CLOCK_MONOTONIC, at, 1000,
		    waiters_stable_reached, in);
	}
	return (0);
}

/* Is a start settled in state s?  Set *ok to its outcome. */
static int
waiters_start_settled(struct inst *in, enum job_state s, int *ok)
{
	const struct kind_ops *k = in->job->kind;
	int r;

	/* A cluster instance another node runs stands by here: started. */
	if (s == JOB_STARTING && cluster_standby(in)) {
		*ok = 1;
		return (1);
	}
	/* The kind's say first: a periodic run, a queue slot. */
	if (k->start_settled != NULL && (r = k->start_settled(in, s, ok)) != -1)
		return (r);
	/* A start succeeds once the run has lasted min_uptime. */
	*ok = s == JOB_RUNNING;
	if (s == JOB_RUNNING)
		return (waiters_is_stable(in));
	/* A start put off until a reload swap is still to come. */
	if (s == JOB_STOPPED && in->job->next_spec != NULL && in->reload_start)
		return (0);
	return (s == JOB_BACKOFF || s == JOB_FATAL || s == JOB_EXITED ||
	    s == JOB_STOPPED);
}

/* Return 1 and set *ok when the wait's condition is settled. */
static int
waiters_settled(struct inst *in, enum wait_kind kind, enum job_state target,
    uint64_t token, int *ok)
{
	const char *reply;

	/* A cluster-wide stop or start is answered once it is recorded. */
	if (kind != WAIT_STATE && cluster_hold_pending(in))
		return (0);
	switch (kind) {
	case WAIT_ASKED:
		return (cluster_answer(token, ok, &reply));
	case WAIT_START:
		return (waiters_start_settled(in, in->state, ok));
	case WAIT_STOP:
		*ok = 1;
		return (!job_state_is_active(in->state));
	case WAIT_STATE:
	default:
		*ok = 1;
		/* A cluster job another node runs is running. */
		return (in->state == target ||
		    (target == JOB_RUNNING && cluster_runs_elsewhere(in)));
	}
}

/*
 * Tell the client how a wait for in ended; a failure sets exit 1.  The
 * answer of another node (token) is told in its words.
 */
static void
waiters_outcome(
    struct waiters_client *wc, const struct inst *in, int ok, uint64_t token)
{
	const char *reply;
	int answered;

	if (token != 0 && cluster_answer(token, &answered, &reply)) {
		if (!ok)
			wc->code = CMD_EXIT_FAILED;
		if (!ok || wc->report != NULL)
			server_client_printf(wc->client,
			    ok ? PROTO_STDOUT : PROTO_STDERR, "%s: %s\n",
			    in->label, reply);
		return;
	}
	if (!ok) {
		server_client_printf(wc->client, PROTO_STDERR, "%s: %s%s%s\n",
		    in->label, job_state_name(in->state),
		    in->reason ? ": " : "", in->reason ? in->reason : "");
		wc->code = CMD_EXIT_FAILED;
	} else if (wc->report != NULL)
		server_client_printf(wc->client, PROTO_STDOUT, "%s: %s\n",
		    in->label, wc->report);
}

/* The instance a roll's label names now, or NULL (gone by a reload). */
static struct inst *
waiters_roll_find(const char *label)
{
	const char *at = strrchr(label, '@');
	char name[NAME_MAX + 1];
	struct job *j;
	long i = 0;

	if (at == NULL)
		return ((j = job_find(label)) != NULL && j->ninsts == 1 ?
		        j->insts[0] :
		        NULL);
	if ((size_t)(at - label) >= sizeof(name))
		return (NULL);
	memcpy(name, label, (size_t)(at - label));
	name[at - label] = '\0';
	i = strtol(at + 1, NULL, 10);
	if ((j = job_find(name)) == NULL || i < 0 || i >= j->ninsts ||
	    strcmp(j->insts[i]->label, label) != 0)
		return (NULL);
	return (j->insts[i]);
}

/*
 * Go on with the client's roll: step the next instance and wait for it,
 * until one is waited for (return 1) or the roll is over (0).  After a
 * failure (ok == 0) the roll ends, saying what was not done.
 */
static int
waiters_roll_on(struct waiters_client *wc, int ok)
{
	struct inst *in;
	uint64_t token;
	int settled;

	while (ok && wc->iroll < wc->nroll) {
		in = waiters_roll_find(wc->roll[wc->iroll++]);
		if (in == NULL)
			continue;
		token = wc->step(wc->client, in);
		if (token != 0)
			return (waiters_add_asked(wc->client, in, token) ||
			    waiters_roll_on(wc, wc->code == 0));
		if (!waiters_settled(in, WAIT_START, JOB_RUNNING, 0, &settled))
			return (waiters_add(
			    wc->client, in, WAIT_START, JOB_RUNNING));
		waiters_outcome(wc, in, settled, 0);
		ok = settled;
	}
	if (wc->iroll < wc->nroll) {
		server_client_printf(wc->client, PROTO_STDERR,
		    "rolling restart stopped; not restarted:");
		for (; wc->iroll < wc->nroll; wc->iroll++)
			server_client_printf(wc->client, PROTO_STDERR, " %s",
			    wc->roll[wc->iroll]);
		server_client_printf(wc->client, PROTO_STDERR, "\n");
	}
	waiters_roll_clear(wc);
	return (0);
}

/* A wait is over: the last one of its client ends the reply. */
static void
waiters_end(struct waiter *w, int ok)
{
	struct waiters_client *wc = w->wc;
	struct client *c = wc->client;
	int code;

	waiters_outcome(wc, w->inst, ok, w->token);
	waiters_remove(w);
	if (!TAILQ_EMPTY(&wc->waits))
		return;
	if (wc->roll != NULL && waiters_roll_on(wc, ok))
		return;
	code = wc->code;
	waiters_client_free(wc);
	server_client_finish(c, code);
}

/*
 * Make the client wait for an instance: the reply ends (exit code 0 if
 * every wait succeeded, else 1) once all its waits are over.  Return 1 if
 * the wait was added, or 0 if it is already settled (a failure is then
 * reported to the client and recorded in its exit code).
 */
static int
waiters_add_one(struct client *c, struct inst *in, enum wait_kind kind,
    enum job_state target, uint64_t token)
{
	struct waiters_client *wc = waiters_client_get(c);
	struct waiter *w;
	int ok;

	if (waiters_settled(in, kind, target, token, &ok)) {
		waiters_outcome(wc, in, ok, token);
		if (token != 0)
			cluster_request_forget(token);
		return (0);
	}
	w = xcalloc(1, sizeof(*w));
	w->wc = wc;
	w->inst = in;
	w->kind = kind;
	w->target = target;
	w->token = token;
	TAILQ_INSERT_TAIL(&in->waiters, w, ientry);
	TAILQ_INSERT_TAIL(&wc->waits, w, centry);
	if (kind == WAIT_STATE && target == JOB_RUNNING)
		cluster_wait_watch();
	return (1);
}

int
waiters_add(struct client *c, struct inst *in, enum wait_kind kind,
    enum job_state target)
{
	return (waiters_add_one(c, in, kind, target, 0));
}

/*
 * Make the client wait for the answer of another node to its request
 * (token, from cluster_request): the holder's words are its outcome.
 */
int
waiters_add_asked(struct client *c, struct inst *in, uint64_t token)
{
	return (waiters_add_one(c, in, WAIT_ASKED, JOB_RUNNING, token));
}

/*
 * A roll: step (restart) the instances one at a time, in order, each
 * once the one before it started well (RUNNING past min_uptime); the
 * first that fails ends the roll, and the others are left as they are.
 * Return 1 while the client waits, 0 when the roll ended at once.
 */
int
waiters_roll(struct client *c, struct inst **v, size_t n, waiters_step_fn step)
{
	struct waiters_client *wc = waiters_client_get(c);
	size_t i;

	waiters_roll_clear(wc);
	wc->roll = xcalloc(n + 1, sizeof(*wc->roll));
	for (i = 0; i < n; i++)
		wc->roll[i] = xstrdup(v[i]->label);
	wc->nroll = n;
	wc->step = step;
	return (waiters_roll_on(wc, 1));
}

/*
 * Make each wait of the client that succeeds print "LABEL: word" (word is
 * a static string such as "started"); NULL, the default, prints nothing.
 */
void
waiters_report(struct client *c, const char *word)
{
	waiters_client_get(c)->report = word;
}

/*
 * The exit code gathered by waits that settled at once.  A client none
 * of whose waits is left is no longer parked: the caller ends its reply.
 */
int
waiters_code(struct client *c)
{
	struct waiters_client *wc = server_client_parked(c);
	int code;

	if (wc == NULL)
		return (0);
	code = wc->code;
	if (TAILQ_EMPTY(&wc->waits))
		waiters_client_free(wc);
	return (code);
}

static int
waiters_timed_out(sd_event_source *s, uint64_t usec, void *arg)
{
	struct waiters_client *wc = arg;
	struct client *c = wc->client;
	struct waiter *w;

	TAILQ_FOREACH(w, &wc->waits, centry) {
		if (w->kind == WAIT_ASKED)
			server_client_printf(c, PROTO_STDERR,
			    "%s: timed out waiting for the node that runs "
			    "it to answer\n",
			    w->inst->label);
		else
			server_client_printf(c, PROTO_STDERR,
			    "%s: timed out (state is %s)\n", w->inst->label,
			    job_state_name(w->inst->state));
	}
	/* The analyser loses track of TAILQ_REMOVE (as in waiters_cancel). */
	while ((w = TAILQ_FIRST(&wc->waits)) != NULL)
		/* NOLINTNEXTLINE(clang-analyzer-unix.Malloc) */
		waiters_remove(w);
	waiters_client_free(wc);
	server_client_finish(c, CMD_EXIT_FAILED);
	return (0);
}

/* End the client's waits with a failure after usec microseconds. */
void
waiters_timeout(struct client *c, uint64_t usec)
{
	struct waiters_client *wc = waiters_client_get(c);

	wc->timer = sd_event_source_disable_unref(wc->timer);
	evloop_timer_in(
	    &wc->timer, CLOCK_MONOTONIC, usec, 1000, waiters_timed_out, wc);
}

/* An instance changed state: end the waits it satisfies. */
void
waiters_notify(struct inst *in)
{
	struct waiter *w, *tmp;
	int ok;

	TAILQ_FOREACH_SAFE(w, &in->waiters, ientry, tmp) {
		if (waiters_settled(w->inst, w->kind, w->target, w->token, &ok))
			waiters_end(w, ok);
	}
}

/* A reload replaced an instance: its waiters now wait on the new one. */
void
waiters_move(struct inst *from, struct inst *to)
{
	struct waiter *w;

	while ((w = TAILQ_FIRST(&from->waiters)) != NULL) {
		TAILQ_REMOVE(&from->waiters, w, ientry);
		w->inst = to;
		TAILQ_INSERT_TAIL(&to->waiters, w, ientry);
	}
}

/* An instance goes away: its waits fail. */
static void
waiters_cancel(struct inst *in)
{
	struct waiter *w;

	/*
	 * The analyser loses track of TAILQ_REMOVE inside waiters_end and
	 * thinks the freed head comes back: it does not.
	 */
	while ((w = TAILQ_FIRST(&in->waiters)) != NULL)
		/* NOLINTNEXTLINE(clang-analyzer-unix.Malloc) */
		waiters_end(w, 0);
	in->stable = sd_event_source_disable_unref(in->stable);
}

static void
waiters_changed(struct inst *in, enum job_state was)
{
	(void)was;
	waiters_notify(in);
}

const struct inst_observer waiters_observer = {
	.changed = waiters_changed,
	.gone = waiters_cancel,
};
