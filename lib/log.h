/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Logging to stderr with levels: log_warn appends strerror(errno), fatal
 * and fatalx exit.  Under systemd (JOURNAL_STREAM set) each line carries a
 * <N> priority prefix so journald keeps the level.
 */

#ifndef VIGIL_LOG_H
#define VIGIL_LOG_H

enum log_level {
	LOG_LEVEL_ERROR = 0,
	LOG_LEVEL_WARN,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG,
};

void log_init(const char *, enum log_level);
int log_stderr_is_journal(void);
void log_set_level(enum log_level);
enum log_level log_get_level(void);
int log_level_parse(const char *, enum log_level *);
void log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void fatal(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
