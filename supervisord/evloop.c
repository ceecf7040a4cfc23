/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The event loop's sources that vigild cannot do without (evloop.h): one
 * place for the stanza "add it, or exit saying what failed", and for
 * moving a timer that exists rather than making it again.  A timer fails
 * to be made only for want of memory or of a descriptor for its clock's
 * timerfd (signals.c makes CLOCK_MONOTONIC's at start-up).
 */

#include "config.h"

#include <string.h>

#include "evloop.h"
#include "log.h"
#include "vigild.h"

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
	r = sd_event_add_time(vigild.event, src, clock, at, accuracy, fn, arg);
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
	    vigild.event, src, clock, usec, accuracy, fn, arg);
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
	r = sd_event_add_defer(vigild.event, src, fn, arg);
	if (r < 0)
		fatalx("%s: sd_event_add_defer: %s", who, strerror(-r));
}

void
evloop_io_(const char *who, sd_event_source **src, int fd, uint32_t events,
    sd_event_io_handler_t fn, void *arg)
{
	int r;

	r = sd_event_add_io(vigild.event, src, fd, events, fn, arg);
	if (r < 0)
		fatalx("%s: sd_event_add_io: %s", who, strerror(-r));
}
