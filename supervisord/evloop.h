/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

#ifndef VIGIL_EVLOOP_H
#define VIGIL_EVLOOP_H

#include <stdint.h>
#include <time.h>

#include <systemd/sd-event.h>

int evloop_open(void);
sd_event *evloop_event(void);
void evloop_close(void);

/*
 * The sources of vigild's loop (evloop_event()) that must not fail: made or
 * vigild exits naming the caller and the error.  A timer or a deferred
 * call is made on first use and moved and enabled once more after; a
 * source pointer is always used with the same callback and argument.
 */
void evloop_timer_at_(const char *, sd_event_source **, clockid_t, uint64_t,
    uint64_t, sd_event_time_handler_t, void *);
void evloop_timer_in_(const char *, sd_event_source **, clockid_t, uint64_t,
    uint64_t, sd_event_time_handler_t, void *);
void evloop_defer_(
    const char *, sd_event_source **, sd_event_handler_t, void *);
void evloop_io_(const char *, sd_event_source **, int, uint32_t,
    sd_event_io_handler_t, void *);

/* fn(arg) once at usec on clock (absolute), to within accuracy usec. */
#define evloop_timer_at(src, clock, usec, accuracy, fn, arg)                   \
	evloop_timer_at_(                                                      \
	    __func__, (src), (clock), (usec), (accuracy), (fn), (arg))
/* fn(arg) once usec from now on clock, to within accuracy usec. */
#define evloop_timer_in(src, clock, usec, accuracy, fn, arg)                   \
	evloop_timer_in_(                                                      \
	    __func__, (src), (clock), (usec), (accuracy), (fn), (arg))
/* fn(arg) once, at the next pass of the loop. */
#define evloop_defer(src, fn, arg) evloop_defer_(__func__, (src), (fn), (arg))
/* fn(arg) whenever fd has events (a new source: *src is NULL). */
#define evloop_io(src, fd, events, fn, arg)                                    \
	evloop_io_(__func__, (src), (fd), (events), (fn), (arg))

#endif /* VIGIL_EVLOOP_H */
