/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * vigild towards systemd, when it runs as a Type=notify service: STATUS=
 * with the count of instances per state (at most every 250 ms),
 * EXTEND_TIMEOUT_USEC= while the stops at shutdown go on, and the
 * WATCHDOG=1 pings of sd-event.  Nothing is sent without NOTIFY_SOCKET.
 */

#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-daemon.h>

#include "daemon.h"
#include "duration.h"
#include "evloop.h"
#include "inst.h"
#include "jobs-view.h"
#include "log.h"
#include "vigild.h"

static sd_event_source *sdnotify_status_timer; /* rate limit of STATUS= */

/* Send first (e.g. "READY=1\n", or ""), then STATUS= with the counts. */
static void
sdnotify_status_with(const char *first)
{
	const size_t *n = vigild.nstate;

	(void)sd_notifyf(0,
	    "%sSTATUS=%zu running, %zu starting, %zu backoff, %zu failed, "
	    "%zu stopping, %zu stopped",
	    first, n[JOB_RUNNING], n[JOB_STARTING] + n[JOB_BLOCKED],
	    n[JOB_BACKOFF], n[JOB_FATAL], n[JOB_STOPPING],
	    n[JOB_STOPPED] + n[JOB_EXITED]);
}

static int
sdnotify_status_send(sd_event_source *s, uint64_t usec, void *arg)
{
	sdnotify_status_timer =
	    sd_event_source_disable_unref(sdnotify_status_timer);
	sdnotify_status_with("");
	return (0);
}

/*
 * READY=1 once the autostart jobs are launched, with STATUS= in the same
 * message: systemd's status line has the counts from the start, even if
 * no job ever changes state.
 */
void
sdnotify_ready(void)
{
	sdnotify_status_with("READY=1\n");
}

/*
 * The counts of instances per state changed: tell systemd (STATUS=), at
 * most every 250 ms, so a thousand jobs starting make one message, not a
 * thousand.
 */
static void
sdnotify_status_changed(struct inst *in, enum job_state was)
{
	(void)in;
	(void)was;
	if (!vigild.under_systemd || sdnotify_status_timer != NULL ||
	    evloop_event() == NULL)
		return;
	if (sd_event_add_time_relative(evloop_event(), &sdnotify_status_timer,
	        CLOCK_MONOTONIC, 250 * DURATION_USEC_PER_MSEC,
	        50 * DURATION_USEC_PER_MSEC, sdnotify_status_send, NULL) < 0)
		sdnotify_status_timer = NULL;
}

/*
 * Tell systemd how long the stops may take: the longest stop_timeout of
 * an active instance (a queue run's drain_timeout first), plus a margin
 * for SIGKILL and reaping.
 */
void
sdnotify_extend_timeout(void)
{
	struct job *j;
	uint64_t longest = 0, t;
	int i;

	if (!vigild.under_systemd)
		return;
	RB_FOREACH(j, job_tree, &vigild.jobs) {
		t = inst_kind_stop_time(job_spec_of(j));
		for (i = 0; i < job_ninsts(j); i++) {
			if (job_state_is_active(inst_state(job_inst(j, i))) &&
			    t > longest)
				longest = t;
		}
	}
	(void)sd_notifyf(0, "EXTEND_TIMEOUT_USEC=%" PRIu64,
	    (uint64_t)(longest + 5 * DURATION_USEC_PER_SEC));
}

/* vigild is stopping: say so, with the time the stops may take. */
void
sdnotify_stopping(void)
{
	(void)sd_notify(0, "STOPPING=1");
	sdnotify_extend_timeout();
}

/* NOTIFY_SOCKET set: vigild runs under systemd; sd-event pings WATCHDOG. */
void
sdnotify_init(void)
{
	int r;

	vigild.under_systemd = getenv("NOTIFY_SOCKET") != NULL;
	/* WATCHDOG=1 pings when systemd set WATCHDOG_USEC for us. */
	if ((r = sd_event_set_watchdog(evloop_event(), 1)) < 0)
		log_warnx("sd_event_set_watchdog: %s", strerror(-r));
	else if (r > 0)
		log_info("systemd watchdog enabled");
}

void
sdnotify_free(void)
{
	sdnotify_status_timer =
	    sd_event_source_disable_unref(sdnotify_status_timer);
}

const struct inst_observer sdnotify_observer = {
	.changed = sdnotify_status_changed,
};
