/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * A job's log file: complete lines from the job's pipes, each optionally
 * prefixed with an ISO 8601 time and an instance tag, appended to
 * LOG_DIR/NAME.log, which rotates to NAME.log.1 ... NAME.log.KEEP at a
 * size limit.  A line is never split across two files, and no line is
 * longer than the limit (longer ones are cut into pieces), so the files
 * together never pass (keep + 1) * max_size.  Writes never wait for
 * anything but the file system; errors drop data, never block a job.
 * Files are opened relative to the log directory's descriptor, never
 * through a symbolic link, and only while that directory is safe (see
 * safedir.h).
 */

#ifndef VIGIL_OUTPUT_H
#define VIGIL_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

/* Longest line kept whole; longer ones are cut into pieces this long. */
#define OUTPUT_LINE_MAX (16 * 1024)
/* The smallest log_max_size that makes sense (0 is "never rotate"). */
#define OUTPUT_MIN_SIZE 1024
/* "2026-12-02T13:20:39.123+01:00" and a NUL. */
#define OUTPUT_TIME_LEN 30

struct output_sink;

/* Called with every block of formatted lines, written or not. */
typedef void (*output_tap_cb)(void *, const char *, size_t);

/* The unfinished last line of one pipe, kept until its newline comes. */
struct output_partial {
	char *buf;
	size_t len;
	size_t cap;
};

struct output_sink *output_sink_new(int, const char *, const char *);
void output_sink_configure(struct output_sink *, uint64_t, int, int);
void output_sink_set_tap(struct output_sink *, output_tap_cb, void *);
const char *output_sink_path(const struct output_sink *);
void output_sink_reopen(struct output_sink *);
void output_sink_free(struct output_sink *);

void output_feed(struct output_sink *, struct output_partial *, const char *,
    const char *, size_t);
void output_feed_end(
    struct output_sink *, struct output_partial *, const char *);
void output_marker(struct output_sink *, const char *, const char *, ...)
    __attribute__((format(printf, 3, 4)));
void output_partial_clear(struct output_partial *);

size_t output_format_time(char *, size_t, int64_t);
int output_tail(int, const char *, size_t, size_t, char **, size_t *, char **);
int output_sink_tail(
    const struct output_sink *, size_t, size_t, char **, size_t *, char **);

#endif
