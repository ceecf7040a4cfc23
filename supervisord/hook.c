/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Hooks: a job's on_failure (a run failed, the job turned FATAL, a queue
 * message went dead) and vigil.conf's on_event (every state change of
 * every job).  Each runs as a small process of its own, in a session of
 * its own and in a cgroup of its line (track.c: JOB@hooks with the job's
 * limits, @on_event): on_failure as the job's user, in its directory and
 * environment, its output into the job's log after a marker; on_event as
 * vigild's user, its output on vigild's.  One at a time per job
 * (on_event: one at a time in all), each bounded by hook_timeout, then
 * killed with its process group; when it ends, what it left behind is
 * killed (its cgroup; without cgroups, its process group).  Events that come
 * while one runs wait in a bounded queue; what does not fit is dropped
 * and counted in vigild's log, state changes first: an alert, a failure
 * or vigild's own event takes the place of the oldest state change.  Nothing waits for a hook: the job it
 * reports on goes on as if it had none.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/tree.h>
#include <sys/wait.h>

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "child.h"
#include "duration.h"
#include "effects.h"
#include "evloop.h"
#include "inst.h"
#include "job.h"
#include "jobs-view.h"
#include "jobs.h"
#include "log.h"
#include "signame.h"
#include "spawn.h"
#include "timefmt.h"
#include "vigild.h"
#include "words.h"
#include "xmalloc.h"

#define HOOK_QUEUE_MAX 64        /* events waiting for a job's on_failure */
#define HOOK_EVENT_QUEUE_MAX 256 /* events waiting for on_event */

/* One event, waiting for its hook. */
struct hook_ev {
	const char *event; /* "failed", "fatal", "dead", "state"; vigild's */
	char *job;         /* "" for an event of vigild's own */
	char *detail;      /* VIGIL_DETAIL: what happened, or NULL */
	unsigned int failures; /* an alert: VIGIL_FAILURES */
	int64_t since;         /* an alert: VIGIL_FAILING_SINCE, or 0 */
	int instance;
	int status;     /* the run's wait status, or -1 */
	int64_t msg_id; /* the message, or 0 */
	char run_id[17];
	enum job_state from, to; /* "state" */
	TAILQ_ENTRY(hook_ev) entry;
};
TAILQ_HEAD(hook_evq, hook_ev);

/* A line of hooks that never overlap: a job's on_failure, or on_event. */
struct hook_line {
	char *job; /* NULL: on_event */
	struct hook_evq pending;
	size_t npending;
	uint64_t dropped;   /* events that did not fit, not yet said */
	struct child child; /* the hook running (pid 0: none) */
	int cg_fd;          /* its cgroup (track.c's), or 0 */
	const char *what;   /* its event */
	sd_event_source *timer;
	RB_ENTRY(hook_line) by_job;
};

static int
hook_job_cmp(struct hook_line *a, struct hook_line *b)
{
	return (strcmp(a->job, b->job));
}

RB_HEAD(hook_job_tree, hook_line);
RB_PROTOTYPE(hook_job_tree, hook_line, by_job, hook_job_cmp)
RB_GENERATE(hook_job_tree, hook_line, by_job, hook_job_cmp)

static struct hook_job_tree hook_jobs = RB_INITIALIZER(&hook_jobs);
static struct hook_line hook_event_line = {
	.pending = TAILQ_HEAD_INITIALIZER(hook_event_line.pending),
};

static void hook_next(struct hook_line *);
static void hook_reaped(struct child *, pid_t, int);

/* "on_failure of JOB" or "on_event", for the log. */
static const char *
hook_name(const struct hook_line *l, char *buf, size_t len)
{
	if (l->job == NULL)
		return ("on_event");
	snprintf(buf, len, "%s: on_failure", l->job);
	return (buf);
}

static void
hook_ev_free(struct hook_ev *ev)
{
	free(ev->job);
	free(ev->detail);
	free(ev);
}

/* Say how many events were dropped since it was last said. */
static void
hook_say_dropped(struct hook_line *l)
{
	char name[128];

	if (l->dropped == 0)
		return;
	log_warnx("%s: %" PRIu64 " event%s dropped: the hook cannot keep up",
	    hook_name(l, name, sizeof(name)), l->dropped,
	    l->dropped == 1 ? "" : "s");
	l->dropped = 0;
}

/* Free a job's line once it has nothing to run. */
static void
hook_line_settle(struct hook_line *l)
{
	if (l->child.pid != 0 || l->npending > 0 || l->job == NULL)
		return;
	hook_say_dropped(l);
	RB_REMOVE(hook_job_tree, &hook_jobs, l);
	free(l->job);
	free(l);
}

/* The instance of job j that ev is about, for its log: or the first. */
static struct inst *
hook_inst(const struct job *j, const struct hook_ev *ev)
{
	return (j->insts[ev->instance < j->ninsts ? ev->instance : 0]);
}

/* The variables of ev, "KEY=value", NULL-terminated (words_free). */
static char **
hook_env(const struct hook_ev *ev)
{
	char **env = xcalloc(10, sizeof(*env));
	char at[TIMEFMT_LEN];
	size_t n = 0;
	const char *sig;

	xasprintf(&env[n++], "VIGIL_EVENT=%s", ev->event);
	if (ev->status != -1 && WIFEXITED(ev->status))
		xasprintf(
		    &env[n++], "VIGIL_EXIT_STATUS=%d", WEXITSTATUS(ev->status));
	else if (ev->status != -1 && WIFSIGNALED(ev->status)) {
		sig = signame_name(WTERMSIG(ev->status));
		if (sig != NULL)
			xasprintf(&env[n++], "VIGIL_EXIT_SIGNAL=%s", sig);
		else
			xasprintf(&env[n++], "VIGIL_EXIT_SIGNAL=%d",
			    WTERMSIG(ev->status));
	}
	if (ev->msg_id != 0)
		xasprintf(&env[n++], "VIGIL_MESSAGE_ID=%" PRId64, ev->msg_id);
	if (strcmp(ev->event, "state") == 0) {
		xasprintf(&env[n++], "VIGIL_FROM=%s", job_state_name(ev->from));
		xasprintf(&env[n++], "VIGIL_TO=%s", job_state_name(ev->to));
	}
	if (ev->detail != NULL)
		xasprintf(&env[n++], "VIGIL_DETAIL=%s", ev->detail);
	if (ev->since != 0) {
		xasprintf(&env[n++], "VIGIL_FAILURES=%u", ev->failures);
		xasprintf(&env[n++], "VIGIL_FAILING_SINCE=%s",
		    timefmt_wall(ev->since, at, sizeof(at)));
	}
	return (env);
}

static int
hook_timed_out(sd_event_source *s, uint64_t usec, void *arg)
{
	struct hook_line *l = arg;
	struct job *j = l->job != NULL ? job_find(l->job) : NULL;
	char name[128], d[32];
	uint64_t t =
	    j != NULL ? j->spec->hook_timeout : vigild.conf->hook_timeout;

	(void)s;
	(void)usec;
	l->timer = sd_event_source_disable_unref(l->timer);
	duration_format(t, d, sizeof(d));
	log_warnx("%s: pid %ld still running after hook_timeout (%s): "
	          "killing it",
	    hook_name(l, name, sizeof(name)), (long)l->child.pid, d);
	if (j != NULL && j->ninsts > 0)
		joblog_mark(j->insts[0],
		    "on_failure: pid %ld still running after hook_timeout "
		    "(%s): sending KILL",
		    (long)l->child.pid, d);
	(void)kill(-l->child.pid, SIGKILL);
	(void)kill(l->child.pid, SIGKILL);
	return (0);
}

/* The hook of ev on line l runs as pid: on record, bounded by timeout. */
static void
hook_started(struct hook_line *l, const struct hook_ev *ev, struct inst *in,
    pid_t pid, uint64_t timeout)
{
	char name[128];

	child_watch(&l->child, pid, CHILD_HOOK, hook_reaped);
	l->what = ev->event;
	if (in != NULL)
		joblog_mark(in, "on_failure: pid %ld (%s)", (long)l->child.pid,
		    ev->event);
	log_debug("%s: pid %ld (%s)", hook_name(l, name, sizeof(name)),
	    (long)l->child.pid, ev->event);
	evloop_timer_in(
	    &l->timer, CLOCK_MONOTONIC, timeout, 1000, hook_timed_out, l);
}

/*
 * Start the hook of ev on line l: 0, or -1 (said in the log) when it
 * cannot run, or its job or command is gone.
 */
static int
hook_spawn(struct hook_line *l, const struct hook_ev *ev)
{
	struct spawn_request req;
	struct spawn_result res;
	struct job_spec *own = NULL;
	struct inst *in = NULL;
	struct job *j;
	char **env, *cause = NULL, name[128];
	int fds[2] = { -1, -1 }, r;
	uint64_t timeout;

	memset(&req, 0, sizeof(req));
	if (l->job != NULL) {
		if ((j = job_find(l->job)) == NULL || j->ninsts == 0 ||
		    j->spec->failure_argv == NULL)
			return (-1); /* removed by a reload meanwhile */
		in = hook_inst(j, ev);
		snprintf(name, sizeof(name), "%s@hooks", j->name);
		if ((req.cgroup_fd = track_hook_cgroup(name, j, &cause)) ==
		        -1 ||
		    joblog_aux_fds(in, fds, &cause) == -1)
			goto fail;
		req.spec = j->spec;
		req.argv = j->spec->failure_argv;
		timeout = j->spec->hook_timeout;
	} else {
		if (vigild.conf->event_argv == NULL)
			return (-1);
		if ((req.cgroup_fd =
		            track_hook_cgroup("@on_event", NULL, &cause)) == -1)
			goto fail;
		own = job_spec_new(ev->job);
		req.spec = own;
		req.argv = vigild.conf->event_argv;
		timeout = vigild.conf->hook_timeout;
	}
	env = hook_env(ev);
	req.instance = ev->instance;
	req.run_id = ev->run_id;
	req.lock_fd = -1;
	req.stdout_fd = fds[0];
	req.stderr_fd = fds[1];
	req.extra_env = env;
	r = spawn_start(&req, &res, &cause);
	if (fds[0] != -1)
		joblog_child_fds_close(fds);
	words_free(env);
	job_spec_free(own);
	if (r == -1)
		goto fail;
	if (res.report_fd != -1)
		close(res.report_fd);
	free(res.cause); /* an exec failure: exit 127, said at the reap */
	l->cg_fd = req.cgroup_fd;
	hook_started(l, ev, in, res.pid, timeout);
	return (0);
fail:
	log_warnx("%s: %s", hook_name(l, name, sizeof(name)), cause);
	if (in != NULL)
		joblog_mark(in, "on_failure: %s", cause);
	free(cause);
	return (-1);
}

/* Run the next event of line l, if none runs. */
static void
hook_next(struct hook_line *l)
{
	struct hook_ev *ev;

	/* One that cannot run is said in the log; the next one is tried. */
	while (l->child.pid == 0 && (ev = TAILQ_FIRST(&l->pending)) != NULL) {
		TAILQ_REMOVE(&l->pending, ev, entry);
		l->npending--;
		hook_say_dropped(l);
		(void)hook_spawn(l, ev);
		hook_ev_free(ev);
	}
	hook_line_settle(l);
}

/* Is ev a routine one (a state change), dropped first when full? */
static int
hook_ev_routine(const struct hook_ev *ev)
{
	return (strcmp(ev->event, "state") == 0);
}

/*
 * Make room on l's full queue for ev: the oldest routine event waiting
 * goes (counted as dropped) when ev is not one itself.  0: room made.
 */
static int
hook_make_room(struct hook_line *l, const struct hook_ev *ev)
{
	struct hook_ev *old;

	if (hook_ev_routine(ev))
		return (-1);
	TAILQ_FOREACH(old, &l->pending, entry) {
		if (hook_ev_routine(old))
			break;
	}
	if (old == NULL)
		return (-1);
	TAILQ_REMOVE(&l->pending, old, entry);
	l->npending--;
	l->dropped++;
	hook_ev_free(old);
	return (0);
}

/*
 * Queue ev on l.  On a full queue a state change is dropped, the new one
 * or, to make room for an event that is not one (an alert, a failure,
 * vigild's own: rare and what an operator is paged for), the oldest.
 */
static void
hook_queue(struct hook_line *l, struct hook_ev *ev, size_t max)
{
	if (l->npending >= max && hook_make_room(l, ev) == -1) {
		l->dropped++;
		hook_ev_free(ev);
		return;
	}
	TAILQ_INSERT_TAIL(&l->pending, ev, entry);
	l->npending++;
	hook_next(l);
}

static struct hook_line *hook_job_line(struct inst *);

static struct hook_ev *
hook_ev_new(const struct inst *in, const char *event, int status)
{
	struct hook_ev *ev = xcalloc(1, sizeof(*ev));

	ev->event = event;
	ev->job = xstrdup(in->job->name);
	ev->instance = in->index;
	ev->status = status;
	snprintf(ev->run_id, sizeof(ev->run_id), "%s", in->run.id);
	return (ev);
}

/* The line of in's job's on_failure, made at first use; NULL: none. */
static struct hook_line *
hook_job_line(struct inst *in)
{
	struct hook_line key, *l;

	if (in->job->spec->failure_argv == NULL)
		return (NULL);
	memset(&key, 0, sizeof(key));
	key.job = in->job->name;
	if ((l = RB_FIND(hook_job_tree, &hook_jobs, &key)) == NULL) {
		l = xcalloc(1, sizeof(*l));
		l->job = xstrdup(in->job->name);
		TAILQ_INIT(&l->pending);
		RB_INSERT(hook_job_tree, &hook_jobs, l);
	}
	return (l);
}

/*
 * Run the on_failure of in's job for event ("fatal", "dead"), with the
 * wait status of the run (-1: none) and the message (0: none).
 */
void
hook_failure(struct inst *in, const char *event, int status, int64_t msg_id)
{
	struct hook_line *l;
	struct hook_ev *ev;

	if ((l = hook_job_line(in)) == NULL)
		return;
	ev = hook_ev_new(in, event, status);
	ev->msg_id = msg_id;
	hook_queue(l, ev, HOOK_QUEUE_MAX);
}

/* The state of in changed from was: FATAL's on_failure, and on_event. */
static void
hook_changed(struct inst *in, enum job_state was)
{
	struct hook_ev *ev;
	int status = in->last.known ? in->last.status : -1;

	if (in->state == JOB_FATAL && was != JOB_FATAL)
		hook_failure(in, "fatal", status, 0);
	if (vigild.conf == NULL || vigild.conf->event_argv == NULL)
		return;
	/* How the last run ended, where that is what the change is about. */
	if (in->state == JOB_STARTING || in->state == JOB_RUNNING ||
	    in->state == JOB_STOPPING || in->state == JOB_BLOCKED)
		status = -1;
	ev = hook_ev_new(in, "state", status);
	ev->from = was;
	ev->to = in->state;
	hook_queue(&hook_event_line, ev, HOOK_EVENT_QUEUE_MAX);
}

/*
 * An alert about in (alert.c: event "failing", "crash-loop",
 * "still-failing", "recovered"; "failed" with alert_repeat = "0"), with
 * the wait status of the run it is about (-1: none) and its message (0:
 * none), the failed runs so far and since when it fails: to the job's
 * on_failure and to on_event.
 */
void
hook_alert(struct inst *in, const char *event, int status, int64_t msg_id,
    unsigned int failures, int64_t since)
{
	struct hook_line *l;
	struct hook_ev *ev;

	if ((l = hook_job_line(in)) != NULL) {
		ev = hook_ev_new(in, event, status);
		ev->msg_id = msg_id;
		ev->failures = failures;
		ev->since = since;
		hook_queue(l, ev, HOOK_QUEUE_MAX);
	}
	if (vigild.conf == NULL || vigild.conf->event_argv == NULL)
		return;
	ev = hook_ev_new(in, event, status);
	ev->msg_id = msg_id;
	ev->failures = failures;
	ev->since = since;
	hook_queue(&hook_event_line, ev, HOOK_EVENT_QUEUE_MAX);
}

/*
 * An event of vigild's own (event: a static name, as "state-db-lost";
 * detail: what happened) for on_event, with an empty VIGIL_JOB.
 */
void
hook_vigild(const char *event, const char *detail)
{
	struct hook_ev *ev;

	if (vigild.conf == NULL || vigild.conf->event_argv == NULL)
		return;
	ev = xcalloc(1, sizeof(*ev));
	ev->event = event;
	ev->job = xstrdup("");
	ev->status = -1;
	ev->detail = detail != NULL ? xstrdup(detail) : NULL;
	hook_queue(&hook_event_line, ev, HOOK_EVENT_QUEUE_MAX);
}

/*
 * The hook of l (pid) ended or vigild exits: what it left behind goes
 * too, all of its cgroup, else its process group.
 */
static void
hook_leftovers(struct hook_line *l, pid_t pid)
{
	if (l->cg_fd > 0)
		track_hook_end(l->cg_fd);
	else
		(void)kill(-pid, SIGKILL);
}

/* The hook of a line was reaped: its leftovers go, the next may run. */
static void
hook_reaped(struct child *c, pid_t pid, int status)
{
	struct hook_line *l = child_owner(c, struct hook_line, child);
	struct job *j;
	char what[64], name[128];

	hook_leftovers(l, pid);
	l->timer = sd_event_source_disable_unref(l->timer);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		job_exit_describe(status, what, sizeof(what));
		log_warnx("%s: pid %ld (%s) %s",
		    hook_name(l, name, sizeof(name)), (long)pid, l->what, what);
		if (l->job != NULL && (j = job_find(l->job)) != NULL &&
		    j->ninsts > 0)
			joblog_mark(j->insts[0], "on_failure: pid %ld %s",
			    (long)pid, what);
	}
	hook_next(l);
}

/*
 * vigild exits: forget every hook; those running get their PDEATHSIG,
 * and what they left behind is killed.
 */
void
hook_free_all(void)
{
	struct hook_line *l, *next;
	struct hook_ev *ev;

	RB_FOREACH_SAFE(l, hook_job_tree, &hook_jobs, next) {
		RB_REMOVE(hook_job_tree, &hook_jobs, l);
		if (l->child.pid != 0)
			hook_leftovers(l, l->child.pid);
		child_unwatch(&l->child);
		l->timer = sd_event_source_disable_unref(l->timer);
		while ((ev = TAILQ_FIRST(&l->pending)) != NULL) {
			TAILQ_REMOVE(&l->pending, ev, entry);
			hook_ev_free(ev);
		}
		free(l->job);
		free(l);
	}
	if (hook_event_line.child.pid != 0)
		hook_leftovers(&hook_event_line, hook_event_line.child.pid);
	child_unwatch(&hook_event_line.child);
	hook_event_line.timer =
	    sd_event_source_disable_unref(hook_event_line.timer);
	while ((ev = TAILQ_FIRST(&hook_event_line.pending)) != NULL) {
		TAILQ_REMOVE(&hook_event_line.pending, ev, entry);
		hook_ev_free(ev);
	}
	hook_event_line.npending = 0;
}

const struct inst_observer hook_observer = { .changed = hook_changed };
