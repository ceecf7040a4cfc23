/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The one format of wall-clock times that commands show: ISO 8601 local
 * time with milliseconds and the UTC offset, "2026-12-02T14:20:39.123+01:00"
 * (status, history, the dead list and error messages), as the log files'
 * line stamps: vigild's zone may not be the reader's.
 */

#ifndef VIGIL_TIMEFMT_H
#define VIGIL_TIMEFMT_H

#include <stddef.h>
#include <stdint.h>

/* "YYYY-MM-DDTHH:MM:SS.mmm+HH:MM" and its NUL. */
#define TIMEFMT_LEN 30

char *timefmt_wall(int64_t, char *, size_t);

#endif
