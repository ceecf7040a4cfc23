/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * exec_start_post: once an instance is RUNNING, its command runs beside
 * the run (a cache warm-up, a registration), as the job's user, in its
 * directory and environment, its output into the job's log with a marker.
 * It is not the run's leader: in a session of its own but in the
 * instance's cgroup (what it leaves behind is the instance's, stopped with
 * it; without cgroups, its orphans carry the run's VIGIL_RUN_ID: the run's
 * lineage), never waited for; it is killed (with its process group) if it
 * outlives stop_timeout or its instance goes away, and a failure is only
 * logged.
 * One at a time per instance.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "child.h"
#include "duration.h"
#include "effects.h"
#include "evloop.h"
#include "job.h"
#include "jobs.h"
#include "log.h"
#include "spawn.h"
#include "xmalloc.h"

/* One exec_start_post going, until it is reaped. */
struct poststart {
	struct inst *in; /* NULL once its instance went away */
	struct child child;
	sd_event_source *timer; /* stop_timeout */
	LIST_ENTRY(poststart) entry;
};

static LIST_HEAD(, poststart) poststarts = LIST_HEAD_INITIALIZER(poststarts);

static void poststart_reaped(struct child *, pid_t, int);

/* The one going for the instance, or NULL. */
static struct poststart *
poststart_of(const struct inst *in)
{
	struct poststart *p;

	LIST_FOREACH(p, &poststarts, entry) {
		if (p->in == in)
			return (p);
	}
	return (NULL);
}

static void
poststart_kill(struct poststart *p)
{
	(void)kill(-p->child.pid, SIGKILL);
	(void)kill(p->child.pid, SIGKILL);
}

static int
poststart_timeout(sd_event_source *s, uint64_t usec, void *arg)
{
	struct poststart *p = arg;
	char d[32];

	(void)s;
	(void)usec;
	p->timer = sd_event_source_disable_unref(p->timer);
	if (p->in != NULL) {
		duration_format(p->in->job->spec->stop_timeout, d, sizeof(d));
		log_warnx("%s: exec_start_post still running after "
		          "stop_timeout (%s): killing it",
		    p->in->label, d);
		joblog_mark(p->in,
		    "exec_start_post still running after stop_timeout (%s): "
		    "sending KILL",
		    d);
	}
	poststart_kill(p);
	return (0);
}

/* The instance became RUNNING: run its exec_start_post, if any. */
void
poststart_run(struct inst *in)
{
	const struct job_spec *spec = in->job->spec;
	struct spawn_request req;
	struct spawn_result res;
	struct poststart *p;
	char *cause = NULL;
	int fds[2], r;

	if (spec->start_post_argv == NULL || poststart_of(in) != NULL)
		return;
	if (joblog_aux_fds(in, fds, &cause) == -1)
		goto fail;
	memset(&req, 0, sizeof(req));
	req.spec = spec;
	req.instance = in->index;
	req.run_id = in->run.id;
	req.lock_fd = -1;
	req.cgroup_fd = in->cg_fd > 0 ? in->cg_fd : 0;
	req.stdout_fd = fds[0];
	req.stderr_fd = fds[1];
	req.argv = spec->start_post_argv;
	r = spawn_start(&req, &res, &cause);
	joblog_child_fds_close(fds);
	if (r == -1)
		goto fail;
	if (res.report_fd != -1)
		close(res.report_fd);
	if (res.done && res.cause != NULL) {
		log_warnx("%s: exec_start_post: %s", in->label, res.cause);
		joblog_mark(in, "exec_start_post: %s", res.cause);
	}
	free(res.cause);
	p = xcalloc(1, sizeof(*p));
	p->in = in;
	child_watch(&p->child, res.pid, CHILD_POST, poststart_reaped);
	LIST_INSERT_HEAD(&poststarts, p, entry);
	joblog_mark(in, "exec_start_post: pid %ld", (long)res.pid);
	evloop_timer_in(&p->timer, CLOCK_MONOTONIC, spec->stop_timeout, 1000,
	    poststart_timeout, p);
	return;
fail:
	log_warnx("%s: exec_start_post: %s", in->label, cause);
	joblog_mark(in, "exec_start_post: %s", cause);
	free(cause);
}

/* The instance goes away: its exec_start_post is killed, reaped later. */
void
poststart_forget(struct inst *in)
{
	struct poststart *p = poststart_of(in);

	if (p == NULL)
		return;
	poststart_kill(p);
	p->in = NULL;
	p->timer = sd_event_source_disable_unref(p->timer);
}

/* An exec_start_post was reaped: a failure is logged. */
static void
poststart_reaped(struct child *c, pid_t pid, int status)
{
	struct poststart *p = child_owner(c, struct poststart, child);
	char what[64];

	(void)pid;
	LIST_REMOVE(p, entry);
	job_exit_describe(status, what, sizeof(what));
	if (p->in != NULL && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
		log_warnx("%s: exec_start_post %s", p->in->label, what);
		joblog_mark(p->in, "exec_start_post: %s", what);
	}
	p->timer = sd_event_source_disable_unref(p->timer);
	free(p);
}
