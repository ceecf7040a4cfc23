/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Logging to stderr.  One line per message: "vigild: message", with the
 * level named for anything but info ("vigild: warning: message").  When
 * stderr is connected to the journal (JOURNAL_STREAM names stderr's device
 * and inode, as systemd sets it), each line starts with a syslog-style
 * "<N>" instead, so journald records the priority.
 */

#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"

static const char *log_progname = "vigil";
static enum log_level log_level = LOG_LEVEL_INFO;
static int log_journal;

static const char *const log_names[] = {
	"error",
	"warn",
	"info",
	"debug",
};

/* What non-journal lines say before the message, by level. */
static const char *const log_labels[] = {
	"error: ",
	"warning: ",
	"",
	"debug: ",
};

/* Syslog priorities matching each level, for journald's <N> prefix. */
static const int log_prio[] = { 3, 4, 6, 7 };

/*
 * Set the program name shown on each line and the most verbose level that
 * is printed.  The name is borrowed and must outlive logging.
 */
void
log_init(const char *progname, enum log_level level)
{
	log_progname = progname;
	log_level = level;
	log_journal = log_stderr_is_journal();
}

/*
 * Is stderr the journal stream systemd connected?  JOURNAL_STREAM holds
 * "DEVICE:INODE" of that stream; a redirected stderr no longer matches.
 */
int
log_stderr_is_journal(void)
{
	const char *env = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (env == NULL || sscanf(env, "%llu:%llu", &dev, &ino) != 2)
		return (0);
	if (fstat(2, &st) == -1)
		return (0);
	return ((unsigned long long)st.st_dev == dev &&
	    (unsigned long long)st.st_ino == ino);
}

/* Change the most verbose level printed. */
void
log_set_level(enum log_level level)
{
	log_level = level;
}

/* Return the most verbose level printed. */
enum log_level
log_get_level(void)
{
	return (log_level);
}

/*
 * Parse a level name ("error", "warn", "info", "debug").  Return 0 and set
 * *out, or -1 if the name is unknown.
 */
int
log_level_parse(const char *s, enum log_level *out)
{
	size_t i;

	for (i = 0; i < sizeof(log_names) / sizeof(log_names[0]); i++) {
		if (strcasecmp(s, log_names[i]) == 0) {
			*out = (enum log_level)i;
			return (0);
		}
	}
	if (strcasecmp(s, "warning") == 0) {
		*out = LOG_LEVEL_WARN;
		return (0);
	}
	return (-1);
}

static void __attribute__((format(printf, 3, 0)))
log_vwrite(enum log_level level, const char *err, const char *fmt, va_list ap)
{
	char buf[4096];
	int n;

	if (level > log_level)
		return;
	/* Every caller passes an ap from va_start. */
	/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n < 0)
		return;
	if (log_journal)
		fprintf(stderr, "<%d>", log_prio[level]);
	else
		fprintf(stderr, "%s: %s", log_progname, log_labels[level]);
	if (err != NULL)
		fprintf(stderr, "%s: %s\n", buf, err);
	else
		fprintf(stderr, "%s\n", buf);
	fflush(stderr);
}

/* Log a warning followed by strerror(errno). */
void
log_warn(const char *fmt, ...)
{
	va_list ap;
	const char *err = strerror(errno);

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_WARN, err, fmt, ap);
	va_end(ap);
}

/* Log a warning. */
void
log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_WARN, NULL, fmt, ap);
	va_end(ap);
}

/* Log an informational message. */
void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_INFO, NULL, fmt, ap);
	va_end(ap);
}

/* Log a debugging message. */
void
log_debug(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_DEBUG, NULL, fmt, ap);
	va_end(ap);
}

/* Log an error followed by strerror(errno) and exit(1). */
void
fatal(const char *fmt, ...)
{
	va_list ap;
	const char *err = strerror(errno);

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_ERROR, err, fmt, ap);
	va_end(ap);
	exit(1);
}

/* Log an error and exit(1). */
void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_ERROR, NULL, fmt, ap);
	va_end(ap);
	exit(1);
}
