/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Wall-clock times for people (see timefmt.h): one format for status,
 * history, the queue's dead list and every message that names a time.
 */

#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "timefmt.h"

/*
 * Format usec (microseconds since the epoch) into buf (len bytes, at
 * least TIMEFMT_LEN for the whole text) in local time with its UTC
 * offset, or "-" when usec
 * is 0 or less (no time) or the time cannot be converted.  Return buf.
 */
char *
timefmt_wall(int64_t usec, char *buf, size_t len)
{
	time_t sec = (time_t)(usec / 1000000);
	struct tm tm;
	long off;

	if (usec <= 0 || localtime_r(&sec, &tm) == NULL) {
		snprintf(buf, len, "-");
		return (buf);
	}
	off = tm.tm_gmtoff / 60;
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03d%c%02ld:%02ld",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
	    tm.tm_sec, (int)(usec % 1000000 / 1000), off < 0 ? '-' : '+',
	    (off < 0 ? -off : off) / 60, (off < 0 ? -off : off) % 60);
	return (buf);
}
