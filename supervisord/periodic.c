/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Periodic jobs: one timer per instance for its next slot, and nothing in
 * between.  "every" slots follow each other on CLOCK_MONOTONIC from the
 * previous slot (no drift); "schedule" slots are wall-clock times from
 * lib/schedule.c on a CLOCK_REALTIME timer.  A timerfd armed with
 * TFD_TIMER_CANCEL_ON_SET tells when the wall clock is set, and every
 * schedule is computed again from the new time.
 *
 * A slot that comes while the previous run is still going is skipped and
 * recorded as such: never two runs at once (the instance's lock also keeps
 * a second vigild out).  A run that fails, crashes or times out is
 * recorded and the next slot fires all the same: job_decide sends a
 * periodic run's end to WAITING, never to BACKOFF or FATAL.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/timerfd.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cluster.h"
#include "duration.h"
#include "effects.h"
#include "evloop.h"
#include "inst.h"
#include "jobs.h"
#include "log.h"
#include "monotime.h"
#include "slot.h"
#include "state.h"
#include "store.h"
#include "timefmt.h"
#include "vigild.h"

/* Accuracy of slot timers: wakeups can be merged within this. */
#define PERIODIC_ACCURACY (1000ULL)

static sd_event_source *periodic_clock_src; /* wall clock was set */
static int periodic_clock_fd = -1;

static void periodic_slot_arm(struct inst *, int);

/* A random delay in [0, random_delay). */
static uint64_t
periodic_jitter(const struct job_spec *spec)
{
	if (spec->random_delay == 0)
		return (0);
	return (
	    ((uint64_t)arc4random() << 32 | arc4random()) % spec->random_delay);
}

/* The slot fired: run now, or skip it if the last run still goes. */
static int
periodic_slot_fired(sd_event_source *s, uint64_t usec, void *arg)
{
	struct inst *in = arg;

	in->per.src = sd_event_source_disable_unref(in->per.src);
	if (cluster_periodic(in))
		cluster_slot_fired(in, in->per.wall); /* the cluster decides */
	else
		inst_feed(in, LIFE_EV_SLOT);
	return (0);
}

/* LIFE_A_SKIP: the slot came while the last run was still going. */
static void
periodic_skip(struct inst *in)
{
	char when[64];

	log_info("%s: slot of %s skipped: the last run is still going",
	    in->label, timefmt_wall(in->per.wall, when, sizeof(when)));
	joblog_mark(
	    in, "slot skipped: pid %ld is still running", (long)in->run.pid);
	state_run_skipped(in, in->per.wall);
	in->per.skipped++;
}

static void
periodic_slot_arm(struct inst *in, int first)
{
	const struct job_spec *spec = in->job->spec;
	uint64_t now = monotime_now(), jitter = periodic_jitter(spec);
	int64_t wall = store_now();

	in->per.src = sd_event_source_disable_unref(in->per.src);
	if (spec->every > 0 && !cluster_periodic(in)) {
		in->per.mono =
		    slot_every_next(first ? 0 : in->per.mono, now, spec->every);
		in->per.wall = wall + (int64_t)(in->per.mono - now);
		evloop_timer_at(&in->per.src, CLOCK_MONOTONIC,
		    in->per.mono + jitter, PERIODIC_ACCURACY,
		    periodic_slot_fired, in);
		return;
	}
	in->per.mono = 0;
	if (slot_wall_next(spec->every, &spec->cron, wall, &in->per.wall) ==
	    -1) {
		log_warnx("%s: schedule \"%s\" never comes due", in->label,
		    spec->schedule);
		in->per.wall = 0;
		return;
	}
	evloop_timer_at(&in->per.src, CLOCK_REALTIME,
	    (uint64_t)in->per.wall + jitter, PERIODIC_ACCURACY,
	    periodic_slot_fired, in);
}

/*
 * Did a slot pass while vigild was down?  Compare the job's last recorded
 * run (or skipped slot) with the slot that followed it.  In cluster mode
 * the slot before now (every), or the first slot after this node's last
 * run (schedule), is bid for once: it runs unless the cluster ran it or a
 * later slot already.
 */
static int
periodic_missed(struct inst *in)
{
	const struct job_spec *spec = in->job->spec;
	int64_t last = state_last_start(in->job->name), wall = store_now();
	int64_t slot;

	if (!cluster_periodic(in))
		return (
		    slot_missed(spec->every, &spec->cron, last, wall, &slot));
	if (spec->every > 0)
		cluster_slot_fired(in, slot_grid_last(wall, spec->every));
	else if (slot_missed(spec->every, &spec->cron, last, wall, &slot))
		cluster_slot_fired(in, slot);
	return (0);
}

/* Want the instance, with its next slot armed unless it already is. */
/* LIFE_A_ARM_SLOT: the schedule is on; arm the first slot if none. */
static void
periodic_arm(struct inst *in)
{
	if (in->per.src == NULL)
		periodic_slot_arm(in, 1);
}

/* LIFE_A_NEXT_SLOT: the slot after the one that came. */
static void
periodic_next(struct inst *in)
{
	periodic_slot_arm(in, 0);
}

/* LIFE_A_DISARM_SLOT: no more slots. */
static void
periodic_disarm(struct inst *in)
{
	in->per.src = sd_event_source_disable_unref(in->per.src);
}

/* A start of a periodic job is settled once its run started (or ended). */
static int
periodic_start_settled(const struct inst *in, enum job_state s, int *ok)
{
	if (s != JOB_RUNNING && s != JOB_WAITING)
		return (-1);
	*ok = s == JOB_RUNNING || in->last.known;
	return (1);
}

const struct kind_ops periodic_kind = {
	.slot_arm = periodic_arm,
	.slot_next = periodic_next,
	.slot_disarm = periodic_disarm,
	.slot_skip = periodic_skip,
	.missed = periodic_missed,
	.start_settled = periodic_start_settled,
};

static int
periodic_clock_watch(void)
{
	struct itimerspec its;

	memset(&its, 0, sizeof(its));
	/* Far in the future: only a clock change ends it. */
	its.it_value.tv_sec = (time_t)INT32_MAX;
	return (timerfd_settime(periodic_clock_fd,
	    TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &its, NULL));
}

/* The wall clock was set: every cron slot is computed again. */
static int
periodic_clock_changed(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	struct job *j;
	uint64_t n;
	int i;

	if (read(fd, &n, sizeof(n)) == -1 && errno != ECANCELED &&
	    errno != EAGAIN)
		log_warn("read clock timerfd");
	if (periodic_clock_watch() == -1)
		log_warn("timerfd_settime");
	log_info("the wall clock was set: computing schedules again");
	RB_FOREACH(j, job_tree, &vigild.jobs) {
		if (j->spec->kind != CONF_KIND_PERIODIC ||
		    j->spec->schedule == NULL)
			continue;
		for (i = 0; i < j->ninsts; i++) {
			if (j->insts[i]->per.src != NULL)
				periodic_slot_arm(j->insts[i], 0);
		}
	}
	return (0);
}

/* Watch for changes of the wall clock (settimeofday, NTP steps). */
void
periodic_init(void)
{
	periodic_clock_fd =
	    timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
	if (periodic_clock_fd == -1 || periodic_clock_watch() == -1) {
		log_warn("timerfd for wall clock changes");
		if (periodic_clock_fd != -1)
			close(periodic_clock_fd);
		periodic_clock_fd = -1;
		return;
	}
	evloop_io(&periodic_clock_src, periodic_clock_fd, EPOLLIN,
	    periodic_clock_changed, NULL);
}

/* At exit. */
void
periodic_free(void)
{
	periodic_clock_src = sd_event_source_disable_unref(periodic_clock_src);
	if (periodic_clock_fd != -1)
		close(periodic_clock_fd);
	periodic_clock_fd = -1;
}
