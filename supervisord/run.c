/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * A run: one fork of an instance, from spawn to reap.  run_begin() forks
 * (its lock already held), run_spawn() the leader of each stage,
 * run_reaped() gives the leader's wait status from SIGCHLD to the
 * lifecycle, run_signal() signals the run's processes; run-stage.c
 * carries out what its stages decide (exec_start_pre, the command, a
 * forking job's daemon, exec_stop_post: lib/life-run.c), run-end.c
 * writes how it ended.  What runs next is never decided here.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "child.h"
#include "cluster.h"
#include "effects.h"
#include "evloop.h"
#include "inst.h"
#include "jobs.h"
#include "lineage.h"
#include "log.h"
#include "monotime.h"
#include "proc.h"
#include "run-int.h"
#include "signame.h"
#include "spawn.h"
#include "state.h"
#include "xmalloc.h"

static void run_reaped(struct child *, pid_t, int);

static unsigned int run_nspawning; /* children not yet exec'd */

/* How many children have not reached exec yet. */
unsigned int
run_spawning(void)
{
	return (run_nspawning);
}

static void
run_report_close(struct inst *in)
{
	int fd;

	if (in->run.report == NULL)
		return;
	run_nspawning--;
	fd = sd_event_source_get_io_fd(in->run.report);
	in->run.report = sd_event_source_disable_unref(in->run.report);
	close(fd);
}

/* The run is over: the write end of its stdin pipe goes (EOF). */
void
run_stdin_close(struct inst *in)
{
	if (in->run.stdin_fd != -1)
		close(in->run.stdin_fd);
	in->run.stdin_fd = -1;
}

/*
 * Is pid (of session sid) never a process of in's run: a child of
 * vigild's own (a hook, a probe, the keeper), another run's leader or a
 * member of its session?  An exec_start_post is of its run's lineage.
 */
static int
run_lineage_other(const struct inst *in, pid_t pid, pid_t sid)
{
	struct child *c = child_find(pid);
	struct inst *o;

	if (c != NULL && c->kind != CHILD_POST && c != &in->run.leader)
		return (1);
	return ((o = ready_session_find(sid)) != NULL && o != in);
}

/* The run follows its leader, in->run.pid, now: its reap is ours. */
void
run_leader_watch(struct inst *in)
{
	child_watch(&in->run.leader, in->run.pid, CHILD_RUN, run_reaped);
}

/*
 * Signal the run's processes: its whole cgroup, else (kill_group) its
 * process group and the rest of its lineage (lineage.c), or only its
 * leader.
 */
void
run_signal(struct inst *in, int sig)
{
	pid_t pgid = in->run.pgid != 0 ? in->run.pgid : in->run.pid;
	int r;

	if (in->cg_fd != -1) {
		track_signal(in, sig);
		return;
	}
	if (in->job->spec->kill_group && pgid > 1) {
		/* Its lineage first: the leader's children are not orphans. */
		(void)lineage_find(in, run_lineage_other);
		if ((r = proc_group_signal(pgid, sig)) == -1 && errno != ESRCH)
			log_warn("%s: kill -%s group %ld", in->label,
			    signame_name(sig), (long)pgid);
		if (lineage_signal(in, sig, r == 0 ? pgid : 0) > 0 || r == 0)
			return;
		/* No group yet: the child has not called setsid(). */
	}
	if (in->run.pid > 0 && kill(in->run.pid, sig) == -1 && errno != ESRCH)
		log_warn("%s: kill -%s %ld", in->label, signame_name(sig),
		    (long)in->run.pid);
}

/*
 * Is anything of the run left once its leader is gone: a member of its
 * cgroup, else (kill_group) of its process group or lineage?
 */
int
run_alive(struct inst *in)
{
	if (in->cg_fd != -1)
		return (track_populated(in));
	if (!in->job->spec->kill_group)
		return (0);
	return ((in->run.pgid > 0 && proc_group_exists(in->run.pgid)) ||
	    lineage_find(in, run_lineage_other) > 0);
}

/* Exec report readable: EOF means exec succeeded, text is a failure. */
static int
run_report(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	struct inst *in = arg;
	char *cause = NULL;
	int r = spawn_report_read(fd, &cause);

	if (r == -1 && (errno == EAGAIN || errno == EINTR))
		return (0);
	if (r == -1)
		log_warn("%s: exec report", in->label);
	run_report_close(in);
	if (r == 0)
		inst_feed(in, LIFE_EV_EXEC_OK);
	else if (r == 1) {
		inst_exec_failed(in, cause, 0);
		free(cause);
	}
	return (0);
}

/* Record the new leader in the holder record of the lock. */
void
run_write_holder(struct inst *in)
{
	struct lock_holder h;

	h.pid = in->run.pid;
	h.pgid = in->run.pgid;
	h.vigild = getpid();
	if (in->run.pid == in->run.pgid && in->run.starttime != 0)
		h.starttime = in->run.starttime; /* known from the spawn */
	else if (proc_starttime(in->run.pid, &h.starttime) == -1)
		h.starttime = 0;
	claim_record(in, &h);
}

/*
 * A file for the child's stdin holding data: a memfd, so that a queue
 * message's payload of any size needs no writer and no pipe.
 */
int
run_memfd(const char *data, size_t len, char **cause)
{
	ssize_t n;
	int fd;

	if ((fd = memfd_create("vigil-payload", MFD_CLOEXEC)) == -1) {
		xasprintf(cause, "memfd_create: %s", strerror(errno));
		return (-1);
	}
	while (len > 0) {
		n = write(fd, data, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			break;
		data += n;
		len -= (size_t)n;
	}
	if (len > 0 || lseek(fd, 0, SEEK_SET) == -1) {
		xasprintf(cause, "payload: %s", strerror(errno));
		close(fd);
		return (-1);
	}
	return (fd);
}

/*
 * A service's (or periodic job's) stdin in *fdp: the read end of a pipe
 * whose write end the instance keeps until the run ends (stdin = "pipe":
 * nothing is written, the job sees no EOF while it runs), or -1 for
 * /dev/null.  Return 0, or -1 with *cause set.
 */
static int
run_stdin(struct inst *in, int *fdp, char **cause)
{
	int p[2];

	*fdp = -1;
	if (in->job->spec->input != CONF_STDIN_PIPE)
		return (0);
	if (pipe2(p, O_CLOEXEC) == -1) {
		xasprintf(cause, "stdin pipe: %s", strerror(errno));
		return (-1);
	}
	run_stdin_close(in);
	in->run.stdin_fd = p[1];
	*fdp = p[0];
	return (0);
}

/* The extra environment of a run: the kind's two, the cluster's two. */
#define RUN_ENV_MAX 5

/* NOTIFY_SOCKET (and WATCHDOG_USEC) for a ready = "notify" job. */
static void
run_env(struct inst *in, char **env)
{
	const struct job_spec *spec = in->job->spec;

	if (spec->ready != CONF_READY_NOTIFY)
		return;
	xasprintf(&env[0], "NOTIFY_SOCKET=%s", ready_notify_path());
	if (spec->watchdog > 0)
		xasprintf(&env[1], "WATCHDOG_USEC=%" PRIu64,
		    (uint64_t)spec->watchdog);
}

const struct kind_ops service_kind = {
	.stdin_fd = run_stdin,
	.env = run_env,
};

/* What the spawn needs: stdin, stdout/stderr, the kind's environment. */
static int
run_request(struct inst *in, enum life_stage st, struct spawn_request *req,
    int fds[2], char **env, char **cause)
{
	const struct kind_ops *k = inst_kind(in);
	int in_fd = -1;

	/* The command's stdin; exec_start_pre and exec_stop_post: none. */
	if (st == LIFE_STAGE_MAIN &&
	    (k->stdin_fd != NULL ? k->stdin_fd : run_stdin)(
	        in, &in_fd, cause) == -1)
		return (-1);
	if (joblog_child_fds(in, fds, cause) == -1) {
		if (in_fd != -1)
			close(in_fd);
		return (-1);
	}
	memset(req, 0, sizeof(*req));
	if ((req->cgroup_fd = track_prepare(in, cause)) == -1) {
		joblog_child_fds_close(fds);
		joblog_inst_release(in);
		if (in_fd != -1)
			close(in_fd);
		return (-1);
	}
	in->run.oom_kills = track_oom_kills(in);
	in->run.oom = 0;
	req->spec = in->job->spec;
	req->instance = in->index;
	req->run_id = in->run.id;
	req->lock_fd = in->lock_fd;
	req->stdout_fd = fds[0];
	req->stderr_fd = fds[1];
	req->stdin_fd = in_fd;
	if (st == LIFE_STAGE_MAIN) {
		(k->env != NULL ? k->env : run_env)(in, env);
		cluster_env(in, env, RUN_ENV_MAX);
	}
	req->extra_env = env[0] != NULL ? env : NULL;
	req->argv = st == LIFE_STAGE_PRE ? in->job->spec->pre_argv :
	    st == LIFE_STAGE_POST        ? in->job->spec->stop_post_argv :
	                                   NULL;
	claim_announce(
	    in, req->cgroup_fd > 0 ? req->cgroup_fd : -1, &req->announce);
	return (0);
}

/* The exec outcome, when the spawn could not tell: its report pipe. */
void
run_report_watch(struct inst *in, const struct spawn_result *res)
{
	if (res->done)
		return;
	(void)fcntl(res->report_fd, F_SETFL, O_NONBLOCK);
	evloop_io(&in->run.report, res->report_fd, EPOLLIN, run_report, in);
	run_nspawning++;
}

/* The child is forked: the run is on record and watched. */
static void
run_started(struct inst *in, enum life_stage st, const struct spawn_result *res)
{
	/* vigild was suspended until the exec: the run starts now. */
	in->run.started = monotime_now();
	in->run.pid = res->pid;
	in->run.pgid = res->pid;
	in->run.starttime = res->starttime;
	ready_session_add(in);
	state_run_begin(in);
	run_leader_watch(in);
	run_write_holder(in);
	run_report_watch(in, res);
	log_info("%s: started pid %ld", in->label, (long)in->run.pid);
	joblog_mark(
	    in, "started pid %ld run %s", (long)in->run.pid, in->run.id);
	if (st == LIFE_STAGE_PRE)
		joblog_mark(in, "exec_start_pre: pid %ld", (long)in->run.pid);
}

/* Fork the leader of the run's stage st. */
int
run_spawn(
    struct inst *in, enum life_stage st, struct spawn_result *res, char **cause)
{
	struct spawn_request req;
	char *env[RUN_ENV_MAX] = { NULL };
	int fds[2], r;
	size_t i;

	if (run_request(in, st, &req, fds, env, cause) == -1)
		return (-1);
	r = spawn_start(&req, res, cause);
	for (i = 0; i < RUN_ENV_MAX; i++)
		free(env[i]);
	joblog_child_fds_close(fds);
	if (req.stdin_fd != -1)
		close(req.stdin_fd);
	if (r == -1) {
		joblog_inst_release(in);
		run_stdin_close(in);
	}
	return (r);
}

/*
 * Fork a run of the instance, from its first command st (exec_start_pre
 * or the command); its lock is held.  Return 0 with *done set when the
 * exec outcome is known already (*exec_cause: why it failed, or NULL),
 * or -1 with *cause when nothing was forked.
 */
int
run_begin(struct inst *in, enum life_stage st, char **cause, int *done,
    char **exec_cause)
{
	struct spawn_result res;

	ready_forget(in);
	snprintf(in->run.id, sizeof(in->run.id), "%08" PRIx32 "%08" PRIx32,
	    arc4random(), arc4random());
	free(in->run.step_failed);
	in->run.step_failed = NULL;
	in->run.born = proc_boot_ticks();
	in->run.refused = 0;
	lineage_clear(in);
	if (run_spawn(in, st, &res, cause) == -1)
		return (-1);
	run_started(in, st, &res);
	*done = res.done;
	*exec_cause = res.cause;
	return (0);
}

/*
 * The MAINPID= the job named, if it may carry the run on once its leader
 * is reaped: another process of the leader's session.  Else 0.  Asked
 * once per reap.
 */
static pid_t
run_mainpid(struct inst *in)
{
	pid_t m = in->run.mainpid;

	in->run.mainpid = 0;
	if (m <= 0 || m == in->run.pid || getsid(m) != in->run.pgid)
		return (0);
	return (m);
}

/* The instance whose run vigild follows as pid, or NULL. */
struct inst *
run_find(pid_t pid)
{
	struct child *c = child_find(pid);

	if (c == NULL || c->kind != CHILD_RUN)
		return (NULL);
	return (child_owner(c, struct inst, run.leader));
}

/*
 * The leader of an instance's run was reaped with wait status status:
 * its exec report is taken in first (a failure the report still held is
 * the run's, said at the end), then the lifecycle decides what follows.
 */
static void
run_reaped(struct child *c, pid_t pid, int status)
{
	struct inst *in = child_owner(c, struct inst, run.leader);
	struct inst_event e;
	char *cause = NULL;

	(void)pid;
	in->run.last_status = status;
	if (in->run.report != NULL) {
		if (spawn_report_read(
		        sd_event_source_get_io_fd(in->run.report), &cause) == 1)
			inst_exec_failed(in, cause, 1);
		free(cause);
		run_report_close(in);
	}
	memset(&e, 0, sizeof(e));
	e.in.ev = LIFE_EV_REAPED;
	e.in.status = status;
	e.mainpid = run_mainpid(in);
	e.in.mainpid = e.mainpid != 0;
	inst_feed_event(in, &e);
}

/* Forget the run of an instance that goes away. */
void
run_clear(struct inst *in)
{
	run_report_close(in);
	run_stdin_close(in);
	in->run.stage_timer =
	    sd_event_source_disable_unref(in->run.stage_timer);
	free(in->run.step_failed);
	in->run.step_failed = NULL;
	prober_forget(in);
	poststart_forget(in);
	joblog_inst_release(in);
	ready_forget(in);
	track_release(in);
	lineage_clear(in);
	xsetf(&in->last.what, NULL);
	child_unwatch(&in->run.leader);
}
