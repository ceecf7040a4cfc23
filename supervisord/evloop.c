/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * vigild's event loop (evloop.h): the loop itself, made at start, and
 * the sources that vigild cannot do without: one place for the stanza "add it, or exit saying what failed", and for
 * moving a timer that exists rather than making it again.  A timer fails
 * to be made only for want of memory or of a descriptor for its clock's
 * timerfd (signals.c makes CLOCK_MONOTONIC's at start-up).
 */

#include "config.h"

#include <string.h>

#include "evloop.h"
#include "log.h"

static sd_event *evloop_loop; /* vigild's only loop */

/* Make the loop (sd_event_default): 0, or a negative errno. */
int
evloop_open(void)
{
	return (sd_event_default(&evloop_loop));
}

/* The loop, or NULL before evloop_open and after evloop_close. */
sd_event *
evloop_event(void)
{
	return (evloop_loop);
}

/* At exit, every source gone: the loop too. */
void
evloop_close(void)
{
	evloop_loop = sd_event_unref(evloop_loop);
}

void
evloop_timer_at_(const char *who, sd_event_source **src, clockid_t clock,
    uint64_t at, uint64_t accuracy, sd_event_time_handler_t fn, void *arg)
{
	int r;

	if (*src != NULL) {
		(void)sd_event_source_set_time(*src, at);
		(void)sd_event_source_set_enabled(*src, SD_EVENT_ONESHOT);
		return;
	}
	r = sd_event_add_time(evloop_loop, src, clock, at, accuracy, fn, arg);
	if (r < 0)
		fatalx("%s: sd_event_add_time: %s", who, strerror(-r));
}

void
evloop_timer_in_(const char *who, sd_event_source **src, clockid_t clock,
    uint64_t usec, uint64_t accuracy, sd_event_time_handler_t fn, void *arg)
{
	int r;

	if (*src != NULL) {
		(void)sd_event_source_set_time_relative(*src, usec);
		(void)sd_event_source_set_enabled(*src, SD_EVENT_ONESHOT);
		return;
	}
	r = sd_event_add_time_relative(
	    evloop_loop, src, clock, usec, accuracy, fn, arg);
	if (r < 0)
		fatalx("%s: sd_event_add_time_relative: %s", who, strerror(-r));
}

void
evloop_defer_(
    const char *who, sd_event_source **src, sd_event_handler_t fn, void *arg)
{
	int r;

	if (*src != NULL) {
		(void)sd_event_source_set_enabled(*src, SD_EVENT_ONESHOT);
		return;
	}
	r = sd_event_add_defer(evloop_loop, src, fn, arg);
	if (r < 0)
		fatalx("%s: sd_event_add_defer: %s", who, strerror(-r));
}

void
evloop_io_(const char *who, sd_event_source **src, int fd, uint32_t events,
    sd_event_io_handler_t fn, void *arg)
{
	int r;

	r = sd_event_add_io(evloop_loop, src, fd, events, fn, arg);
	if (r < 0)
		fatalx("%s: sd_event_add_io: %s", who, strerror(-r));
}
