/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The one format of wall-clock times that commands show: ISO 8601 local
 * time with milliseconds, "2026-12-02T14:20:39.123", as history always
 * showed it (status, the dead list and error messages follow it).  Local
 * time, as the log files' line stamps; those also carry the UTC offset.
 */

#ifndef VIGIL_TIMEFMT_H
#define VIGIL_TIMEFMT_H

#include <stddef.h>
#include <stdint.h>

/* "YYYY-MM-DDTHH:MM:SS.mmm" and its NUL. */
#define TIMEFMT_LEN 24

char *timefmt_wall(int64_t, char *, size_t);

#endif
