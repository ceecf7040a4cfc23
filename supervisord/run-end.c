/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The end of a run, in one wording: run_describe makes it ("exited 3",
 * "killed by signal KILL", "stopped by operator (signal TERM)", ...) and
 * run_end (LIFE_A_RECORD_END) writes it everywhere it goes: history,
 * vigild's log, the job's log, the kind, the reason status shows.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/wait.h>

#include <stdint.h>
#include <stdio.h>

#include "cluster.h"
#include "duration.h"
#include "effects.h"
#include "inst.h"
#include "job.h"
#include "jobs.h"
#include "log.h"
#include "state.h"
#include "vigild.h"
#include "xmalloc.h"

/*
 * The run was stopped for a reason of its own: "ready timeout",
 * "watchdog", "unhealthy", or timeout (the word given), or the OOM killer took a
 * process of it ("oom"); else NULL.
 */
static const char *
run_cause(const struct inst *in, const char *timeout)
{
	switch (in->life.cause) {
	case LIFE_CAUSE_READY_TIMEOUT:
		return ("ready timeout");
	case LIFE_CAUSE_WATCHDOG:
		return ("watchdog");
	case LIFE_CAUSE_UNHEALTHY:
		return ("unhealthy");
	case LIFE_CAUSE_TIMEOUT:
		return (timeout);
	case LIFE_CAUSE_FENCE:
		return ("fenced");
	default:
		return (in->run.oom ? "oom" : NULL);
	}
}

/*
 * How a run ended, in the one wording that history (state.db), vigild's
 * log and the job's log share: "exited 3", "killed by signal KILL",
 * "failed to start: CAUSE", "stopped by operator (signal TERM)",
 * "restarted (exit 0)", "stopped at shutdown (...)", "timed out (signal
 * TERM)", "ready timeout (...)", "watchdog (...)", "oom (signal KILL)"; " after stop_timeout"
 * inside the parentheses when SIGKILL had to follow.  Into buf.
 */
const char *
run_describe(const struct inst *in, int status, const struct life_step *st,
    char *buf, size_t len)
{
	const char *why = NULL;
	char what[64];
	int stopped = st->stop_asked, killed = st->from == LIFE_KILL;

	if (in->life.exec_failed) {
		snprintf(buf, len, "failed to start: %s",
		    in->reason != NULL ? in->reason : "exec failed");
		return (buf);
	}
	job_exit_describe(status, what, sizeof(what));
	why = run_cause(in, "timed out");
	if (why == NULL && stopped)
		why = vigild.shutting_down ? "stopped at shutdown" :
		    in->life.intent == LIFE_INTENT_DOWN ?
		                             "stopped by operator" :
		    st->then == LIFE_THEN_START ? "restarted" :
		                                  "stopped";
	if (why != NULL)
		snprintf(buf, len, "%s (%s%s)", why, what,
		    killed ? " after stop_timeout" : "");
	else if (WIFEXITED(status))
		snprintf(buf, len, "exited %d", WEXITSTATUS(status));
	else
		snprintf(buf, len, "killed by %s", what);
	return (buf);
}

/* The reason status shows after the run: the end, or why it was stopped. */
static void
run_end_reason(struct inst *in, int status)
{
	char what[64];
	const char *why = NULL;

	if (in->life.exec_failed && in->reason != NULL)
		return; /* why the exec failed */
	job_exit_describe(status, what, sizeof(what));
	if ((why = run_cause(in, "timeout")) != NULL)
		inst_reason(in, "%s (%s)", why, what);
	else
		inst_reason(in, "%s", what);
}

/*
 * LIFE_A_RECORD_END: the leader ended with status after uptime usec, and
 * st says what follows: write the end everywhere it goes.
 */
void
run_end(
    struct inst *in, int status, uint64_t uptime, const struct life_step *st)
{
	char end[512], up[32];
	uint64_t oom = track_oom_kills(in);

	/* The OOM killer took a process of the run: memory.events says so. */
	in->run.oom = oom != UINT64_MAX && in->run.oom_kills != UINT64_MAX &&
	    oom > in->run.oom_kills;
	run_describe(in, status, st, end, sizeof(end));
	state_run_end(in, status, end);
	cluster_run_end(in, status, end);
	/* A failure: not a stop asked for, unless for a cause of the run's. */
	if (st->decision.success) {
		counters_run(in, COUNT_RUN_SUCCESS);
		alert_succeeded(in);
	} else if (!st->stop_asked || run_cause(in, "timeout") != NULL) {
		counters_run(in, COUNT_RUN_FAILURE);
		alert_failed(in, status, in->q.msg.id);
	} else
		counters_run(in, COUNT_RUN_STOPPED);
	if (inst_kind(in)->run_end != NULL)
		inst_kind(in)->run_end(in, status, st->decision.success, end);
	in->last.known = !in->life.exec_failed;
	in->last.status = status;
	xsetf(&in->last.what, "%s", end);
	duration_format(uptime / 1000 * 1000, up, sizeof(up));
	joblog_mark(in, "pid %ld %s after %s", (long)in->run.pid, end, up);
	joblog_inst_release(in);
	log_info(
	    "%s: pid %ld %s after %s", in->label, (long)in->run.pid, end, up);
	run_end_reason(in, status);
	in->run.pid = 0;
}
