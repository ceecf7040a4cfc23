/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The stages of a run, carried out as lib/life-run.c decides them
 * (run_stage): exec_start_pre before the command, the command itself,
 * the daemon a forking job's starter leaves (its pid_file, or the only
 * process left in its cgroup; or the MAINPID= it names), and
 * exec_stop_post after.  Each stage's leader is forked by run.c
 * (run_spawn) and reaped there; this file decides nothing: what follows
 * a stage is the lifecycle's.  exec_start_post, which runs beside the
 * command, is poststart.c's.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "duration.h"
#include "effects.h"
#include "inst.h"
#include "jobs.h"
#include "log.h"
#include "monotime.h"
#include "proc.h"
#include "run-int.h"
#include "safedir.h"
#include "spawn.h"
#include "xmalloc.h"

/*
 * LIFE_S_MAINPID: the leader exited, but the job named another of its
 * processes with MAINPID= (a daemon that forks): that one is the run
 * now.  It was reparented to vigild, the subreaper, so its exit is
 * reaped here too.
 */
static void
run_mainpid_takes_over(struct inst *in, pid_t m)
{
	log_info("%s: pid %ld exited; MAINPID %ld carries on", in->label,
	    (long)in->run.pid, (long)m);
	in->run.pid = m;
	in->run.starttime = 0; /* not the spawned leader's */
	run_leader_watch(in);
	run_write_holder(in);
}

/* The pid in a forking job's pid_file, or 0. */
static pid_t
run_pid_file(const struct inst *in)
{
	const char *path = in->job->spec->pid_file;
	char buf[32];
	ssize_t n;
	long v;
	int fd;

	if (path == NULL ||
	    (fd = safedir_open_path(
	         path, O_RDONLY | O_CLOEXEC | O_NONBLOCK, NULL)) == -1)
		return (0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return (0);
	buf[n] = '\0';
	v = strtol(buf, NULL, 10);
	return (v > 1 && kill((pid_t)v, 0) == 0 ? (pid_t)v : 0);
}

/*
 * Without a cgroup: why m, named by the pid_file, is not the run's
 * daemon, or NULL when it may be.  The run's daemon was handed to vigild
 * (the subreaper) when its starter exited, was born during this run, runs
 * as the job's user, and is neither another run's leader nor in another
 * run's session.
 */
static const char *
run_pid_foreign(struct inst *in, pid_t m, char *buf, size_t len)
{
	const struct job_spec *spec = in->job->spec;
	struct inst *o;
	uint64_t st;
	uid_t ruid, euid;
	pid_t pp, sid;

	if (proc_ppid(m, &pp) == -1 || pp != getpid())
		return ("not a child of vigild");
	if (((o = run_find(m)) != NULL ||
	        (proc_sid(m, &sid) == 0 &&
	            (o = ready_session_find(sid)) != NULL)) &&
	    o != in) {
		snprintf(buf, len, "a process of %s", o->label);
		return (buf);
	}
	if (in->run.born != 0 &&
	    (proc_starttime(m, &st) == -1 || st < in->run.born))
		return ("started before this run");
	if (spec->has_uid &&
	    (proc_uids(m, &ruid, &euid) == -1 || ruid != spec->uid ||
	        euid != spec->uid))
		return ("not running as the job's user");
	return (NULL);
}

/*
 * The daemon of a forking job whose starter exited 0: the pid in
 * pid_file if it is one of the run's; without a pid_file, the only
 * process left in the cgroup; else 0.  One of the run's: a member of its
 * cgroup, or without one, what run_pid_foreign accepts; a pid_file naming
 * any other process is not believed (said once), so that a job cannot
 * point vigild's signals at a process it does not own.
 */
static pid_t
run_forking_main(struct inst *in)
{
	pid_t m = run_pid_file(in), *pids;
	const char *why;
	char buf[128];
	size_t n, i;
	int member = 0;

	if (in->cg_fd == -1) {
		if (m == 0 ||
		    (why = run_pid_foreign(in, m, buf, sizeof(buf))) == NULL)
			return (m);
		if (in->run.refused != m)
			log_warnx(
			    "%s: pid_file %s names pid %ld, not a process "
			    "of this run (%s): not believed",
			    in->label, in->job->spec->pid_file, (long)m, why);
		in->run.refused = m;
		return (0);
	}
	if (track_members(in, &pids, &n) == -1)
		return (0);
	for (i = 0; i < n && m != 0; i++)
		member |= pids[i] == m;
	if (in->job->spec->pid_file == NULL)
		m = n == 1 ? pids[0] : 0;
	else if (!member)
		m = 0;
	free(pids);
	/* Never a pid another instance follows: its reap is not ours. */
	if (m != 0 && run_find(m) != NULL && run_find(m) != in)
		m = 0;
	return (m);
}

/* The run's daemon is m: it is the run now, and the run is ready. */
static void
run_forking_main_found(struct inst *in, pid_t m)
{
	log_info("%s: starter pid %ld exited 0; daemon pid %ld", in->label,
	    (long)in->run.pid, (long)m);
	in->run.pid = m;
	in->run.starttime = 0;
	/*
	 * Without a cgroup, a stop goes to the daemon's own group.  The
	 * session tree is keyed on pgid: out while it changes.
	 */
	if (in->cg_fd == -1) {
		ready_session_remove(in);
		if (proc_pgid(m, &in->run.pgid) == -1)
			in->run.pgid = m;
		ready_session_add(in);
	}
	run_leader_watch(in);
	run_write_holder(in);
	inst_feed(in, LIFE_EV_MAINPID);
}

/* LIFE_S_FIND: look for the daemon of a forking job whose starter ended. */
static void
run_find_daemon(struct inst *in)
{
	pid_t m = run_forking_main(in);

	if (m != 0)
		run_forking_main_found(in, m);
	else
		inst_feed(in, LIFE_EV_NO_DAEMON);
}

/* LIFE_S_NO_DAEMON: the daemon of a forking job was never found. */
static void
run_no_daemon(struct inst *in)
{
	char *cause = NULL;

	xasprintf(&cause,
	    "the starter exited 0 but no daemon pid of the job was found "
	    "(pid_file %s)",
	    in->job->spec->pid_file ? in->job->spec->pid_file : "none");
	inst_exec_said(in, cause, 0);
	free(cause);
}

/* How a step's leader ended, in words: "exited 1", "killed by SIGTERM". */
static void
run_step_what(int status, char *what, size_t len)
{
	char sig[64];

	job_exit_describe(status, sig, sizeof(sig));
	if (WIFEXITED(status))
		snprintf(what, len, "exited %d", WEXITSTATUS(status));
	else
		snprintf(what, len, "killed by %s", sig);
}

/* LIFE_S_KILL: exec_start_pre or exec_stop_post outlived stop_timeout. */
static void
run_step_kill(struct inst *in, enum life_stage st)
{
	const char *name =
	    st == LIFE_STAGE_PRE ? "exec_start_pre" : "exec_stop_post";
	char d[32];

	duration_format(in->job->spec->stop_timeout, d, sizeof(d));
	log_warnx("%s: %s still running after stop_timeout (%s): killing it",
	    in->label, name, d);
	joblog_mark(in,
	    "%s still running after stop_timeout (%s): sending KILL", name, d);
	if (st == LIFE_STAGE_PRE && in->run.step_failed == NULL)
		xasprintf(&in->run.step_failed,
		    "exec_start_pre still running after stop_timeout (%s)", d);
	run_signal(in, SIGKILL);
}

/* LIFE_S_PRE_FAILED: exec_start_pre failed, or a stop came: no command. */
static void
run_pre_failed(struct inst *in)
{
	char what[80];

	joblog_inst_drain(in); /* its output before what follows */
	if (in->run.step_failed == NULL) {
		run_step_what(in->run.last_status, what, sizeof(what));
		xasprintf(&in->run.step_failed, "exec_start_pre %s", what);
	}
	joblog_mark(in, "%s", in->run.step_failed);
}

/* LIFE_S_POST_ENDED: exec_stop_post ended; said if it failed. */
static void
run_post_ended(struct inst *in)
{
	int status = in->run.last_status;
	char what[80];

	joblog_inst_drain(in);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return;
	run_step_what(status, what, sizeof(what));
	log_warnx("%s: exec_stop_post %s", in->label, what);
	joblog_mark(in, "exec_stop_post: %s", what);
}

/*
 * LIFE_S_MAIN_OVER: the command ended (or exec_start_pre failed): its
 * end is kept for when the run is over; its stdin closes, its output is
 * taken in.
 */
static void
run_main_over(struct inst *in)
{
	in->run.main_status = in->run.last_status;
	in->run.main_ended = monotime_now();
	in->run.main_pid = in->run.pid;
	run_stdin_close(in);
	joblog_inst_drain(in);
}

/* The exec outcome of a step's leader, when its spawn could tell. */
static void
run_exec_outcome(struct inst *in, struct spawn_result *res, int quiet)
{
	if (!res->done)
		return;
	if (res->cause == NULL) {
		inst_feed(in, LIFE_EV_EXEC_OK);
		return;
	}
	inst_exec_failed(in, res->cause, quiet);
	free(res->cause);
	res->cause = NULL;
}

/* The leader of the next stage was forked: the run follows it. */
static void
run_step_leader(
    struct inst *in, const struct spawn_result *res, const char *what)
{
	ready_session_remove(in);
	in->run.pid = res->pid;
	in->run.pgid = res->pid;
	in->run.starttime = res->starttime;
	ready_session_add(in);
	run_leader_watch(in);
	run_write_holder(in);
	run_report_watch(in, res);
	log_info("%s: %s pid %ld", in->label, what, (long)res->pid);
	joblog_mark(in, "%s: pid %ld", what, (long)res->pid);
}

/*
 * LIFE_S_COMMAND: exec_start_pre exited 0: the command leads the run
 * now, and its exec outcome goes to the lifecycle as the run's.
 */
static void
run_command(struct inst *in)
{
	struct spawn_result res;
	char *cause = NULL;

	joblog_inst_drain(in); /* exec_start_pre's output first */
	if (run_spawn(in, LIFE_STAGE_MAIN, &res, &cause) == -1) {
		free(in->run.step_failed);
		in->run.step_failed = cause;
		inst_feed(in, LIFE_EV_STEP_FAILED);
		return;
	}
	run_step_leader(in, &res, "command");
	run_exec_outcome(in, &res, 0);
}

/* LIFE_S_POST: the command is over: exec_stop_post leads the run. */
static void
run_post(struct inst *in)
{
	struct spawn_result res;
	char *cause = NULL;

	if (run_spawn(in, LIFE_STAGE_POST, &res, &cause) == -1) {
		log_warnx("%s: exec_stop_post: %s", in->label, cause);
		joblog_mark(in, "exec_stop_post: %s", cause);
		free(cause);
		inst_feed(in, LIFE_EV_STEP_FAILED);
		return;
	}
	run_step_leader(in, &res, "exec_stop_post");
	run_exec_outcome(in, &res, 1);
}

/*
 * LIFE_S_END: the run is over; its end is the command's (main_status,
 * main_ended), and the lifecycle takes it as LIFE_EV_EXIT.
 */
static void
run_finish(struct inst *in)
{
	free(in->run.step_failed);
	in->run.step_failed = NULL;
	in->run.pid = in->run.main_pid;
	inst_exited(
	    in, in->run.main_status, in->run.main_ended - in->run.started);
}

/* Carry out what the run's stages decided (LIFE_S_*), in their order. */
void
run_stage(
    struct inst *in, const struct inst_event *e, const struct life_step *st)
{
	unsigned int a = st->sactions;

	if ((a & LIFE_S_CAUSE) && in->run.step_failed == NULL &&
	    e->cause != NULL)
		in->run.step_failed = xstrdup(e->cause);
	if (a & LIFE_S_MAINPID)
		run_mainpid_takes_over(in, e->mainpid);
	if (a & LIFE_S_KILL)
		run_step_kill(in, st->stage);
	if (a & LIFE_S_PRE_FAILED)
		run_pre_failed(in);
	if (a & LIFE_S_POST_ENDED)
		run_post_ended(in);
	if (a & LIFE_S_NO_DAEMON)
		run_no_daemon(in);
	if (a & LIFE_S_MAIN_OVER)
		run_main_over(in);
	if ((a & LIFE_S_FAILED) && in->run.step_failed != NULL)
		inst_exec_said(in, in->run.step_failed, 0);
	if (a & LIFE_S_COMMAND)
		run_command(in);
	else if (a & LIFE_S_POST)
		run_post(in);
	else if (a & LIFE_S_FIND)
		run_find_daemon(in);
	else if (a & LIFE_S_END)
		run_finish(in);
}
