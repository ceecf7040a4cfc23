/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Supervision: the glue between events (a child exited, a timer fired, an
 * operator asked) and effects (fork, signals, lock files, timers).  Policy
 * comes from job_decide() in lib/job.c; this file only applies it.
 *
 * Life of an instance: start takes its lock file (or goes BLOCKED while a
 * leftover holder is reclaimed), forks, and is STARTING until the child
 * has exec'd (known when vfork returns, else when the exec report pipe
 * closes), then RUNNING.  When the leader exits, the decision is
 * made at once but applied only after the rest of its process group is
 * gone, so a restart never overlaps a straggler.  The instance keeps its
 * lock from start until it is inactive again.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "duration.h"
#include "log.h"
#include "notify.h"
#include "proc.h"
#include "signame.h"
#include "spawn.h"
#include "vigild.h"
#include "xmalloc.h"

/* Quick looks at a lock that a child about to exec may still hold. */
#define SUPERVISE_QUICK_RETRY (1 * DURATION_USEC_PER_MSEC)
#define SUPERVISE_QUICK_RETRIES 50

/* Poll interval bounds while BLOCKED or waiting for a killed group. */
#define SUPERVISE_RECHECK_MIN (50 * DURATION_USEC_PER_MSEC)
#define SUPERVISE_RECHECK_MAX (2 * DURATION_USEC_PER_SEC)

RB_HEAD(pid_tree, inst);
RB_PROTOTYPE(pid_tree, inst, pid_entry, inst_pid_cmp)

static int
job_cmp(struct job *a, struct job *b)
{
	return (strcmp(a->name, b->name));
}
RB_GENERATE(job_tree, job, entry, job_cmp)

static int
inst_pid_cmp(struct inst *a, struct inst *b)
{
	return (a->pid < b->pid ? -1 : a->pid > b->pid);
}
RB_GENERATE(pid_tree, inst, pid_entry, inst_pid_cmp)

static struct pid_tree supervise_pids = RB_INITIALIZER(&supervise_pids);
static sd_event_source *supervise_clock; /* keeps sd-event's timerfd */
static unsigned int supervise_nspawning; /* children not yet exec'd */
static TAILQ_HEAD(, inst) supervise_dep_waits = TAILQ_HEAD_INITIALIZER(
    supervise_dep_waits);
static sd_event_source *supervise_dep_check; /* deferred recheck */
static TAILQ_HEAD(, inst) supervise_group_waits = TAILQ_HEAD_INITIALIZER(
    supervise_group_waits);

static void supervise_spawn(struct inst *);
static void supervise_try_start(struct inst *);
static void supervise_apply(struct inst *, const struct job_decision *);
static void supervise_group_gone(struct inst *);
static void supervise_job_settle_later(struct job *);
static void supervise_write_holder(struct inst *);
static void inst_sid_remove(struct inst *);
static void supervise_job_down(struct job *);
static void supervise_extend_timeout(void);
static void supervise_deps_recheck_later(void);
static void inst_dep_unwait(struct inst *);
static void inst_stdin_close(struct inst *);

/* Return CLOCK_MONOTONIC in microseconds. */
uint64_t
supervise_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * DURATION_USEC_PER_SEC +
	    (uint64_t)ts.tv_nsec / 1000);
}

/* Replace the reason text of an instance (NULL clears it). */
static void inst_reason(struct inst *in, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
inst_reason(struct inst *in, const char *fmt, ...)
{
	va_list ap;

	free(in->reason);
	in->reason = NULL;
	if (fmt == NULL)
		return;
	va_start(ap, fmt);
	if (vasprintf(&in->reason, fmt, ap) == -1)
		fatal("vasprintf");
	va_end(ap);
}

/*
 * Move an instance to a new state: keep the count of active instances,
 * wake clients waiting on it, and finish a shutdown when the last instance
 * goes inactive.
 */
static void
inst_set_state(struct inst *in, enum job_state s)
{
	int was = job_state_is_active(in->state);
	int now = job_state_is_active(s);

	if (in->state != s)
		log_debug("%s: %s -> %s", in->label, job_state_name(in->state),
		    job_state_name(s));
	vigild.nstate[in->state]--;
	vigild.nstate[s]++;
	in->state = s;
	in->since = supervise_now();
	supervise_status_changed();
	if (was && !now) {
		vigild.nactive--;
		if (--in->job->nactive == 0 && vigild.shutting_down)
			supervise_job_down(in->job);
	} else if (!was && now) {
		vigild.nactive++;
		in->job->nactive++;
	}
	if (s == JOB_RUNNING && !TAILQ_EMPTY(&supervise_dep_waits))
		supervise_deps_recheck_later();
	server_waiters_notify(in);
	if (was && !now && (in->job->next_spec != NULL || in->job->retiring))
		supervise_job_settle_later(in->job);
	if (vigild.shutting_down && vigild.nactive == 0)
		sd_event_exit(vigild.event, 0);
}

/* Set the instance's reason (NULL clears it), from outside this file. */
void
inst_reason_set(struct inst *in, const char *reason)
{
	if (reason == NULL)
		inst_reason(in, NULL);
	else
		inst_reason(in, "%s", reason);
}

/* Move an instance to a new state, from outside this file. */
void
supervise_inst_set_state(struct inst *in, enum job_state s)
{
	inst_set_state(in, s);
}

static void
inst_timer_cancel(struct inst *in)
{
	in->timer = sd_event_source_disable_unref(in->timer);
}

/* Arm the instance's one timer to call cb after usec microseconds. */
static void
inst_timer_arm(struct inst *in, uint64_t usec, sd_event_time_handler_t cb)
{
	int r;

	inst_timer_cancel(in);
	r = sd_event_add_time_relative(
	    vigild.event, &in->timer, CLOCK_MONOTONIC, usec, 1, cb, in);
	if (r < 0)
		fatalx("%s: sd_event_add_time_relative: %s", __func__,
		    strerror(-r));
}

static void
inst_report_close(struct inst *in)
{
	int fd;

	if (in->report == NULL)
		return;
	supervise_nspawning--;
	fd = sd_event_source_get_io_fd(in->report);
	in->report = sd_event_source_disable_unref(in->report);
	close(fd);
}

/* Give up the instance's lock: clear our record and close both files. */
static void
inst_lock_release(struct inst *in)
{
	if (in->record_fd != -1) {
		if (in->lock_fd != -1)
			(void)lock_holder_clear(in->record_fd);
		close(in->record_fd);
		in->record_fd = -1;
	}
	if (in->lock_fd == -1)
		return;
	close(in->lock_fd);
	in->lock_fd = -1;
}

/* The instance's lock file (suffix ".lock") or record (".holder"). */
static char *
inst_lock_path(const struct inst *in, const char *suffix)
{
	char *path;

	xasprintf(
	    &path, "%s/locks/%s%s", vigild.runtime_dir, in->label, suffix);
	return (path);
}

/* Signal the instance's process group (or only the leader). */
static void
inst_kill(struct inst *in, int sig)
{
	pid_t pgid = in->pgid != 0 ? in->pgid : in->pid;

	if (in->job->spec->kill_group && pgid > 1) {
		if (proc_group_signal(pgid, sig) == 0)
			return;
		if (errno != ESRCH)
			log_warn("%s: kill -%s group %ld", in->label,
			    signame_name(sig), (long)pgid);
		/* No group yet: the child has not called setsid(). */
	}
	if (in->pid > 0 && kill(in->pid, sig) == -1 && errno != ESRCH)
		log_warn("%s: kill -%s %ld", in->label, signame_name(sig),
		    (long)in->pid);
}

/* After SIGKILL: poll for group members that were not our descendants. */
static int
supervise_stop_poll(sd_event_source *s, uint64_t usec, void *arg)
{
	struct inst *in = arg;

	inst_timer_cancel(in);
	if (in->group_wait && !proc_group_exists(in->pgid)) {
		supervise_group_gone(in);
		return (0);
	}
	inst_kill(in, SIGKILL);
	inst_timer_arm(in, SUPERVISE_RECHECK_MAX, supervise_stop_poll);
	return (0);
}

/* Stop timeout expired: SIGKILL what is left. */
static int
supervise_kill_timeout(sd_event_source *s, uint64_t usec, void *arg)
{
	struct inst *in = arg;
	char buf[32];

	inst_timer_cancel(in);
	log_warnx(
	    "%s: still running after stop_timeout, sending KILL", in->label);
	in->killed = 1;
	output_mark(in, "still running after stop_timeout (%s): sending KILL",
	    duration_format(in->job->spec->stop_timeout, buf, sizeof(buf)));
	inst_kill(in, SIGKILL);
	/* Each reaped member's SIGCHLD rechecks the group; this is a net. */
	inst_timer_arm(in, SUPERVISE_RECHECK_MAX, supervise_stop_poll);
	return (0);
}

/*
 * Begin stopping the processes of a running instance: stop_signal to the
 * group (or leader), SIGKILL after stop_timeout.
 */
static void
inst_terminate(struct inst *in)
{
	const struct job_spec *spec = in->job->spec;

	inst_set_state(in, JOB_STOPPING);
	if (in->killed)
		return;
	output_mark(in, "stopping: sending %s to %s %ld",
	    signame_name(spec->stop_signal),
	    spec->kill_group ? "process group" : "pid",
	    (long)(in->pgid != 0 ? in->pgid : in->pid));
	inst_kill(in, spec->stop_signal);
	if (spec->stop_signal != SIGKILL && spec->stop_signal != SIGCONT)
		inst_kill(in, SIGCONT);
	inst_timer_arm(in, spec->stop_timeout, supervise_kill_timeout);
}

/* A queue run outlived its drain: stop it; its message is released. */
static int
supervise_drain_timeout(sd_event_source *s, uint64_t usec, void *arg)
{
	struct inst *in = arg;
	char buf[32];

	inst_timer_cancel(in);
	duration_format(in->job->spec->drain_timeout, buf, sizeof(buf));
	log_warnx("%s: message %" PRId64 " still running after drain_timeout "
	          "(%s): stopping it",
	    in->label, in->msg.id, buf);
	in->drain_killed = 1;
	inst_terminate(in);
	return (0);
}

/*
 * Stop a queue run gently: no signal, the run may finish its message
 * within drain_timeout; after that it is stopped as any run.  With a
 * drain_timeout of 0, stop_signal goes at once, as a request to cancel:
 * the message is released unless the run still ends in success.
 */
static void
inst_drain(struct inst *in)
{
	const struct job_spec *spec = in->job->spec;
	char buf[32];

	inst_set_state(in, JOB_STOPPING);
	if (in->killed || in->drain_killed)
		return;
	if (spec->drain_timeout == 0) {
		output_mark(in,
		    "stopping: asking message %" PRId64 " to cancel",
		    in->msg.id);
		in->drain_killed = 1;
		inst_terminate(in);
		return;
	}
	duration_format(spec->drain_timeout, buf, sizeof(buf));
	output_mark(in,
	    "stopping: letting message %" PRId64 " finish (up to %s)",
	    in->msg.id, buf);
	inst_timer_arm(in, spec->drain_timeout, supervise_drain_timeout);
}

/* Stop the run of an instance but keep wanting it (periodic timeout). */
void
supervise_inst_terminate(struct inst *in)
{
	inst_terminate(in);
}

/* Once the leader and its group are gone, apply the pending decision. */
static void
supervise_group_gone(struct inst *in)
{
	struct job_decision d = in->pending;

	if (in->group_wait) {
		TAILQ_REMOVE(&supervise_group_waits, in, gw_entry);
		in->group_wait = 0;
	}
	inst_timer_cancel(in);
	inst_sid_remove(in);
	in->pgid = 0;
	in->killed = 0;
	supervise_apply(in, &d);
}

/* Recheck every instance whose leader is gone but whose group was not. */
static void
supervise_check_groups(void)
{
	struct inst *in, *tmp;

	TAILQ_FOREACH_SAFE(in, &supervise_group_waits, gw_entry, tmp) {
		if (!proc_group_exists(in->pgid))
			supervise_group_gone(in);
	}
}

/* Describe how a run ended, into buf. */
static const char *
inst_describe_end(struct inst *in, int status, char *buf, size_t len)
{
	char what[64];

	if (in->exec_failed && in->reason != NULL)
		return (in->reason);
	snprintf(buf, len, "%s", job_exit_describe(status, what, sizeof(what)));
	return (buf);
}

/* Sessions of running instances, for the sender check of notify.sock. */
static int
inst_sid_cmp(struct inst *a, struct inst *b)
{
	return (a->pgid < b->pgid ? -1 : a->pgid > b->pgid);
}
RB_HEAD(sid_tree, inst);
RB_PROTOTYPE(sid_tree, inst, sid_entry, inst_sid_cmp)
RB_GENERATE(sid_tree, inst, sid_entry, inst_sid_cmp)
static struct sid_tree supervise_sids = RB_INITIALIZER(&supervise_sids);

static void
inst_sid_add(struct inst *in)
{
	if (RB_INSERT(sid_tree, &supervise_sids, in) != NULL)
		log_warnx(
		    "%s: session %ld already known", in->label, (long)in->pgid);
}

static void
inst_sid_remove(struct inst *in)
{
	struct inst key;

	if (in->pgid == 0)
		return;
	memset(&key, 0, sizeof(key));
	key.pgid = in->pgid;
	if (RB_FIND(sid_tree, &supervise_sids, &key) == in)
		RB_REMOVE(sid_tree, &supervise_sids, in);
}

/* Forget what the job said during its last run. */
static void
inst_notify_reset(struct inst *in)
{
	in->ready_seen = 0;
	in->ready_timed_out = 0;
	in->watchdog_fired = 0;
	in->notify_errno = 0;
	in->mainpid = 0;
	free(in->status);
	in->status = NULL;
	in->watchdog = sd_event_source_disable_unref(in->watchdog);
}

/* No WATCHDOG=1 in time: stop the run; the restart policy does the rest. */
static int
supervise_watchdog_expired(sd_event_source *s, uint64_t usec, void *arg)
{
	struct inst *in = arg;
	char buf[32];

	in->watchdog = sd_event_source_disable_unref(in->watchdog);
	if (in->state != JOB_RUNNING)
		return (0);
	if (in->job->spec->watchdog > 0 && s != NULL)
		log_warnx("%s: no WATCHDOG=1 within %s: stopping it", in->label,
		    duration_format(in->job->spec->watchdog, buf, sizeof(buf)));
	else
		log_warnx("%s: WATCHDOG=trigger: stopping it", in->label);
	in->watchdog_fired = 1;
	inst_reason(in, "watchdog");
	inst_terminate(in);
	return (0);
}

static void
inst_watchdog_arm(struct inst *in)
{
	int r;

	if (in->job->spec->watchdog == 0)
		return;
	in->watchdog = sd_event_source_disable_unref(in->watchdog);
	r = sd_event_add_time_relative(vigild.event, &in->watchdog,
	    CLOCK_MONOTONIC, in->job->spec->watchdog, 1000,
	    supervise_watchdog_expired, in);
	if (r < 0)
		fatalx("%s: sd_event_add_time_relative: %s", __func__,
		    strerror(-r));
}

/* No READY=1 within ready_timeout: a failed start. */
static int
supervise_ready_expired(sd_event_source *s, uint64_t usec, void *arg)
{
	struct inst *in = arg;
	char buf[32];

	inst_timer_cancel(in);
	if (in->state != JOB_STARTING || in->pid == 0)
		return (0);
	log_warnx("%s: no READY=1 within ready_timeout (%s): stopping it",
	    in->label,
	    duration_format(in->job->spec->ready_timeout, buf, sizeof(buf)));
	in->ready_timed_out = 1;
	inst_reason(in, "ready timeout");
	inst_terminate(in);
	return (0);
}

/* The job said READY=1. */
static void
supervise_inst_ready(struct inst *in)
{
	if (in->ready_seen || in->state != JOB_STARTING || in->pid == 0)
		return;
	in->ready_seen = 1;
	inst_timer_cancel(in);
	inst_reason(in, NULL);
	log_info("%s: ready", in->label);
	inst_set_state(in, JOB_RUNNING);
	state_run_ready(in);
	inst_watchdog_arm(in);
}

/* Apply one message of an instance's processes. */
static void
supervise_notify_apply(struct inst *in, const struct notify_msg *m)
{
	if (m->status != NULL) {
		free(in->status);
		in->status = xstrdup(m->status);
	}
	if (m->has_errno)
		in->notify_errno = m->errnum;
	if (m->mainpid != 0) {
		if (getsid(m->mainpid) == in->pgid) {
			in->mainpid = m->mainpid;
			log_debug("%s: main pid is now %ld", in->label,
			    (long)m->mainpid);
		} else
			log_warnx("%s: MAINPID=%ld is not one of its "
			          "processes; ignored",
			    in->label, (long)m->mainpid);
	}
	if (m->ready && in->job->spec->ready == CONF_READY_NOTIFY)
		supervise_inst_ready(in);
	if (m->watchdog && in->watchdog != NULL)
		inst_watchdog_arm(in);
	if (m->watchdog_trigger && in->state == JOB_RUNNING)
		supervise_watchdog_expired(NULL, 0, in);
	if (m->stopping)
		log_debug("%s: says it is stopping", in->label);
}

/* Which instance a datagram came from: its sender's session, or NULL. */
static struct inst *
supervise_notify_sender(pid_t pid)
{
	struct inst key;
	pid_t sid;

	if (pid <= 0 || (sid = getsid(pid)) <= 0)
		return (NULL);
	memset(&key, 0, sizeof(key));
	key.pgid = sid;
	return (RB_FIND(sid_tree, &supervise_sids, &key));
}

/*
 * A datagram on notify.sock.  It counts only if its sender (by the
 * kernel's SCM_CREDENTIALS) is in the session of a running instance: as
 * root, systemd-notify reports its parent's pid, and forking daemons send
 * from grandchildren, so the whole session is accepted, as systemd's
 * NotifyAccess=all within a service's cgroup.
 */
static int
supervise_notify_event(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	char buf[NOTIFY_MAX_DATAGRAM + 1];
	struct notify_msg m;
	struct inst *in;
	ssize_t n;
	pid_t pid;
	uid_t uid;

	for (;;) {
		n = notify_recv(fd, buf, sizeof(buf), &pid, &uid);
		if (n == -1) {
			if (errno != EAGAIN && errno != EINTR)
				log_warn("notify socket");
			return (0);
		}
		if ((in = supervise_notify_sender(pid)) == NULL ||
		    notify_parse(buf, (size_t)n, &m) == -1) {
			vigild.notify_garbage++;
			log_debug("notify: datagram from pid %ld ignored "
			          "(%llu so far)",
			    (long)pid,
			    (unsigned long long)vigild.notify_garbage);
			continue;
		}
		supervise_notify_apply(in, &m);
		notify_msg_clear(&m);
	}
}

/* Bind RUNTIME/notify.sock, the NOTIFY_SOCKET of ready = "notify" jobs. */
void
supervise_notify_open(void)
{
	char *cause = NULL;
	int r;

	xasprintf(&vigild.notify_path, "%s/notify.sock", vigild.runtime_dir);
	if ((vigild.notify_fd = notify_open(vigild.notify_path, &cause)) == -1)
		fatalx("readiness socket %s", cause);
	r = sd_event_add_io(vigild.event, &vigild.notify_src, vigild.notify_fd,
	    EPOLLIN, supervise_notify_event, NULL);
	if (r < 0)
		fatalx("sd_event_add_io: %s", strerror(-r));
}

/*
 * How a run ended, in the one wording that history (state.db), vigild's
 * log and the job's log share: "exited 3", "killed by signal KILL",
 * "failed to start: CAUSE", "stopped by operator (signal TERM)",
 * "restarted (exit 0)", "stopped at shutdown (...)", "timed out (signal
 * TERM)", "ready timeout (...)", "watchdog (...)"; " after stop_timeout"
 * inside the parentheses when SIGKILL had to follow.  Into buf.
 */
static const char *
supervise_end_describe(
    const struct inst *in, int status, int stopped, char *buf, size_t len)
{
	const char *why = NULL;
	char what[64];

	if (in->exec_failed) {
		snprintf(buf, len, "failed to start: %s",
		    in->reason != NULL ? in->reason : "exec failed");
		return (buf);
	}
	job_exit_describe(status, what, sizeof(what));
	if (in->ready_timed_out)
		why = "ready timeout";
	else if (in->watchdog_fired)
		why = "watchdog";
	else if (in->timed_out)
		why = "timed out";
	else if (stopped && vigild.shutting_down)
		why = "stopped at shutdown";
	else if (stopped && in->held)
		why = "stopped by operator";
	else if (stopped && in->start_after_stop)
		why = "restarted";
	else if (stopped)
		why = "stopped";
	if (why != NULL)
		snprintf(buf, len, "%s (%s%s)", why, what,
		    in->killed ? " after stop_timeout" : "");
	else if (WIFEXITED(status))
		snprintf(buf, len, "exited %d", WEXITSTATUS(status));
	else
		snprintf(buf, len, "killed by %s", what);
	return (buf);
}

/*
 * The leader exited, but the job named another of its processes with
 * MAINPID= (a daemon that forks): that one is the run now.  It was
 * reparented to vigild, the subreaper, so its exit is reaped here too.
 */
static int
supervise_mainpid_takes_over(struct inst *in)
{
	pid_t m = in->mainpid;

	in->mainpid = 0;
	if (m <= 0 || m == in->pid || getsid(m) != in->pgid)
		return (0);
	log_info("%s: pid %ld exited; main pid %ld carries on", in->label,
	    (long)in->pid, (long)m);
	in->pid = m;
	in->starttime = 0; /* not the spawned leader's */
	RB_INSERT(pid_tree, &supervise_pids, in);
	supervise_write_holder(in);
	return (1);
}

/* The leader of an instance was reaped with the given wait status. */
/* The end of a run (see supervise_end_describe), in the job's log. */
static void
supervise_mark_end(struct inst *in, const char *end, uint64_t uptime)
{
	char up[32];

	duration_format(uptime / 1000 * 1000, up, sizeof(up));
	output_mark(in, "pid %ld %s after %s", (long)in->pid, end, up);
}

static void
supervise_reaped(struct inst *in, int status)
{
	struct job_outcome o;
	struct job_decision d;
	char buf[256], endbuf[512], up[32];
	const char *end;
	uint64_t now = supervise_now();

	RB_REMOVE(pid_tree, &supervise_pids, in);
	if (supervise_mainpid_takes_over(in))
		return;
	inst_stdin_close(in);
	output_inst_drain(in);
	in->watchdog = sd_event_source_disable_unref(in->watchdog);
	if (in->report != NULL) {
		char *cause = NULL;

		if (spawn_report_read(
		        sd_event_source_get_io_fd(in->report), &cause) == 1) {
			in->exec_failed = 1;
			inst_reason(in, "%s", cause);
			free(cause);
		}
		inst_report_close(in);
	}
	memset(&o, 0, sizeof(o));
	o.exec_failed = in->exec_failed;
	o.status = status;
	o.uptime = now - in->started;
	o.failures = in->failures;
	o.stop_requested = in->stop_requested || in->start_after_stop ||
	    vigild.shutting_down || !in->want;
	o.never_ready = in->job->spec->ready == CONF_READY_NOTIFY &&
	    !in->ready_seen && !in->exec_failed;
	o.watchdog = in->watchdog_fired;
	job_decide(in->job->spec, &o, arc4random(), &d);

	end = supervise_end_describe(
	    in, status, o.stop_requested, endbuf, sizeof(endbuf));
	state_run_end(in, status, end);
	if (in->job->spec->kind == CONF_KIND_QUEUE)
		dispatch_run_end(in, status, d.success);
	in->has_exit = !in->exec_failed;
	in->last_status = status;
	in->failures = d.failures;
	supervise_mark_end(in, end, o.uptime);
	output_inst_release(in);
	log_info("%s: pid %ld %s after %s", in->label, (long)in->pid, end,
	    duration_format(o.uptime / 1000 * 1000, up, sizeof(up)));
	end = inst_describe_end(in, status, buf, sizeof(buf));
	if (in->ready_timed_out || in->watchdog_fired || in->timed_out)
		inst_reason(in, "%s (%s)",
		    in->ready_timed_out    ? "ready timeout" :
		        in->watchdog_fired ? "watchdog" :
		                             "timeout",
		    end);
	else if (!in->exec_failed || in->reason == NULL)
		inst_reason(in, "%s", end);
	in->pid = 0;
	in->pending = d;

	if (in->job->spec->kill_group && proc_group_exists(in->pgid)) {
		in->group_wait = 1;
		TAILQ_INSERT_TAIL(&supervise_group_waits, in, gw_entry);
		if (in->state != JOB_STOPPING) {
			log_info("%s: stopping what is left of process group "
			         "%ld",
			    in->label, (long)in->pgid);
			inst_terminate(in);
		}
		return;
	}
	supervise_group_gone(in);
}

/* Backoff delay over: start again. */
static int
supervise_backoff_done(sd_event_source *s, uint64_t usec, void *arg)
{
	struct inst *in = arg;

	inst_timer_cancel(in);
	if (vigild.shutting_down || !in->want) {
		/* A dependency waiting to be stopped at shutdown. */
		inst_lock_release(in);
		inst_set_state(in, JOB_STOPPED);
		return (0);
	}
	if (in->job->spec->kind == CONF_KIND_QUEUE) {
		supervise_try_start(in); /* the slot, then a message */
		return (0);
	}
	supervise_spawn(in);
	return (0);
}

/* Apply a decision made when a run ended. */
static void
supervise_apply(struct inst *in, const struct job_decision *d)
{
	char buf[32];

	in->deadline = sd_event_source_disable_unref(in->deadline);
	switch (d->state) {
	case JOB_STARTING:
		in->restarts++;
		supervise_spawn(in);
		break;
	case JOB_BACKOFF:
		in->restarts++;
		in->delay = d->delay;
		in->next_start = supervise_now() + d->delay;
		log_info("%s: restarting in %s (failed start %u)", in->label,
		    duration_format(d->delay, buf, sizeof(buf)), d->failures);
		inst_set_state(in, JOB_BACKOFF);
		inst_timer_arm(in, d->delay, supervise_backoff_done);
		break;
	case JOB_FATAL:
		log_warnx("%s: FATAL after %u failed starts in a row: %s",
		    in->label, d->failures, in->reason ? in->reason : "");
		inst_lock_release(in);
		in->want = 0;
		inst_set_state(in, JOB_FATAL);
		break;
	case JOB_STOPPED:
	case JOB_EXITED:
	case JOB_WAITING:
		in->stop_requested = 0;
		if (in->start_after_stop && !vigild.shutting_down) {
			/* A start or restart arrived during the stop. */
			in->start_after_stop = 0;
			in->failures = 0;
			supervise_try_start(in);
			break;
		}
		in->start_after_stop = 0;
		if (d->state == JOB_WAITING &&
		    in->job->spec->kind == CONF_KIND_QUEUE) {
			/* A free slot keeps its lock: the next message. */
			dispatch_slot_ready(in);
			break;
		}
		inst_lock_release(in);
		if (d->state == JOB_EXITED)
			in->want = 0;
		inst_set_state(in, d->state);
		break;
	default:
		fatalx("%s: bad decision %d", __func__, d->state);
	}
}

/* The child exec'd (cause NULL) or failed before it (cause says why). */
static void
supervise_exec_done(struct inst *in, const char *cause)
{
	if (cause != NULL) {
		in->exec_failed = 1;
		log_warnx("%s: %s", in->label, cause);
		inst_reason(in, "%s", cause);
		return;
	}
	/* With ready = "notify", READY=1 makes it RUNNING. */
	if (in->state == JOB_STARTING &&
	    in->job->spec->ready == CONF_READY_EXEC) {
		inst_reason(in, NULL);
		inst_set_state(in, JOB_RUNNING);
		state_run_ready(in);
	}
}

/* Exec report readable: EOF means exec succeeded, text is a failure. */
static int
supervise_report(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	struct inst *in = arg;
	char *cause = NULL;

	switch (spawn_report_read(fd, &cause)) {
	case -1:
		if (errno == EAGAIN || errno == EINTR)
			return (0);
		log_warn("%s: exec report", in->label);
		break;
	case 0:
		supervise_exec_done(in, NULL);
		break;
	case 1:
		supervise_exec_done(in, cause);
		free(cause);
		break;
	}
	inst_report_close(in);
	return (0);
}

/* A start that failed before fork counts as a failed start. */
static void
supervise_spawn_failed(struct inst *in, const char *cause)
{
	struct job_outcome o;
	struct job_decision d;

	inst_stdin_close(in);
	log_warnx("%s: cannot start: %s", in->label, cause);
	output_mark(in, "cannot start: %s", cause);
	inst_reason(in, "%s", cause);
	memset(&o, 0, sizeof(o));
	o.exec_failed = 1;
	o.failures = in->failures;
	o.stop_requested = !in->want || vigild.shutting_down;
	job_decide(in->job->spec, &o, arc4random(), &d);
	in->failures = d.failures;
	if (in->job->spec->kind == CONF_KIND_QUEUE) {
		/* Not the message's fault: it goes back; the slot rests. */
		dispatch_run_end(in, -1, 0);
		if (d.state == JOB_WAITING)
			d.state = JOB_STARTING;
	}
	if (d.state == JOB_STARTING) {
		/* Never retry a start that failed before fork in a loop. */
		d.state = JOB_BACKOFF;
		d.delay = SUPERVISE_RECHECK_MAX;
	}
	supervise_apply(in, &d);
}

/* Record the new leader in the lock file. */
static void
supervise_write_holder(struct inst *in)
{
	struct lock_holder h;

	h.pid = in->pid;
	h.pgid = in->pgid;
	h.vigild = getpid();
	if (in->pid == in->pgid && in->starttime != 0)
		h.starttime = in->starttime; /* known from the spawn */
	else if (proc_starttime(in->pid, &h.starttime) == -1)
		h.starttime = 0;
	if (lock_holder_write(in->record_fd, &h) == -1)
		log_warn("%s: write lock record", in->label);
}

/*
 * The payload of a queue slot's message as a file for the child's stdin:
 * a memfd, so a payload of any size needs no writer and no pipe.
 */
static int
supervise_payload_fd(struct inst *in, char **cause)
{
	const char *p = in->msg.payload;
	size_t left = in->msg.len;
	ssize_t n;
	int fd;

	if ((fd = memfd_create("vigil-payload", MFD_CLOEXEC)) == -1) {
		xasprintf(cause, "memfd_create: %s", strerror(errno));
		return (-1);
	}
	while (left > 0) {
		n = write(fd, p, left);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			xasprintf(cause, "payload: %s", strerror(errno));
			close(fd);
			return (-1);
		}
		p += n;
		left -= (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) == -1) {
		xasprintf(cause, "payload: %s", strerror(errno));
		close(fd);
		return (-1);
	}
	return (fd);
}

/* The run is over: the write end of its stdin pipe goes (EOF). */
static void
inst_stdin_close(struct inst *in)
{
	if (in->stdin_fd != -1)
		close(in->stdin_fd);
	in->stdin_fd = -1;
}

/*
 * The child's stdin in *fdp: a queue message's payload, the read end of a
 * pipe whose write end the instance keeps until the run ends (stdin =
 * "pipe": nothing is written, the job sees no EOF while it runs), or -1
 * for /dev/null.  Return 0, or -1 with *cause set.
 */
static int
supervise_stdin_fd(struct inst *in, int *fdp, char **cause)
{
	int p[2];

	*fdp = -1;
	if (in->job->spec->kind == CONF_KIND_QUEUE) {
		*fdp = supervise_payload_fd(in, cause);
		return (*fdp == -1 ? -1 : 0);
	}
	if (in->job->spec->input != CONF_STDIN_PIPE)
		return (0);
	if (pipe2(p, O_CLOEXEC) == -1) {
		xasprintf(cause, "stdin pipe: %s", strerror(errno));
		return (-1);
	}
	inst_stdin_close(in);
	in->stdin_fd = p[1];
	*fdp = p[0];
	return (0);
}

/* Fork the instance; its lock is already held. */
static void
supervise_spawn(struct inst *in)
{
	const struct job_spec *spec = in->job->spec;
	struct spawn_request req;
	struct spawn_result res;
	char *cause = NULL, *env[3] = { NULL, NULL, NULL };
	int fds[2], r, in_fd = -1;

	if (in->lock_fd == -1) {
		/* Never a run without its lock: take it first. */
		supervise_try_start(in);
		return;
	}
	inst_notify_reset(in);
	snprintf(in->run_id, sizeof(in->run_id), "%08" PRIx32 "%08" PRIx32,
	    arc4random(), arc4random());
	if (supervise_stdin_fd(in, &in_fd, &cause) == -1) {
		supervise_spawn_failed(in, cause);
		free(cause);
		return;
	}
	if (output_child_fds(in, fds, &cause) == -1) {
		if (in_fd != -1)
			close(in_fd);
		supervise_spawn_failed(in, cause);
		free(cause);
		return;
	}
	memset(&req, 0, sizeof(req));
	req.spec = spec;
	req.instance = in->index;
	req.run_id = in->run_id;
	req.lock_fd = in->lock_fd;
	req.stdout_fd = fds[0];
	req.stderr_fd = fds[1];
	req.stdin_fd = in_fd;
	if (spec->kind == CONF_KIND_QUEUE) {
		xasprintf(&env[0], "VIGIL_MESSAGE_ID=%" PRId64, in->msg.id);
		xasprintf(&env[1], "VIGIL_ATTEMPT=%d", in->msg.attempts);
		req.extra_env = env;
	} else if (spec->ready == CONF_READY_NOTIFY) {
		xasprintf(&env[0], "NOTIFY_SOCKET=%s", vigild.notify_path);
		if (spec->watchdog > 0)
			xasprintf(&env[1], "WATCHDOG_USEC=%" PRIu64,
			    (uint64_t)spec->watchdog);
		req.extra_env = env;
	}
	r = spawn_start(&req, &res, &cause);
	free(env[0]);
	free(env[1]);
	output_child_fds_close(fds);
	if (in_fd != -1)
		close(in_fd);
	if (r == -1) {
		output_inst_release(in);
		supervise_spawn_failed(in, cause);
		free(cause);
		return;
	}
	/* vigild was suspended until the exec: the run starts now. */
	in->started = supervise_now();
	in->pid = res.pid;
	in->pgid = res.pid;
	in->starttime = res.starttime;
	inst_sid_add(in);
	state_run_begin(in);
	if (spec->ready == CONF_READY_NOTIFY && spec->ready_timeout > 0)
		inst_timer_arm(
		    in, spec->ready_timeout, supervise_ready_expired);
	in->exec_failed = 0;
	in->killed = 0;
	RB_INSERT(pid_tree, &supervise_pids, in);
	supervise_write_holder(in);
	if (!res.done) {
		(void)fcntl(res.report_fd, F_SETFL, O_NONBLOCK);
		r = sd_event_add_io(vigild.event, &in->report, res.report_fd,
		    EPOLLIN, supervise_report, in);
		if (r < 0)
			fatalx(
			    "%s: sd_event_add_io: %s", __func__, strerror(-r));
		supervise_nspawning++;
	}
	log_info("%s: started pid %ld", in->label, (long)in->pid);
	output_mark(in, "started pid %ld run %s", (long)in->pid, in->run_id);
	periodic_run_started(in);
	inst_set_state(in, JOB_STARTING);
	if (res.done) {
		supervise_exec_done(in, res.cause);
		free(res.cause);
	}
}

/* Double the BLOCKED poll interval, up to SUPERVISE_RECHECK_MAX. */
static void
inst_recheck_grow(struct inst *in)
{
	in->recheck *= 2;
	if (in->recheck > SUPERVISE_RECHECK_MAX)
		in->recheck = SUPERVISE_RECHECK_MAX;
}

/* Poll while BLOCKED: has the leftover holder gone? */
static int
supervise_blocked_recheck(sd_event_source *s, uint64_t usec, void *arg)
{
	struct inst *in = arg;

	inst_timer_cancel(in);
	supervise_try_start(in);
	return (0);
}

/*
 * The lock is held by a leftover of an earlier vigild, proven so: the
 * record that only vigild writes names the group, and the kernel shows
 * holder, a member of it, holding the lock.  Stop that group (stop_signal,
 * SIGKILL after stop_timeout) and poll, with a growing interval, until the
 * lock is free; each poll proves it again before any signal.
 */
static void
supervise_reclaim(struct inst *in, const struct lock_holder *h, pid_t holder)
{
	const struct job_spec *spec = in->job->spec;
	uint64_t now = supervise_now(), delay;

	if (in->state != JOB_BLOCKED || in->leftover.pid != h->pid ||
	    in->leftover.starttime != h->starttime) {
		in->leftover = *h;
		in->killed = 0;
		in->kill_at = now + spec->stop_timeout;
		in->recheck = SUPERVISE_RECHECK_MIN;
		log_warnx("%s: lock held by leftover pid %ld (group %ld) of "
		          "vigild %ld; reclaiming: sending %s",
		    in->label, (long)holder, (long)h->pgid, (long)h->vigild,
		    signame_name(spec->stop_signal));
		inst_reason(in,
		    "lock held by leftover pid %ld of vigild %ld; "
		    "reclaiming",
		    (long)holder, (long)h->vigild);
		inst_set_state(in, JOB_BLOCKED);
		(void)proc_group_signal(h->pgid, spec->stop_signal);
		(void)proc_group_signal(h->pgid, SIGCONT);
	} else {
		if (!in->killed && now >= in->kill_at) {
			log_warnx("%s: leftover pid %ld outlived stop_timeout, "
			          "sending KILL",
			    in->label, (long)holder);
			(void)proc_group_signal(h->pgid, SIGKILL);
			in->killed = 1;
		}
		inst_recheck_grow(in);
	}
	delay = in->recheck;
	if (!in->killed && in->kill_at - now < delay)
		delay = in->kill_at > now ? in->kill_at - now : 1;
	inst_timer_arm(in, delay, supervise_blocked_recheck);
}

/*
 * The lock is held by a process vigild cannot prove it started: never
 * signal it; name it (once, by a scan of /proc) and wait.
 */
static void
supervise_wait_unknown(struct inst *in, int lock_fd)
{
	char who[128];
	pid_t pid;

	if (in->state != JOB_BLOCKED || in->leftover.pid != 0) {
		memset(&in->leftover, 0, sizeof(in->leftover));
		pid = lock_find_holder(lock_fd);
		if (pid != 0)
			proc_describe(pid, who, sizeof(who));
		else
			strlcpy(who, "an unknown process", sizeof(who));
		log_warnx("%s: lock held by %s%s, which this vigild did not "
		          "start; not signalling it, waiting for the lock",
		    in->label, pid != 0 ? "pid " : "", who);
		inst_reason(in,
		    "lock held by %s%s, not started by vigild; "
		    "waiting",
		    pid != 0 ? "pid " : "", who);
		in->recheck = SUPERVISE_RECHECK_MIN;
		inst_set_state(in, JOB_BLOCKED);
	} else
		inst_recheck_grow(in);
	inst_timer_arm(in, in->recheck, supervise_blocked_recheck);
}

/*
 * A job needs the job named name: start its instances that are simply
 * stopped (not by the operator, not given up on), as systemd's Requires=.
 */
static void
supervise_dep_pull(const char *name)
{
	struct job *j;
	int i;

	if ((j = supervise_find_job(name)) == NULL || j->retiring)
		return;
	for (i = 0; i < j->ninsts; i++) {
		if (j->insts[i].state == JOB_STOPPED && !j->insts[i].held)
			supervise_inst_start(&j->insts[i]);
	}
}

/* Return 1 if every instance of the job named name is RUNNING. */
static int
supervise_dep_is_up(const char *name)
{
	struct job *j;
	int i;

	if ((j = supervise_find_job(name)) == NULL || j->retiring)
		return (0);
	for (i = 0; i < j->ninsts; i++) {
		if (j->insts[i].state != JOB_RUNNING)
			return (0);
	}
	return (1);
}

static void
inst_dep_unwait(struct inst *in)
{
	if (!in->dep_wait)
		return;
	TAILQ_REMOVE(&supervise_dep_waits, in, dep_entry);
	in->dep_wait = 0;
}

/*
 * Hold a start back until each job in depends is RUNNING (ready): return
 * 1 and park the instance in STARTING, or 0 when it may start now.
 */
static int
supervise_deps_wait(struct inst *in)
{
	const struct job_spec *spec = in->job->spec;
	size_t i;

	for (i = 0; i < spec->ndepends; i++) {
		if (supervise_dep_is_up(spec->depends[i]))
			continue;
		supervise_dep_pull(spec->depends[i]);
		if (!in->dep_wait) {
			in->dep_wait = 1;
			TAILQ_INSERT_TAIL(&supervise_dep_waits, in, dep_entry);
			log_info(
			    "%s: waiting for %s", in->label, spec->depends[i]);
		}
		inst_reason(in, "waiting for %s", spec->depends[i]);
		if (in->state != JOB_STARTING)
			inst_set_state(in, JOB_STARTING);
		return (1);
	}
	inst_dep_unwait(in);
	return (0);
}

/* Some instance became RUNNING: see which waiting starts may go. */
static int
supervise_deps_recheck(sd_event_source *s, void *arg)
{
	struct inst *in, *tmp;

	supervise_dep_check =
	    sd_event_source_disable_unref(supervise_dep_check);
	TAILQ_FOREACH_SAFE(in, &supervise_dep_waits, dep_entry, tmp)
		supervise_try_start(in);
	return (0);
}

static void
supervise_deps_recheck_later(void)
{
	if (supervise_dep_check != NULL || vigild.shutting_down)
		return;
	if (sd_event_add_defer(vigild.event, &supervise_dep_check,
	        supervise_deps_recheck, NULL) < 0)
		supervise_dep_check = NULL;
}

/*
 * At shutdown, every instance of job j is down: the jobs it depends on
 * may stop once no other active job needs them (reverse order).
 */
static void
supervise_job_down(struct job *j)
{
	struct job *dep;
	size_t d;
	int i;

	for (d = 0; d < j->spec->ndepends; d++) {
		if ((dep = supervise_find_job(j->spec->depends[d])) == NULL ||
		    dep->dependents == 0 || --dep->dependents > 0)
			continue;
		for (i = 0; i < dep->ninsts; i++)
			supervise_inst_stop(&dep->insts[i]);
		/* Each step of a dependency chain may take a stop_timeout. */
		supervise_extend_timeout();
	}
}

/* A message for a lock or record file that failed to open. */
static void
inst_lock_cause(char **cause, const char *what, const char *path)
{
	if (errno == EPERM)
		xasprintf(cause, "%s %s: not a regular file of vigild's user",
		    what, path);
	else
		xasprintf(cause, "%s %s: %s", what, path, strerror(errno));
}

/*
 * Take the instance's lock.  Return 1 when it is ours (lock_fd set, the
 * record blanked), 0 when another open file description holds it (*fdp:
 * our own description of the file, to find out who), or -1 with *cause.
 * lock_fd is set only while the lock is held: no lock, no run.
 */
static int
inst_lock_take(struct inst *in, int *fdp, char **cause)
{
	char *path, *rpath;
	int fd;

	*fdp = -1;
	if (in->lock_fd != -1)
		return (1);
	path = inst_lock_path(in, ".lock");
	rpath = inst_lock_path(in, ".holder");
	if ((fd = lock_open(path)) == -1)
		inst_lock_cause(cause, "open", path);
	else if (in->record_fd == -1 &&
	    (in->record_fd = lock_record_open(rpath)) == -1)
		inst_lock_cause(cause, "open", rpath);
	else if (lock_try(fd) == -1) {
		if (errno == EAGAIN)
			*fdp = fd;
		else
			inst_lock_cause(cause, "lock", path);
	} else if (lock_holder_clear(in->record_fd) == -1)
		inst_lock_cause(cause, "write", rpath);
	free(path);
	free(rpath);
	if (*fdp != -1)
		return (0);
	if (*cause != NULL) {
		if (fd != -1)
			close(fd);
		return (-1);
	}
	/* Whatever an earlier run wrote into the file is of no use. */
	(void)ftruncate(fd, 0);
	in->lock_fd = fd;
	return (1);
}

/* The lock is ours: start the run (or, for a queue slot, get a message). */
static void
supervise_locked_start(struct inst *in)
{
	if (in->state == JOB_BLOCKED)
		log_info("%s: lock reclaimed", in->label);
	inst_timer_cancel(in);
	in->killed = 0;
	in->quick_retries = 0;
	memset(&in->leftover, 0, sizeof(in->leftover));
	if (in->job->spec->kind == CONF_KIND_QUEUE && in->msg.id == 0)
		dispatch_slot_ready(in);
	else
		supervise_spawn(in);
}

/*
 * The lock is held by another description (our own is lock_fd): reclaim
 * it from a proven leftover of ours, or wait for whoever has it.
 */
static void
supervise_lock_held(struct inst *in, int lock_fd)
{
	struct lock_holder h;
	enum lock_holder_status hs = LOCK_HOLDER_GONE;
	pid_t holder = 0;

	if (lock_holder_read(in->record_fd, &h) == 0)
		hs = lock_holder_check(&h, lock_fd, &holder);
	if (hs != LOCK_HOLDER_GONE)
		supervise_reclaim(in, &h, holder);
	else if (supervise_nspawning > 0 && in->state != JOB_BLOCKED &&
	    in->quick_retries < SUPERVISE_QUICK_RETRIES) {
		/*
		 * A child between fork and exec still has copies of all of
		 * vigild's descriptors, perhaps of this lock's previous
		 * description: look again in a moment before calling the lock
		 * taken by a stranger.
		 */
		in->quick_retries++;
		if (in->state != JOB_STARTING)
			inst_set_state(in, JOB_STARTING);
		inst_timer_arm(
		    in, SUPERVISE_QUICK_RETRY, supervise_blocked_recheck);
	} else
		supervise_wait_unknown(in, lock_fd);
}

/* Take the instance's lock, or find out who has it. */
static void
supervise_try_start(struct inst *in)
{
	char *cause = NULL;
	int fd, r;

	if (!in->want || vigild.shutting_down) {
		dispatch_slot_drop(in);
		inst_dep_unwait(in);
		inst_lock_release(in);
		inst_set_state(in, JOB_STOPPED);
		return;
	}
	if (supervise_deps_wait(in))
		return;
	r = inst_lock_take(in, &fd, &cause);
	if (r == -1) {
		/* No lock, no run: the start waits in BACKOFF. */
		inst_lock_release(in);
		supervise_spawn_failed(in, cause);
		free(cause);
	} else if (r == 1)
		supervise_locked_start(in);
	else {
		supervise_lock_held(in, fd);
		close(fd);
	}
}

/* Start an instance that is inactive (or in BACKOFF: start it now). */
void
supervise_inst_start(struct inst *in)
{
	if (in->job->retiring)
		return;
	in->held = 0;
	if (in->job->next_spec != NULL) {
		/* The new spec starts it once the old one is down. */
		in->reload_start = 1;
		return;
	}
	if (in->job->spec->kind == CONF_KIND_PERIODIC) {
		periodic_start(in);
		return;
	}
	if (in->job->spec->kind == CONF_KIND_QUEUE) {
		dispatch_slot_start(in);
		return;
	}
	supervise_inst_launch(in);
}

/*
 * A free queue slot runs its message now.  The slot has held its lock
 * since it was checked for leftovers: no lock or holder check again.
 */
void
supervise_slot_run(struct inst *in)
{
	in->failures = 0;
	in->stop_requested = 0;
	inst_reason(in, NULL);
	if (supervise_deps_wait(in))
		return;
	supervise_spawn(in);
}

/* Start a run of an inactive instance now (or end its BACKOFF). */
void
supervise_inst_launch(struct inst *in)
{
	in->want = 1;
	switch (in->state) {
	case JOB_STOPPED:
	case JOB_EXITED:
	case JOB_FATAL:
	case JOB_WAITING:
		in->failures = 0;
		in->stop_requested = 0;
		inst_reason(in, NULL);
		supervise_try_start(in);
		break;
	case JOB_BACKOFF:
		inst_timer_cancel(in);
		supervise_spawn(in);
		break;
	case JOB_STOPPING:
		/* Start again once the stop is complete. */
		in->start_after_stop = 1;
		if (in->group_wait)
			in->pending.state = JOB_STOPPED;
		break;
	default:
		break;
	}
}

/*
 * Stop an instance: processes get stop_signal then SIGKILL; a pending
 * restart or reclaim is cancelled.
 */
void
supervise_inst_stop(struct inst *in)
{
	in->want = 0;
	periodic_disarm(in);
	switch (in->state) {
	case JOB_STARTING:
		if (in->pid == 0) {
			/* Waiting for its lock or dependencies: none runs. */
			dispatch_slot_drop(in);
			inst_dep_unwait(in);
			inst_timer_cancel(in);
			inst_lock_release(in);
			inst_set_state(in, JOB_STOPPED);
			break;
		}
		/* FALLTHROUGH */
	case JOB_RUNNING:
		in->stop_requested = 1;
		if (in->job->spec->kind == CONF_KIND_QUEUE)
			inst_drain(in);
		else
			inst_terminate(in);
		break;
	case JOB_STOPPING:
		in->stop_requested = 1;
		in->start_after_stop = 0;
		if (in->group_wait)
			in->pending.state = JOB_STOPPED;
		break;
	case JOB_BACKOFF:
	case JOB_BLOCKED:
		dispatch_slot_drop(in);
		inst_timer_cancel(in);
		inst_lock_release(in);
		inst_reason(in, "stopped while %s", job_state_name(in->state));
		inst_set_state(in, JOB_STOPPED);
		break;
	case JOB_WAITING:
		inst_lock_release(in); /* a free queue slot holds one */
		inst_reason(in, NULL);
		inst_set_state(in, JOB_STOPPED);
		break;
	default:
		break;
	}
}

static int
supervise_stable_reached(sd_event_source *s, uint64_t usec, void *arg)
{
	struct inst *in = arg;

	in->stable = sd_event_source_disable_unref(in->stable);
	server_waiters_notify(in);
	return (0);
}

/*
 * Return 1 if the current run has lasted min_uptime.  If not, make sure
 * the instance's waiters are woken when it has: only clients waiting for
 * a start pay for that timer.
 */
int
supervise_inst_is_stable(struct inst *in)
{
	uint64_t now = supervise_now(), at;
	int r;

	at = in->started + in->job->spec->min_uptime;
	if (in->pid == 0 || now >= at)
		return (1);
	if (in->stable == NULL) {
		r = sd_event_add_time(vigild.event, &in->stable,
		    CLOCK_MONOTONIC, at, 1000, supervise_stable_reached, in);
		if (r < 0)
			fatalx("%s: sd_event_add_time: %s", __func__,
			    strerror(-r));
	}
	return (0);
}

static int
supervise_status_send(sd_event_source *s, uint64_t usec, void *arg)
{
	const size_t *n = vigild.nstate;

	vigild.status_timer =
	    sd_event_source_disable_unref(vigild.status_timer);
	(void)sd_notifyf(0,
	    "STATUS=%zu running, %zu starting, %zu backoff, %zu failed, "
	    "%zu stopping, %zu stopped",
	    n[JOB_RUNNING], n[JOB_STARTING] + n[JOB_BLOCKED], n[JOB_BACKOFF],
	    n[JOB_FATAL], n[JOB_STOPPING], n[JOB_STOPPED] + n[JOB_EXITED]);
	return (0);
}

/*
 * The counts of instances per state changed: tell systemd (STATUS=), at
 * most every 250 ms, so a thousand jobs starting make one message, not a
 * thousand.  Nothing is armed when vigild does not run under systemd.
 */
void
supervise_status_changed(void)
{
	if (!vigild.under_systemd || vigild.status_timer != NULL ||
	    vigild.event == NULL)
		return;
	if (sd_event_add_time_relative(vigild.event, &vigild.status_timer,
	        CLOCK_MONOTONIC, 250 * DURATION_USEC_PER_MSEC,
	        50 * DURATION_USEC_PER_MSEC, supervise_status_send, NULL) < 0)
		vigild.status_timer = NULL;
}

/* Send a signal to an instance's processes, if it has any. */
void
supervise_inst_signal(struct inst *in, int sig)
{
	if (in->pid > 0)
		inst_kill(in, sig);
}

/* SIGCHLD: reap every child that has exited, ours or reparented. */
static int
supervise_sigchld(
    sd_event_source *s, const struct signalfd_siginfo *si, void *arg)
{
	struct inst key, *in;
	pid_t pid;
	int status;

	state_batch_begin();
	for (;;) {
		pid = waitpid(-1, &status, WNOHANG);
		if (pid == -1 && errno == EINTR)
			continue;
		if (pid <= 0)
			break;
		memset(&key, 0, sizeof(key));
		key.pid = pid;
		if ((in = RB_FIND(pid_tree, &supervise_pids, &key)) != NULL)
			supervise_reaped(in, status);
		else
			log_debug(
			    "reaped pid %ld (not a job leader)", (long)pid);
	}
	supervise_check_groups();
	state_batch_end();
	return (0);
}

/* How many instances a spec makes: copies, or a queue's slots. */
static int
supervise_spec_ninsts(const struct job_spec *spec)
{
	return (spec->kind == CONF_KIND_QUEUE ? spec->concurrency :
	                                        spec->instances);
}

/* Make the instances of a job from its spec. */
static void
supervise_job_build(struct job *j)
{
	struct inst *in;
	int i;

	j->ninsts = supervise_spec_ninsts(j->spec);
	j->insts = xcalloc((size_t)j->ninsts, sizeof(*j->insts));
	output_job_attach(j);
	for (i = 0; i < j->ninsts; i++) {
		in = &j->insts[i];
		in->job = j;
		in->index = i;
		if (j->ninsts > 1)
			xasprintf(&in->label, "%s@%d", j->name, i);
		else
			in->label = xstrdup(j->name);
		in->lock_fd = in->record_fd = in->stdin_fd = -1;
		in->state = JOB_STOPPED;
		vigild.nstate[JOB_STOPPED]++;
		in->since = supervise_now();
		TAILQ_INIT(&in->waiters);
	}
}

/* Free an array of instances; each must be inactive. */
static void
supervise_insts_free(struct inst *insts, int n)
{
	struct inst *in;
	int i;

	for (i = 0; i < n; i++) {
		in = &insts[i];
		vigild.nstate[in->state]--;
		inst_dep_unwait(in);
		inst_sid_remove(in);
		inst_notify_reset(in);
		server_waiters_cancel(in);
		inst_timer_cancel(in);
		in->stable = sd_event_source_disable_unref(in->stable);
		inst_report_close(in);
		inst_lock_release(in);
		inst_stdin_close(in);
		output_inst_release(in);
		periodic_disarm(in);
		if (in->group_wait)
			TAILQ_REMOVE(&supervise_group_waits, in, gw_entry);
		if (in->pid > 0)
			RB_REMOVE(pid_tree, &supervise_pids, in);
		dispatch_slot_drop(in);
		free(in->label);
		free(in->reason);
	}
	free(insts);
}

/* Free the instances of a job (at exit, or once all are inactive). */
static void
supervise_job_unbuild(struct job *j)
{
	supervise_insts_free(j->insts, j->ninsts);
	j->insts = NULL;
	j->ninsts = 0;
}

static void
supervise_job_free(struct job *j)
{
	supervise_job_unbuild(j);
	dispatch_job_free(j);
	output_job_detach(j);
	j->settle = sd_event_source_disable_unref(j->settle);
	RB_REMOVE(job_tree, &vigild.jobs, j);
	vigild.njobs--;
	job_spec_free(j->spec);
	job_spec_free(j->next_spec);
	free(j->name);
	free(j);
}

/* Create the run-time record of a job from its spec (which it now owns). */
void
supervise_add_job(struct job_spec *spec)
{
	struct job *j;

	j = xcalloc(1, sizeof(*j));
	j->name = xstrdup(spec->name);
	j->spec = spec;
	supervise_job_build(j);
	if (RB_INSERT(job_tree, &vigild.jobs, j) != NULL)
		fatalx("%s: duplicate job %s", __func__, j->name);
	vigild.njobs++;
}

/* Start every instance of a job that is meant to start on its own. */
void
supervise_job_start(struct job *j)
{
	int i;

	/* The operator's word, kept in state.db, beats autostart. */
	for (i = 0; i < j->ninsts; i++) {
		if (j->insts[i].held ||
		    (!j->spec->autostart && !j->insts[i].by_hand))
			continue;
		if (j->spec->kind == CONF_KIND_PERIODIC)
			periodic_arm(&j->insts[i]);
		else
			supervise_inst_start(&j->insts[i]);
	}
}

static int
supervise_job_is_idle(const struct job *j)
{
	int i;

	for (i = 0; i < j->ninsts; i++) {
		if (job_state_is_active(j->insts[i].state))
			return (0);
	}
	return (1);
}

/*
 * Which instances of the new spec start after a reload swap: instance N
 * starts if the old instance N was running or meant to run, or if it is
 * new and the job starts on its own; never if the operator stopped it.
 */
static int *
supervise_job_swap_starts(const struct job *j, const struct job_spec *next)
{
	const struct inst *old;
	int *start, i, n;

	n = supervise_spec_ninsts(next);
	start = xcalloc((size_t)n, sizeof(*start));
	for (i = 0; i < n; i++) {
		if (i >= j->ninsts) {
			start[i] = next->autostart;
			continue;
		}
		old = &j->insts[i];
		start[i] = !old->held && (old->reload_start || next->autostart);
	}
	return (start);
}

/*
 * Every instance of a job that reload changed or removed has stopped: swap
 * in the new spec and start what should run, or free the job.
 */
static int
supervise_job_settle(sd_event_source *s, void *arg)
{
	struct job *j = arg;
	struct inst *old;
	int *start, i, oldn;

	j->settle = sd_event_source_disable_unref(j->settle);
	if (!supervise_job_is_idle(j) || vigild.shutting_down)
		return (0);
	if (j->retiring) {
		log_info("%s: removed", j->name);
		supervise_job_free(j);
		return (0);
	}
	if (j->next_spec == NULL)
		return (0);
	start = supervise_job_swap_starts(j, j->next_spec);
	old = j->insts;
	oldn = j->ninsts;
	job_spec_free(j->spec);
	j->spec = j->next_spec;
	j->next_spec = NULL;
	supervise_job_build(j);
	/* Instance N carries over the operator's stop and its waiters. */
	for (i = 0; i < oldn && i < j->ninsts; i++) {
		j->insts[i].held = old[i].held;
		server_waiters_move(&old[i], &j->insts[i]);
	}
	supervise_insts_free(old, oldn);
	log_info("%s: new configuration applied", j->name);
	for (i = 0; i < j->ninsts; i++) {
		if (!start[i])
			continue;
		if (j->spec->kind == CONF_KIND_PERIODIC)
			periodic_arm(&j->insts[i]);
		else
			supervise_inst_start(&j->insts[i]);
	}
	free(start);
	return (0);
}

/* Settle the job from the event loop, not from deep inside a transition. */
static void
supervise_job_settle_later(struct job *j)
{
	int r;

	if (j->settle != NULL || !supervise_job_is_idle(j))
		return;
	r = sd_event_add_defer(
	    vigild.event, &j->settle, supervise_job_settle, j);
	if (r < 0)
		fatalx("%s: sd_event_add_defer: %s", __func__, strerror(-r));
}

/*
 * Reload: replace a job's spec (next != NULL; the job owns it now) or
 * remove the job (next == NULL).  Its instances are stopped; the swap or
 * removal happens once all are down.
 */
void
supervise_job_replace(struct job *j, struct job_spec *next)
{
	struct inst *in;
	int i;

	job_spec_free(j->next_spec);
	j->next_spec = next;
	j->retiring = next == NULL;
	for (i = 0; i < j->ninsts; i++) {
		in = &j->insts[i];
		if (!in->reload_start)
			in->reload_start =
			    in->want || job_state_is_active(in->state);
		supervise_inst_stop(in);
	}
	supervise_job_settle_later(j);
}

/* Look a job up by name; borrowed pointer or NULL. */
struct job *
supervise_find_job(const char *name)
{
	struct job key;

	memset(&key, 0, sizeof(key));
	key.name = (char *)name;
	return (RB_FIND(job_tree, &vigild.jobs, &key));
}

/* Start every instance of every autostart job. */
void
supervise_start_all(void)
{
	struct job *j;

	state_batch_begin(); /* one commit for every run begun */
	RB_FOREACH(j, job_tree, &vigild.jobs)
		supervise_job_start(j);
	state_batch_end();
	vigild.started = 1;
}

/*
 * Tell systemd how long the stops may take: the longest stop_timeout of
 * an active instance, plus a margin for SIGKILL and reaping.
 */
static void
supervise_extend_timeout(void)
{
	struct job *j;
	uint64_t longest = 0, t;
	int i;

	if (!vigild.under_systemd)
		return;
	RB_FOREACH(j, job_tree, &vigild.jobs) {
		for (i = 0; i < j->ninsts; i++) {
			/* A queue run drains, then is stopped. */
			t = j->spec->stop_timeout;
			if (j->spec->kind == CONF_KIND_QUEUE)
				t += j->spec->drain_timeout;
			if (job_state_is_active(j->insts[i].state) &&
			    t > longest)
				longest = t;
		}
	}
	(void)sd_notifyf(0, "EXTEND_TIMEOUT_USEC=%" PRIu64,
	    (uint64_t)(longest + 5 * DURATION_USEC_PER_SEC));
}

/*
 * Stop every instance in parallel; the loop exits when the last active
 * instance has become inactive.
 */
void
supervise_shutdown(void)
{
	struct job *j, *dep;
	size_t d;
	int i;

	if (vigild.shutting_down)
		return;
	vigild.shutting_down = 1;
	log_info(
	    "shutting down: stopping %zu active instances", vigild.nactive);
	(void)sd_notify(0, "STOPPING=1");
	supervise_extend_timeout();
	supervise_dep_check =
	    sd_event_source_disable_unref(supervise_dep_check);
	/* Count, for each job, the active jobs that depend on it. */
	RB_FOREACH(j, job_tree, &vigild.jobs)
		j->dependents = 0;
	RB_FOREACH(j, job_tree, &vigild.jobs) {
		if (j->nactive == 0)
			continue;
		for (d = 0; d < j->spec->ndepends; d++) {
			if ((dep = supervise_find_job(j->spec->depends[d])) !=
			    NULL)
				dep->dependents++;
		}
	}
	/* Stop the jobs nothing active needs; the rest follow in turn. */
	RB_FOREACH(j, job_tree, &vigild.jobs) {
		if (j->dependents > 0)
			continue;
		for (i = 0; i < j->ninsts; i++)
			supervise_inst_stop(&j->insts[i]);
	}
	if (vigild.nactive == 0)
		sd_event_exit(vigild.event, 0);
}

/* Free all jobs (at exit, after every instance stopped). */
void
supervise_free_all(void)
{
	struct job *j, *tmp;

	RB_FOREACH_SAFE(j, job_tree, &vigild.jobs, tmp)
		supervise_job_free(j);
	supervise_clock = sd_event_source_disable_unref(supervise_clock);
	supervise_dep_check =
	    sd_event_source_disable_unref(supervise_dep_check);
	vigild.notify_src = sd_event_source_disable_unref(vigild.notify_src);
	if (vigild.notify_fd != -1)
		close(vigild.notify_fd);
	vigild.notify_fd = -1;
	free(vigild.notify_path);
	vigild.notify_path = NULL;
	vigild.status_timer =
	    sd_event_source_disable_unref(vigild.status_timer);
}

static int
supervise_sigterm(
    sd_event_source *s, const struct signalfd_siginfo *si, void *arg)
{
	log_info("received %s", signame_name((int)si->ssi_signo));
	supervise_shutdown();
	return (0);
}

static int
supervise_sighup(
    sd_event_source *s, const struct signalfd_siginfo *si, void *arg)
{
	struct reload_report r;
	size_t i;

	log_info("received HUP: reloading %s", vigild.jobs_dir);
	if (reload_run(0, &r) == -1) {
		for (i = 0; i < r.errors.n; i++)
			log_warnx("%s", r.errors.msgs[i]);
	}
	reload_report_clear(&r);
	return (0);
}

static int
supervise_sigusr2(
    sd_event_source *s, const struct signalfd_siginfo *si, void *arg)
{
	log_info("received USR2: reopening log files");
	(void)output_reopen_all();
	return (0);
}

static int
supervise_never(sd_event_source *s, uint64_t usec, void *arg)
{
	return (0);
}

/*
 * A signal vigild blocks only so that it cannot end it (vigild.c): say so
 * the first time each one comes, then ignore it quietly.
 */
static int
supervise_sigignore(
    sd_event_source *s, const struct signalfd_siginfo *si, void *arg)
{
	static unsigned char seen[_NSIG];
	int sig = (int)si->ssi_signo;
	const char *name = signame_name(sig);

	if (sig <= 0 || sig >= _NSIG || seen[sig]) {
		log_debug(
		    "ignoring signal %d from pid %ld", sig, (long)si->ssi_pid);
		return (0);
	}
	seen[sig] = 1;
	if (name != NULL)
		log_info("ignoring SIG%s (from pid %ld); not logged again",
		    name, (long)si->ssi_pid);
	else
		log_info("ignoring signal %d (from pid %ld); not logged again",
		    sig, (long)si->ssi_pid);
	return (0);
}

/*
 * Read every other signal main blocked through the loop too, and ignore
 * it: a blocked signal left unread would stay pending for ever.
 */
static void
supervise_sig_ignore_rest(void)
{
	sigset_t blocked;
	int sig, r;

	if (sigprocmask(SIG_BLOCK, NULL, &blocked) == -1)
		fatal("sigprocmask");
	for (sig = 1; sig < _NSIG; sig++) {
		if (sigismember(&blocked, sig) != 1 || sig == SIGCHLD ||
		    sig == SIGTERM || sig == SIGINT || sig == SIGHUP ||
		    sig == SIGUSR2)
			continue;
		if ((r = sd_event_add_signal(vigild.event, NULL, sig,
		         supervise_sigignore, NULL)) < 0)
			fatalx("sd_event_add_signal %d: %s", sig, strerror(-r));
	}
}

/*
 * Set up supervision: become a child subreaper and route SIGCHLD, SIGTERM,
 * SIGINT, SIGHUP and SIGUSR2 through the event loop (main blocks them),
 * and with them the signals main blocks only to ignore them.
 */
void
supervise_init(void)
{
	int r;

	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		log_warn("prctl(PR_SET_CHILD_SUBREAPER)");
	vigild.under_systemd = getenv("NOTIFY_SOCKET") != NULL;
	/* WATCHDOG=1 pings when systemd set WATCHDOG_USEC for us. */
	if ((r = sd_event_set_watchdog(vigild.event, 1)) < 0)
		log_warnx("sd_event_set_watchdog: %s", strerror(-r));
	else if (r > 0)
		log_info("systemd watchdog enabled");
	/*
	 * sd-event makes its CLOCK_MONOTONIC timerfd with the first timer.
	 * Make it now: a stop timeout must never fail later for want of a
	 * file descriptor.
	 */
	if ((r = sd_event_add_time(vigild.event, &supervise_clock,
	         CLOCK_MONOTONIC, UINT64_MAX, 0, supervise_never, NULL)) < 0 ||
	    (r = sd_event_source_set_enabled(supervise_clock, SD_EVENT_OFF)) <
	        0)
		fatalx("sd_event_add_time: %s", strerror(-r));
	if ((r = sd_event_add_signal(
	         vigild.event, NULL, SIGCHLD, supervise_sigchld, NULL)) < 0 ||
	    (r = sd_event_add_signal(
	         vigild.event, NULL, SIGTERM, supervise_sigterm, NULL)) < 0 ||
	    (r = sd_event_add_signal(
	         vigild.event, NULL, SIGINT, supervise_sigterm, NULL)) < 0 ||
	    (r = sd_event_add_signal(
	         vigild.event, NULL, SIGHUP, supervise_sighup, NULL)) < 0 ||
	    (r = sd_event_add_signal(
	         vigild.event, NULL, SIGUSR2, supervise_sigusr2, NULL)) < 0)
		fatalx("sd_event_add_signal: %s", strerror(-r));
	supervise_sig_ignore_rest();
}
