/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Job log files: lines in, formatted lines out to NAME.log, with rotation
 * at a size limit and reading back the last lines for "vigilctl tail".
 *
 * Lines are formatted into one shared buffer (vigild is single-threaded)
 * and written with one write(2) per block of whole lines.  Before a block
 * would take the file past max_size, the whole lines that still fit are
 * written, the file is rotated, and the rest goes to the new file.
 *
 * A root vigild must never write through a link someone planted: every
 * file is opened, renamed and removed relative to the descriptor of the
 * log directory (checked by safedir), with O_NOFOLLOW, and only a regular
 * file with one link is written to or read.  Before each open the
 * directory is checked again, so a directory opened up to others while
 * vigild runs gets no more writes.
 */

#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "output.h"
#include "safedir.h"
#include "xmalloc.h"

/* Formatted lines are gathered here and written in one go. */
#define OUTPUT_BUF (128 * 1024)
/* Write errors are reported at most this often (seconds). */
#define OUTPUT_WARN_EVERY 60
/* Read size when scanning a file backwards for "tail". */
#define OUTPUT_TAIL_CHUNK (64 * 1024)

struct output_sink {
	int dirfd;  /* the log directory, borrowed */
	char *name; /* the file's name in it */
	char *path; /* directory and name, for messages */
	int fd;     /* -1: opened at the next write */
	uint64_t size;
	uint64_t max_size; /* 0: never rotate */
	int keep;
	int timestamps;
	output_tap_cb tap;
	void *tap_arg;
	uint64_t dropped; /* bytes lost since the last warning */
	time_t warned;    /* when the last warning was logged */
};

static char output_buf[OUTPUT_BUF];
static size_t output_len;

/* The cached "YYYY-MM-DDTHH:MM:SS" and offset of one second. */
static time_t output_ts_sec = -1;
static char output_ts_date[24];
static char output_ts_zone[16];

/*
 * Create a sink for the file name in the directory open as dirfd, whose
 * path is dir (for messages); nothing is opened yet.  dirfd is borrowed:
 * it must stay open as long as the sink.  Free with output_sink_free.
 */
struct output_sink *
output_sink_new(int dirfd, const char *dir, const char *name)
{
	struct output_sink *s;

	s = xcalloc(1, sizeof(*s));
	s->dirfd = dirfd;
	s->name = xstrdup(name);
	xasprintf(&s->path, "%s/%s", dir, name);
	s->fd = -1;
	s->keep = 5;
	s->max_size = 10 * 1024 * 1024;
	return (s);
}

/*
 * Set the rotation limit (bytes, 0 never rotates), the number of rotated
 * files kept, and whether lines get a time prefix.
 */
void
output_sink_configure(
    struct output_sink *s, uint64_t max_size, int keep, int timestamps)
{
	if (max_size != 0 && max_size < OUTPUT_MIN_SIZE)
		max_size = OUTPUT_MIN_SIZE;
	s->max_size = max_size;
	s->keep = keep < 0 ? 0 : keep;
	s->timestamps = timestamps;
}

/* Have every formatted block passed to cb as well (tail -f). */
void
output_sink_set_tap(struct output_sink *s, output_tap_cb cb, void *arg)
{
	s->tap = cb;
	s->tap_arg = arg;
}

/* Return the path of the sink's file. */
const char *
output_sink_path(const struct output_sink *s)
{
	return (s->path);
}

/* Close the file; the next write opens it again (external logrotate). */
void
output_sink_reopen(struct output_sink *s)
{
	if (s->fd != -1)
		close(s->fd);
	s->fd = -1;
}

/* Close and free the sink. */
void
output_sink_free(struct output_sink *s)
{
	if (s == NULL)
		return;
	output_sink_reopen(s);
	free(s->name);
	free(s->path);
	free(s);
}

/* Is a warning due: none yet, or the last one OUTPUT_WARN_EVERY ago? */
static int
output_warn_due(const struct output_sink *s)
{
	return (s->warned == 0 || time(NULL) - s->warned >= OUTPUT_WARN_EVERY);
}

/*
 * Count n bytes as lost; log why (cause, freed here; NULL when no warning
 * is due) at most every OUTPUT_WARN_EVERY.
 */
static void
output_drop(struct output_sink *s, size_t n, char *cause)
{
	s->dropped += n;
	if (output_warn_due(s)) {
		log_warnx("%s: %s (%llu bytes of output lost)", s->path,
		    cause != NULL ? cause : "failed",
		    (unsigned long long)s->dropped);
		s->warned = time(NULL);
		s->dropped = 0;
	}
	free(cause);
}

/* Set *cause (if cause is not NULL) to "what: strerror(errno)". */
static void
output_errno(char **cause, const char *what)
{
	if (cause != NULL)
		xasprintf(cause, "%s: %s", what, strerror(errno));
}

/*
 * Open (creating it, mode 0640) a file of the sink's directory for
 * appending, or with trunc emptied, and only if it is a regular file with
 * one link and the directory still passes safedir_check.  Return the
 * descriptor, or -1 with *cause (if cause is not NULL).
 */
static int
output_open_file(
    struct output_sink *s, int trunc, struct stat *st, char **cause)
{
	char *why = NULL;
	int fd;

	if (safedir_check(s->dirfd, 0, cause != NULL ? &why : NULL) == -1) {
		if (cause != NULL)
			xasprintf(
			    cause, "its directory: %s: not writing there", why);
		free(why);
		return (-1);
	}
	fd = openat(s->dirfd, s->name,
	    O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW |
	        O_NONBLOCK,
	    0640);
	if (fd == -1) {
		if (errno == ELOOP && cause != NULL)
			xasprintf(cause, "a symbolic link: not following it");
		else
			output_errno(cause, "open");
		return (-1);
	}
	if (fstat(fd, st) == -1) {
		output_errno(cause, "fstat");
		goto fail;
	}
	if (!S_ISREG(st->st_mode) || st->st_nlink != 1) {
		if (cause != NULL)
			xasprintf(cause,
			    "not a regular file with one link: "
			    "not writing to it");
		goto fail;
	}
	/* Emptied only now: never a file that failed the checks above. */
	if (trunc && ftruncate(fd, 0) == -1) {
		output_errno(cause, "truncate");
		goto fail;
	}
	return (fd);
fail:
	close(fd);
	return (-1);
}

/*
 * Open the file if it is not open (see output_open_file).  Return 0, or
 * -1 with *cause when a warning is due.
 */
static int
output_open(struct output_sink *s, int trunc, char **cause)
{
	struct stat st;

	*cause = NULL;
	if (s->fd != -1)
		return (0);
	s->fd =
	    output_open_file(s, trunc, &st, output_warn_due(s) ? cause : NULL);
	if (s->fd == -1)
		return (-1);
	s->size = trunc ? 0 : (uint64_t)st.st_size;
	return (0);
}

/* NAME.log.N, in buf. */
static void
output_rotated_name(const struct output_sink *s, int n, char *buf, size_t size)
{
	snprintf(buf, size, "%s.%d", s->name, n);
}

/*
 * Shift NAME.log.K-1 to NAME.log.K ... NAME.log to NAME.log.1 and start an
 * empty NAME.log.  With keep = 0 the file is emptied instead.  Rotated
 * files past keep (left by a larger keep before) are removed.
 */
static void
output_rotate(struct output_sink *s)
{
	char from[PATH_MAX], to[PATH_MAX], *cause;
	int k;

	output_sink_reopen(s);
	for (k = s->keep + 1;; k++) {
		output_rotated_name(s, k, to, sizeof(to));
		if (unlinkat(s->dirfd, to, 0) == -1)
			break;
	}
	for (k = s->keep - 1; k >= 1; k--) {
		output_rotated_name(s, k, from, sizeof(from));
		output_rotated_name(s, k + 1, to, sizeof(to));
		if (renameat(s->dirfd, from, s->dirfd, to) == -1 &&
		    errno != ENOENT)
			log_warn("rename %s.%d", s->path, k);
	}
	if (s->keep > 0) {
		output_rotated_name(s, 1, to, sizeof(to));
		if (renameat(s->dirfd, s->name, s->dirfd, to) == -1 &&
		    errno != ENOENT)
			log_warn("rename %s", s->path);
	}
	if (output_open(s, 1, &cause) == -1)
		output_drop(s, 0, cause);
}

/* Write all of p to the file; errors drop it. */
static void
output_write_all(struct output_sink *s, const char *p, size_t n)
{
	char *cause;
	ssize_t w;

	if (output_open(s, 0, &cause) == -1) {
		output_drop(s, n, cause);
		return;
	}
	while (n > 0) {
		w = write(s->fd, p, n);
		if (w == -1 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			cause = NULL;
			if (output_warn_due(s))
				output_errno(&cause, "write");
			output_drop(s, n, cause);
			return;
		}
		s->size += (uint64_t)w;
		p += w;
		n -= (size_t)w;
	}
}

/* Return the length of the longest run of whole lines of p within room. */
static size_t
output_fit(const char *p, size_t n, uint64_t room)
{
	const char *nl;

	if (n <= room)
		return (n);
	if (room == 0)
		return (0);
	/* p[room - 1] is the last byte that fits. */
	nl = memrchr(p, '\n', (size_t)room);
	return (nl == NULL ? 0 : (size_t)(nl - p) + 1);
}

/* Write the block of whole lines p to the file, rotating as needed. */
static void
output_write_lines(struct output_sink *s, const char *p, size_t n)
{
	const char *nl;
	uint64_t room;
	size_t k;
	char *cause;

	if (s->tap != NULL)
		s->tap(s->tap_arg, p, n);
	if (s->max_size == 0) {
		output_write_all(s, p, n);
		return;
	}
	while (n > 0) {
		if (output_open(s, 0, &cause) == -1) {
			output_drop(s, n, cause);
			return;
		}
		room = s->size < s->max_size ? s->max_size - s->size : 0;
		k = output_fit(p, n, room);
		if (k == 0 && s->size == 0) {
			/* Only a line longer than max_size; they are cut. */
			nl = memchr(p, '\n', n);
			k = nl != NULL ? (size_t)(nl - p) + 1 : n;
		}
		if (k > 0) {
			output_write_all(s, p, k);
			p += k;
			n -= k;
		}
		if (n > 0)
			output_rotate(s);
	}
}

/* Write out the shared buffer. */
static void
output_flush(struct output_sink *s)
{
	if (output_len > 0)
		output_write_lines(s, output_buf, output_len);
	output_len = 0;
}

/*
 * Format usec (wall clock, microseconds since the epoch) as ISO 8601 local
 * time with milliseconds and the UTC offset: "2026-12-02T14:20:39.123+01:00".
 * Return the length.
 */
size_t
output_format_time(char *buf, size_t size, int64_t usec)
{
	time_t sec = (time_t)(usec / 1000000);
	long off, ms = (long)((usec % 1000000) / 1000);
	struct tm tm;
	int n;

	if (sec != output_ts_sec) {
		if (localtime_r(&sec, &tm) == NULL)
			memset(&tm, 0, sizeof(tm));
		strftime(output_ts_date, sizeof(output_ts_date),
		    "%Y-%m-%dT%H:%M:%S", &tm);
		/* Offsets are within a day: the hours fit in two digits. */
		off = labs(tm.tm_gmtoff / 60) % (24 * 60);
		snprintf(output_ts_zone, sizeof(output_ts_zone), "%c%02d:%02d",
		    tm.tm_gmtoff < 0 ? '-' : '+', (int)(off / 60),
		    (int)(off % 60));
		output_ts_sec = sec;
	}
	n = snprintf(
	    buf, size, "%s.%03ld%s", output_ts_date, ms, output_ts_zone);
	return (n < 0 ? 0 : (size_t)n);
}

/* The wall clock in microseconds. */
static int64_t
output_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
}

/* The prefix of each line: time and tag, as configured. */
struct output_prefix {
	char text[OUTPUT_TIME_LEN + 80];
	size_t len;
};

static void
output_prefix_make(
    const struct output_sink *s, const char *tag, struct output_prefix *pf)
{
	size_t n = 0;

	if (s->timestamps) {
		n = output_format_time(
		    pf->text, sizeof(pf->text), output_now());
		pf->text[n++] = ' ';
	}
	if (tag != NULL) {
		n += (size_t)snprintf(
		    pf->text + n, sizeof(pf->text) - n, "%.64s: ", tag);
		if (n >= sizeof(pf->text))
			n = sizeof(pf->text) - 1;
	}
	pf->text[n] = '\0';
	pf->len = n;
}

/* The most bytes of text one line may carry after its prefix. */
static size_t
output_line_max(const struct output_sink *s, const struct output_prefix *pf)
{
	uint64_t max = OUTPUT_LINE_MAX;

	if (s->max_size != 0 && s->max_size < max + pf->len + 1)
		max = s->max_size - pf->len - 1;
	return ((size_t)max);
}

/* Make room for n bytes in the partial line. */
static void
output_partial_grow(struct output_partial *part, size_t n)
{
	size_t cap = part->cap != 0 ? part->cap : 256;

	if (n <= part->cap)
		return;
	while (cap < n)
		cap *= 2;
	part->buf = xreallocarray(part->buf, cap, 1);
	part->cap = cap;
}

/* Add one line (without its newline) to the shared buffer. */
static void
output_emit(struct output_sink *s, const struct output_prefix *pf,
    const char *p, size_t n)
{
	if (output_len + pf->len + n + 1 > sizeof(output_buf))
		output_flush(s);
	memcpy(output_buf + output_len, pf->text, pf->len);
	output_len += pf->len;
	memcpy(output_buf + output_len, p, n);
	output_len += n;
	output_buf[output_len++] = '\n';
}

/*
 * Take len bytes read from one of the job's pipes.  Whole lines go to the
 * file (prefixed with tag, if not NULL); an unfinished last line waits in
 * part for the rest.  Lines longer than OUTPUT_LINE_MAX are cut.
 */
void
output_feed(struct output_sink *s, struct output_partial *part, const char *tag,
    const char *data, size_t len)
{
	struct output_prefix pf;
	const char *nl;
	size_t max, seg, take;

	output_prefix_make(s, tag, &pf);
	max = output_line_max(s, &pf);
	while (len > 0) {
		nl = memchr(data, '\n', len);
		seg = nl != NULL ? (size_t)(nl - data) : len;
		if (part->len == 0 && nl != NULL && seg <= max) {
			output_emit(s, &pf, data, seg);
			data += seg + 1;
			len -= seg + 1;
			continue;
		}
		if (part->len >= max && seg > 0) {
			/* A full piece and more text of the line: cut here. */
			output_emit(s, &pf, part->buf, part->len);
			part->len = 0;
			continue;
		}
		take = max - part->len < seg ? max - part->len : seg;
		output_partial_grow(part, part->len + take);
		memcpy(part->buf + part->len, data, take);
		part->len += take;
		data += take;
		len -= take;
		if (nl != NULL && take == seg) {
			output_emit(s, &pf, part->buf, part->len);
			part->len = 0;
			data++;
			len--;
		}
	}
	output_flush(s);
	if (part->len == 0)
		output_partial_clear(part);
}

/* The pipe is closed: write its unfinished last line, if any. */
void
output_feed_end(
    struct output_sink *s, struct output_partial *part, const char *tag)
{
	struct output_prefix pf;

	if (part->len > 0) {
		output_prefix_make(s, tag, &pf);
		output_emit(s, &pf, part->buf, part->len);
		output_flush(s);
	}
	output_partial_clear(part);
}

/* Free the partial line's buffer. */
void
output_partial_clear(struct output_partial *part)
{
	free(part->buf);
	part->buf = NULL;
	part->len = 0;
	part->cap = 0;
}

/* Write one line of vigil's own, "vigil: text", in the job's log. */
void
output_marker(struct output_sink *s, const char *tag, const char *fmt, ...)
{
	struct output_prefix pf;
	char msg[512 - 7], text[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	/* Every caller passes an ap from va_start. */
	/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	n = snprintf(text, sizeof(text), "vigil: %s", msg);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(text))
		n = sizeof(text) - 1;
	output_prefix_make(s, tag, &pf);
	output_emit(s, &pf, text, (size_t)n);
	output_flush(s);
}

/*
 * Scan fd (size bytes) backwards for the start of its last want lines.
 * Set *start and return how many lines were found (fewer if the file has
 * fewer), or -1 on a read error.  Stop at max bytes from the end.
 */
static long
output_tail_scan(
    int fd, uint64_t size, size_t want, uint64_t max, uint64_t *start)
{
	char buf[OUTPUT_TAIL_CHUNK];
	uint64_t end = size, pos, floor;
	size_t found = 0, i, n;
	ssize_t r;
	int first = 1;

	*start = size;
	floor = size > max ? size - max : 0;
	while (end > floor) {
		pos = end - floor > sizeof(buf) ? end - sizeof(buf) : floor;
		n = (size_t)(end - pos);
		r = pread(fd, buf, n, (off_t)pos);
		if (r != (ssize_t)n)
			return (-1);
		for (i = n; i > 0; i--) {
			if (buf[i - 1] != '\n')
				continue;
			if (first && pos + i == size) {
				/* The newline ending the last line. */
				first = 0;
				continue;
			}
			first = 0;
			if (found == want)
				return ((long)found);
			found++;
			*start = pos + i;
		}
		first = 0;
		end = pos;
	}
	/*
	 * At the start of the file, the first line counts too; at the edge
	 * of the window, a cut line does not.
	 */
	if (size > 0 && found < want && floor == 0) {
		*start = 0;
		found++;
	}
	return ((long)found);
}

/* Read bytes [start, size) of fd and append them to *buf. */
static int
output_tail_read(int fd, uint64_t start, uint64_t size, char **buf, size_t *len)
{
	size_t n = (size_t)(size - start);
	ssize_t r;

	*buf = xreallocarray(*buf, *len + n + 1, 1);
	r = pread(fd, *buf + *len, n, (off_t)start);
	if (r < 0)
		return (-1);
	*len += (size_t)r;
	return (0);
}

/*
 * Open name at dirfd for reading, without following a symbolic link or
 * blocking on a FIFO; only a regular file.  Return the descriptor, -1
 * with errno ENOENT for a missing file, or -1 with *cause (about shown).
 */
static int
output_tail_open(int dirfd, const char *name, const char *shown, uint64_t *size,
    char **cause)
{
	struct stat st;
	int fd;

	fd =
	    openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd == -1) {
		if (errno == ELOOP)
			xasprintf(cause,
			    "%s: a symbolic link: not following it", shown);
		else if (errno != ENOENT)
			xasprintf(cause, "%s: %s", shown, strerror(errno));
		return (-1);
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		xasprintf(cause, "%s: not a regular file", shown);
		close(fd);
		errno = EPERM;
		return (-1);
	}
	*size = (uint64_t)st.st_size;
	return (fd);
}

/* output_tail, with shown as the path in messages. */
static int
output_tail_at(int dirfd, const char *name, const char *shown, size_t n,
    size_t max, char **out, size_t *outlen, char **cause)
{
	char older[PATH_MAX], shown1[PATH_MAX];
	uint64_t start[2] = { 0, 0 }, size[2] = { 0, 0 };
	int fd[2] = { -1, -1 }, i, rv = -1;
	long got = 0, more = 0;

	*out = NULL;
	*outlen = 0;
	snprintf(older, sizeof(older), "%s.1", name);
	snprintf(shown1, sizeof(shown1), "%s.1", shown);
	for (i = 0; i < 2; i++) {
		fd[i] = output_tail_open(dirfd, i == 0 ? name : older,
		    i == 0 ? shown : shown1, &size[i], cause);
		if (fd[i] == -1 && errno != ENOENT)
			goto out;
	}
	if (fd[0] != -1 &&
	    (got = output_tail_scan(fd[0], size[0], n, max, &start[0])) == -1)
		goto fail;
	/* Only when all of path is in: never skip a line cut by the window. */
	if (fd[1] != -1 && (size_t)got < n && start[0] == 0 &&
	    size[0] - start[0] < max) {
		more = output_tail_scan(fd[1], size[1], n - (size_t)got,
		    max - (size[0] - start[0]), &start[1]);
		if (more == -1)
			goto fail;
	}
	if (more > 0 && fd[1] != -1 &&
	    output_tail_read(fd[1], start[1], size[1], out, outlen) == -1)
		goto fail;
	if (fd[0] != -1 &&
	    output_tail_read(fd[0], start[0], size[0], out, outlen) == -1)
		goto fail;
	rv = 0;
	goto out;
fail:
	xasprintf(cause, "%s: %s", shown, strerror(errno != 0 ? errno : EIO));
	free(*out);
	*out = NULL;
	*outlen = 0;
out:
	for (i = 0; i < 2; i++) {
		if (fd[i] != -1)
			close(fd[i]);
	}
	return (rv);
}

/*
 * Return in *out (allocated, *outlen bytes) the last n lines of the log
 * file name at dirfd (a path relative to it, or absolute), looking into
 * name.1 when name has fewer, and reading at most max bytes in all.  A
 * missing file is empty; a symbolic link or anything but a regular file
 * is an error.  0, or -1 with *cause (owned by the caller).
 */
int
output_tail(int dirfd, const char *name, size_t n, size_t max, char **out,
    size_t *outlen, char **cause)
{
	return (output_tail_at(dirfd, name, name, n, max, out, outlen, cause));
}

/* output_tail of the sink's file, named by its full path in messages. */
int
output_sink_tail(const struct output_sink *s, size_t n, size_t max, char **out,
    size_t *outlen, char **cause)
{
	return (output_tail_at(
	    s->dirfd, s->name, s->path, n, max, out, outlen, cause));
}
