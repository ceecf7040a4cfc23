/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Unit tests for lib/output.c against real files in a temporary directory:
 * whole lines in any chunking, rotation bounds, long lines cut, timestamps,
 * tags, markers, the tap, reopening after an external rename, reading
 * the last lines back with output_tail, and never writing, truncating or
 * reading through a planted link or in a directory others may write to.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "output.h"
#include "test.h"

#define LMAX OUTPUT_LINE_MAX

/* "2023-11-14T22:13:20.123+00:00" and the space after it. */
#define TIME_RE                                                                \
	"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}"    \
	"[+-][0-9]{2}:[0-9]{2} "
#define TIME_PREFIX_LEN 30

static char dir[PATH_MAX];
static int dfd = -1;
static uint64_t rng = 88172645463325252ULL;

/* A growing byte buffer. */
struct buf {
	char *p;
	size_t len;
	size_t cap;
};

/* Append n bytes to b, keeping it NUL-terminated. */
static void
buf_add(struct buf *b, const void *p, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = b->cap == 0 ? 4096 : b->cap;
		while (b->len + n + 1 > b->cap)
			b->cap *= 2;
		if ((b->p = realloc(b->p, b->cap)) == NULL)
			abort();
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
}

/* Free the buffer and empty it. */
static void
buf_free(struct buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* A xorshift generator, so every run feeds the same chunks: 0 ... n - 1. */
static uint32_t
rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((uint32_t)(rng % n));
}

/* dir/NAME.log in buf, or dir/NAME.log.k for k > 0. */
static const char *
logpath(char *buf, size_t size, const char *name, int k)
{
	if (k == 0)
		snprintf(buf, size, "%.3000s/%.64s.log", dir, name);
	else
		snprintf(buf, size, "%.3000s/%.64s.log.%d", dir, name, k);
	return (buf);
}

/* A new sink for dir/NAME.log. */
static struct output_sink *
sink(const char *name)
{
	char file[128];

	snprintf(file, sizeof(file), "%.64s.log", name);
	return (output_sink_new(dfd, dir, file));
}

/* Read a whole file: allocated and NUL-terminated, or NULL if missing. */
static char *
slurp(const char *path, size_t *len)
{
	struct buf b = { NULL, 0, 0 };
	char chunk[8192];
	size_t n;
	FILE *f;

	*len = 0;
	if ((f = fopen(path, "r")) == NULL)
		return (NULL);
	buf_add(&b, "", 0);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_add(&b, chunk, n);
	fclose(f);
	*len = b.len;
	return (b.p);
}

/* Read dir/NAME.log.k (k = 0: NAME.log), or NULL if missing. */
static char *
slurp_log(const char *name, int k, size_t *len)
{
	char path[PATH_MAX];

	return (slurp(logpath(path, sizeof(path), name, k), len));
}

/* Write a whole file; 0 or -1. */
static int
spit(const char *path, const char *p, size_t n)
{
	FILE *f;
	int rv;

	if ((f = fopen(path, "w")) == NULL)
		return (-1);
	rv = fwrite(p, 1, n, f) == n ? 0 : -1;
	if (fclose(f) != 0)
		rv = -1;
	return (rv);
}

/* The size of dir/NAME.log.k, or -1 if it is missing. */
static long long
log_size(const char *name, int k)
{
	char path[PATH_MAX];
	struct stat st;

	if (stat(logpath(path, sizeof(path), name, k), &st) == -1)
		return (-1);
	return ((long long)st.st_size);
}

/*
 * Feed data to the sink in chunks of step bytes, or of random sizes from 1
 * to 8192 for step 0.
 */
static void
feed_chunks(struct output_sink *s, struct output_partial *part, const char *tag,
    const char *data, size_t len, size_t step)
{
	size_t n;

	while (len > 0) {
		n = step != 0 ? step : 1 + rnd(8192);
		if (n > len)
			n = len;
		output_feed(s, part, tag, data, n);
		data += n;
		len -= n;
	}
}

/*
 * Append numbered line num, len bytes with its newline (10 at least), to b:
 * "0000042 " then letters that depend on num and position, then "$\n".  A
 * piece of such a line is never well-formed itself.
 */
static void
numbered_line(struct buf *b, unsigned num, size_t len)
{
	char line[512];
	size_t j;

	snprintf(line, sizeof(line), "%07u ", num);
	for (j = 0; j + 10 < len; j++)
		line[8 + j] = (char)('a' + (num + j) % 26);
	line[len - 2] = '$';
	line[len - 1] = '\n';
	buf_add(b, line, len);
}

/* Check one numbered line of n bytes without its newline; -1 if bad. */
static long
numbered_check(const char *p, size_t n)
{
	unsigned num = 0;
	size_t j;

	if (n < 9 || p[7] != ' ' || p[n - 1] != '$')
		return (-1);
	for (j = 0; j < 7; j++) {
		if (p[j] < '0' || p[j] > '9')
			return (-1);
		num = num * 10 + (unsigned)(p[j] - '0');
	}
	for (j = 0; j + 9 < n; j++) {
		if (p[8 + j] != (char)('a' + (num + j) % 26))
			return (-1);
	}
	return ((long)num);
}

/* Append n numbered lines from first on, 10 to 300 bytes long, to b. */
static void
numbered_lines(struct buf *b, unsigned first, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		numbered_line(b, first + i, 10 + rnd(291));
}

/*
 * Check that p (n bytes) is whole well-formed numbered lines, each the one
 * after *next (-1: any first), and advance *next.  Set *first_len to the
 * length of the first line.  0 or -1.
 */
static int
numbered_file(const char *p, size_t n, long *next, size_t *first_len)
{
	const char *end = p + n, *nl;
	long num;

	*first_len = 0;
	if (n == 0 || p[n - 1] != '\n')
		return (-1);
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		num = numbered_check(p, (size_t)(nl - p));
		if (num == -1 || (*next != -1 && num != *next)) {
			fprintf(stderr, "  bad line %ld (want %ld): %.*s\n",
			    num, *next, (int)(nl - p), p);
			return (-1);
		}
		if (*first_len == 0)
			*first_len = (size_t)(nl - p) + 1;
		*next = num + 1;
		p = nl + 1;
	}
	return (0);
}

/* Set TZ (NULL: unset) and forget output_format_time's cached second. */
static void
set_tz(const char *tz)
{
	char t[OUTPUT_TIME_LEN];

	if (tz == NULL)
		unsetenv("TZ");
	else
		setenv("TZ", tz, 1);
	tzset();
	/*
	 * output_format_time keeps the text of the last second formatted and
	 * does not notice a TZ change within it; vigild never changes TZ.
	 * Format a second no test uses so the next call starts afresh.
	 */
	output_format_time(t, sizeof(t), INT64_C(86400123456));
}

/*
 * Check that line starts with a time and a space, within 5 seconds of now,
 * with the UTC offset zone ("+05:30") unless zone is NULL.  0 or -1.
 */
static int
time_check(const char *line, const char *zone)
{
	regex_t re;
	struct tm tm;
	const char *p;
	time_t t;
	long off;
	int ok;

	if (regcomp(&re, TIME_RE, REG_EXTENDED | REG_NOSUB) != 0)
		return (-1);
	ok = regexec(&re, line, 0, NULL, 0) == 0;
	regfree(&re);
	if (!ok) {
		fprintf(stderr, "  no time: %.40s\n", line);
		return (-1);
	}
	memset(&tm, 0, sizeof(tm));
	p = strptime(line, "%Y-%m-%dT%H:%M:%S", &tm);
	if (p == NULL || *p != '.' ||
	    (zone != NULL && strncmp(p + 4, zone, 6) != 0)) {
		fprintf(stderr, "  zone %.6s, want %s\n", p ? p + 4 : "", zone);
		return (-1);
	}
	off = (p[5] - '0') * 36000L + (p[6] - '0') * 3600L +
	    (p[8] - '0') * 600L + (p[9] - '0') * 60L;
	t = timegm(&tm) - (p[4] == '-' ? -off : off);
	if (labs((long)(t - time(NULL))) > 5) {
		fprintf(stderr, "  time %.29s is %ld s off\n", line,
		    (long)(t - time(NULL)));
		return (-1);
	}
	return (0);
}

/*
 * Check that every line of p (n bytes) starts with a time within seconds
 * of now in zone (NULL: any), and append the lines without it to out.
 */
static int
strip_times(const char *p, size_t n, const char *zone, struct buf *out)
{
	const char *end = p + n, *nl;

	while (p < end) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			return (-1);
		if ((size_t)(nl - p) < TIME_PREFIX_LEN ||
		    time_check(p, zone) != 0)
			return (-1);
		buf_add(out, p + TIME_PREFIX_LEN,
		    (size_t)(nl - p) + 1 - TIME_PREFIX_LEN);
		p = nl + 1;
	}
	return (0);
}

/* Collects what the tap is given. */
static void
tap_cb(void *arg, const char *p, size_t n)
{
	buf_add(arg, p, n);
}

/* Whole lines come out byte-identical however they are cut into reads. */
TEST(whole_lines_any_chunks)
{
	static const size_t steps[] = { 0, 1, 2, 7, 100, 65536, 1 << 20 };
	struct output_sink *s;
	struct output_partial part = { NULL, 0, 0 };
	struct buf in = { NULL, 0, 0 };
	char name[32], *got;
	size_t i, len;

	numbered_lines(&in, 0, 2000);
	buf_add(&in, "\n\n", 2); /* empty lines too */
	numbered_lines(&in, 5000, 10);
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		snprintf(name, sizeof(name), "chunks%zu", i);
		s = sink(name);
		feed_chunks(s, &part, NULL, in.p, in.len, steps[i]);
		ASSERT_EQ(part.len, 0);
		output_sink_free(s);
		got = slurp_log(name, 0, &len);
		ASSERT_OK(got != NULL);
		ASSERT_EQ(len, in.len);
		ASSERT_OK(memcmp(got, in.p, len) == 0);
		free(got);
	}
	buf_free(&in);

	/* An unfinished line waits for its newline, or for the end. */
	s = sink("partial");
	output_feed(s, &part, NULL, "abc\npart", 8);
	got = slurp_log("partial", 0, &len);
	ASSERT_STREQ(got, "abc\n");
	free(got);
	ASSERT_EQ(part.len, 4);
	output_feed(s, &part, NULL, "ial", 3);
	output_feed(s, &part, NULL, "", 0);
	got = slurp_log("partial", 0, &len);
	ASSERT_STREQ(got, "abc\n");
	free(got);
	output_feed(s, &part, NULL, "\nlast", 5);
	got = slurp_log("partial", 0, &len);
	ASSERT_STREQ(got, "abc\npartial\n");
	free(got);
	output_feed_end(s, &part, NULL);
	ASSERT_EQ(part.len, 0);
	ASSERT_OK(part.buf == NULL);
	got = slurp_log("partial", 0, &len);
	ASSERT_STREQ(got, "abc\npartial\nlast\n");
	free(got);
	/* Nothing pending: the end writes nothing. */
	output_feed_end(s, &part, NULL);
	output_sink_free(s);
	got = slurp_log("partial", 0, &len);
	ASSERT_STREQ(got, "abc\npartial\nlast\n");
	free(got);
	return (0);
}

/*
 * Check the files of a sink with max_size 4096 and keep 3 that was fed
 * numbered lines up to last: all within bounds, whole lines, consecutive,
 * and each rotated file full (the next line did not fit).
 */
static int
rotation_check(const char *name, long last)
{
	char *p[4];
	size_t len[4], first[4];
	long next = -1;
	int k, rv = -1;

	memset(p, 0, sizeof(p));
	if (log_size(name, 4) != -1 || log_size(name, 5) != -1) {
		fprintf(stderr, "  %s.log.4 exists\n", name);
		goto out;
	}
	for (k = 3; k >= 0; k--) {
		if ((p[k] = slurp_log(name, k, &len[k])) == NULL) {
			fprintf(stderr, "  %s.log.%d missing\n", name, k);
			goto out;
		}
		if (len[k] > 4096) {
			fprintf(stderr, "  %s.log.%d: %zu bytes\n", name, k,
			    len[k]);
			goto out;
		}
		if (numbered_file(p[k], len[k], &next, &first[k]) != 0) {
			fprintf(stderr, "  in %s.log.%d\n", name, k);
			goto out;
		}
	}
	if (next != last + 1) {
		fprintf(stderr, "  last line %ld, want %ld\n", next - 1, last);
		goto out;
	}
	for (k = 3; k >= 1; k--) {
		if (len[k] + first[k - 1] <= 4096) {
			fprintf(stderr, "  %s.log.%d rotated early\n", name, k);
			goto out;
		}
	}
	rv = 0;
out:
	for (k = 0; k < 4; k++)
		free(p[k]);
	return (rv);
}

/* Rotation keeps every file within max_size and every line whole. */
TEST(rotation_bounds)
{
	struct output_sink *s;
	struct output_partial part = { NULL, 0, 0 };
	struct buf in = { NULL, 0, 0 };
	unsigned n = 0;
	size_t off, step;
	long long size, prev = 0;
	int emptied = 0;
	char *got;
	size_t len, first;
	long next;

	while (in.len < 1024 * 1024)
		numbered_lines(&in, n++, 1);
	s = sink("rot");
	output_sink_configure(s, 4096, 3, 0);
	feed_chunks(s, &part, NULL, in.p, in.len, 0);
	ASSERT_OK(rotation_check("rot", (long)n - 1) == 0);

	/* A file already past max_size (max lowered) rotates first. */
	output_sink_free(s);
	s = sink("rot");
	output_sink_configure(s, 0, 3, 0);
	buf_free(&in);
	numbered_lines(&in, n, 100);
	n += 100;
	output_feed(s, &part, NULL, in.p, in.len);
	ASSERT_OK(log_size("rot", 0) > 4096);
	output_sink_configure(s, 4096, 3, 0);
	buf_free(&in);
	numbered_lines(&in, n++, 1);
	output_feed(s, &part, NULL, in.p, in.len);
	ASSERT_EQ(log_size("rot", 0), in.len);
	ASSERT_OK(log_size("rot", 1) > 4096);
	output_sink_free(s);

	/* keep = 0: the file is emptied, never above max, nothing kept. */
	buf_free(&in);
	n = 0;
	while (in.len < 200 * 1024)
		numbered_lines(&in, n++, 1);
	s = sink("keep0");
	output_sink_configure(s, 4096, 0, 0);
	for (off = 0; off < in.len; off += step) {
		step = 1 + rnd(3000);
		if (step > in.len - off)
			step = in.len - off;
		output_feed(s, &part, NULL, in.p + off, step);
		size = log_size("keep0", 0);
		ASSERT_OK(size >= 0 && size <= 4096);
		ASSERT_EQ(log_size("keep0", 1), -1);
		if (size < prev)
			emptied++;
		prev = size;
	}
	ASSERT_OK(emptied > 200 * 1024 / 4096 - 2);
	output_sink_free(s);
	got = slurp_log("keep0", 0, &len);
	ASSERT_OK(got != NULL);
	next = -1;
	ASSERT_EQ(numbered_file(got, len, &next, &first), 0);
	ASSERT_EQ(next, n);
	free(got);
	buf_free(&in);
	return (0);
}

/* Lowering keep removes the surplus rotated files at the next rotation. */
TEST(keep_lowered)
{
	struct output_sink *s;
	struct output_partial part = { NULL, 0, 0 };
	struct buf in = { NULL, 0, 0 };
	char *old1, *got;
	size_t len1, len;
	unsigned i;
	int k;

	/* 100-byte lines: ten to a 1024-byte file. */
	for (i = 0; i < 100; i++)
		numbered_line(&in, i, 100);
	s = sink("keep");
	output_sink_configure(s, 1024, 5, 0);
	output_feed(s, &part, NULL, in.p, in.len);
	for (k = 0; k <= 5; k++)
		ASSERT_EQ(log_size("keep", k), 1000);
	ASSERT_EQ(log_size("keep", 6), -1);

	output_sink_configure(s, 1024, 2, 0);
	ASSERT_EQ(log_size("keep", 5), 1000); /* not before a rotation */
	old1 = slurp_log("keep", 1, &len1);
	ASSERT_OK(old1 != NULL);
	buf_free(&in);
	numbered_line(&in, 100, 100);
	output_feed(s, &part, NULL, in.p, in.len);
	output_sink_free(s);
	for (k = 3; k <= 5; k++)
		ASSERT_EQ(log_size("keep", k), -1);
	got = slurp_log("keep", 2, &len);
	ASSERT_OK(got != NULL && len == len1 && memcmp(got, old1, len) == 0);
	free(got);
	free(old1);
	got = slurp_log("keep", 0, &len);
	ASSERT_STREQ(got, in.p);
	free(got);
	ASSERT_EQ(log_size("keep", 1), 1000);
	buf_free(&in);
	return (0);
}

/*
 * Check the lines of p (n bytes): each starts with prefix, its text is at
 * most max, and the texts together are want (wlen bytes).  Count the lines
 * in *lines.  0 or -1.
 */
static int
pieces_check(const char *p, size_t n, const char *prefix, size_t max,
    const char *want, size_t wlen, size_t *lines)
{
	const char *end = p + n, *nl;
	size_t plen = strlen(prefix), off = 0, text;

	*lines = 0;
	while (p < end) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			return (-1);
		if ((size_t)(nl - p) < plen || memcmp(p, prefix, plen) != 0)
			return (-1);
		text = (size_t)(nl - p) - plen;
		if (text > max || off + text > wlen ||
		    memcmp(want + off, p + plen, text) != 0) {
			fprintf(stderr, "  piece of %zu at %zu\n", text, off);
			return (-1);
		}
		off += text;
		(*lines)++;
		p = nl + 1;
	}
	return (off == wlen ? 0 : -1);
}

/* Lines longer than OUTPUT_LINE_MAX are cut; nothing is lost. */
TEST(long_lines_cut)
{
	static const size_t lens[] = { LMAX - 1, LMAX, LMAX + 1, 2 * LMAX,
		3 * LMAX + 100 };
	static const size_t steps[] = { 0, 1, 4096, LMAX, 1 << 20 };
	struct output_sink *s;
	struct output_partial part = { NULL, 0, 0 };
	struct buf all = { NULL, 0, 0 }, in = { NULL, 0, 0 };
	char *line, *got, name[32];
	size_t i, j, k, len, lines;
	long long size;
	int f;

	line = malloc(3 * LMAX + 101);
	ASSERT_OK(line != NULL);
	for (k = 0; k < 3 * LMAX + 100; k++)
		line[k] = (char)('A' + rnd(26));
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		line[lens[i]] = '\n';
		for (j = 0; j < sizeof(steps) / sizeof(steps[0]); j++) {
			snprintf(name, sizeof(name), "long%zu-%zu", i, j);
			s = sink(name);
			feed_chunks(
			    s, &part, NULL, line, lens[i] + 1, steps[j]);
			output_sink_free(s);
			got = slurp_log(name, 0, &len);
			ASSERT_OK(got != NULL);
			ASSERT_EQ(pieces_check(got, len, "", LMAX, line,
			              lens[i], &lines),
			    0);
			/* As many pieces as needed, however it was read. */
			ASSERT_EQ(lines, (lens[i] + LMAX - 1) / LMAX);
			free(got);
			/* Split just before the newline. */
			s = sink(name);
			output_feed(s, &part, NULL, line, lens[i]);
			output_feed(s, &part, NULL, "\n", 1);
			output_sink_free(s);
			got = slurp_log(name, 0, &len);
			ASSERT_EQ(len, 2 * (lens[i] + lines));
			ASSERT_OK(memcmp(got, got + len / 2, len / 2) == 0);
			free(got);
		}
		line[lens[i]] = 'Q';
	}

	/* A long unfinished line is cut too, and the end writes the rest. */
	s = sink("longend");
	output_feed(s, &part, NULL, line, 2 * LMAX + 5);
	ASSERT_EQ(log_size("longend", 0), 2 * (LMAX + 1));
	ASSERT_EQ(part.len, 5);
	output_feed_end(s, &part, NULL);
	output_sink_free(s);
	got = slurp_log("longend", 0, &len);
	ASSERT_EQ(
	    pieces_check(got, len, "", LMAX, line, 2 * LMAX + 5, &lines), 0);
	ASSERT_EQ(lines, 3);
	free(got);

	/* With a small max_size, pieces are cut to fit one file each. */
	for (f = 0; f < 2; f++) {
		snprintf(name, sizeof(name), "small%d", f);
		s = sink(name);
		output_sink_configure(s, 1024, 9, f);
		line[3000] = '\n';
		feed_chunks(s, &part, f ? "web@2" : NULL, line, 3001, 0);
		output_sink_free(s);
		line[3000] = 'Q';
		buf_free(&all);
		for (k = 9; k > 0; k--) {
			if ((size = log_size(name, (int)k)) == -1)
				continue;
			ASSERT_OK(size <= 1024);
			got = slurp_log(name, (int)k, &len);
			buf_add(&all, got, len);
			free(got);
		}
		ASSERT_OK(log_size(name, 0) <= 1024);
		got = slurp_log(name, 0, &len);
		buf_add(&all, got, len);
		free(got);
		if (!f) {
			ASSERT_EQ(pieces_check(all.p, all.len, "", 1023, line,
			              3000, &lines),
			    0);
			ASSERT_EQ(lines, 3);
			continue;
		}
		/* Each piece is "TIME web@2: text". */
		buf_free(&in);
		ASSERT_EQ(strip_times(all.p, all.len, NULL, &in), 0);
		ASSERT_EQ(pieces_check(in.p, in.len,
		              "web@2: ", 1024 - TIME_PREFIX_LEN - 7 - 1, line,
		              3000, &lines),
		    0);
		ASSERT_EQ(lines, 4);
	}
	buf_free(&in);
	buf_free(&all);
	free(line);
	return (0);
}

/* Format usec in the current zone; 0 if it is not want. */
static int
time_is(int64_t usec, const char *want)
{
	char t[OUTPUT_TIME_LEN];
	size_t n;

	n = output_format_time(t, sizeof(t), usec);
	if (n != strlen(want) || strcmp(t, want) != 0) {
		fprintf(stderr, "  %lld: \"%s\" (%zu), want \"%s\"\n",
		    (long long)usec, t, n, want);
		return (-1);
	}
	return (0);
}

/* Times: ISO 8601 with milliseconds and the offset of the local zone. */
TEST(timestamps)
{
	static const struct {
		const char *tz;
		const char *zone;
	} zones[] = {
		{ "UTC0", "+00:00" },
		{ "IST-5:30", "+05:30" }, /* Asia/Kolkata */
		{ "NST3:30", "-03:30" },  /* Newfoundland without summer time */
	};
	struct output_sink *s;
	struct output_partial part = { NULL, 0, 0 };
	struct buf out = { NULL, 0, 0 };
	char *old, *got, name[32];
	size_t i, len;
	int rv = 1;

	old = getenv("TZ") != NULL ? strdup(getenv("TZ")) : NULL;
	set_tz("UTC0");
	if (time_is(INT64_C(1700000000123456), "2023-11-14T22:13:20.123+00:00"))
		goto out;
	/* The same second again (cached), other milliseconds. */
	if (time_is(INT64_C(1700000000999999), "2023-11-14T22:13:20.999+00:00"))
		goto out;
	if (time_is(0, "1970-01-01T00:00:00.000+00:00"))
		goto out;
	set_tz("IST-5:30");
	if (time_is(INT64_C(1700000001000000), "2023-11-15T03:43:21.000+05:30"))
		goto out;
	set_tz("EST5EDT,M3.2.0,M11.1.0");
	if (time_is(INT64_C(1700000002999999), "2023-11-14T17:13:22.999-05:00"))
		goto out;
	if (time_is(INT64_C(1690000000000000), "2023-07-22T00:26:40.000-04:00"))
		goto out;
	set_tz("NST3:30");
	if (time_is(INT64_C(1700000003000000), "2023-11-14T18:43:23.000-03:30"))
		goto out;
	/* The named zones, where the system has them. */
	if (access("/usr/share/zoneinfo/Asia/Kolkata", R_OK) == 0) {
		set_tz("Asia/Kolkata");
		if (time_is(INT64_C(1700000004000000),
		        "2023-11-15T03:43:24.000+05:30"))
			goto out;
	}
	if (access("/usr/share/zoneinfo/America/New_York", R_OK) == 0) {
		set_tz("America/New_York");
		if (time_is(INT64_C(1700000005000000),
		        "2023-11-14T17:13:25.000-05:00") ||
		    time_is(INT64_C(1690000006000000),
		        "2023-07-22T00:26:46.000-04:00"))
			goto out;
	}

	/* Every line written with timestamps on starts with the time now. */
	for (i = 0; i < sizeof(zones) / sizeof(zones[0]); i++) {
		set_tz(zones[i].tz);
		snprintf(name, sizeof(name), "time%zu", i);
		s = sink(name);
		output_sink_configure(s, 0, 0, 1);
		output_feed(s, &part, NULL, "one\ntwo\nthr", 11);
		output_feed(s, &part, NULL, "ee\n\n", 4);
		output_feed(s, &part, NULL, "last", 4);
		output_feed_end(s, &part, NULL);
		output_sink_free(s);
		got = slurp_log(name, 0, &len);
		buf_free(&out);
		if (got == NULL || strip_times(got, len, zones[i].zone, &out)) {
			fprintf(stderr, "  in %s: %s\n", name,
			    got != NULL ? got : "(no file)");
			free(got);
			goto out;
		}
		free(got);
		if (strcmp(out.p, "one\ntwo\nthree\n\nlast\n") != 0) {
			fprintf(stderr, "  lines \"%s\"\n", out.p);
			goto out;
		}
	}
	rv = 0;
out:
	set_tz(old);
	free(old);
	buf_free(&out);
	return (rv);
}

/* Instance tags prefix each line, after the time. */
TEST(tags)
{
	static const char head[] = "web@2: hello\nweb@2: world\n"
	                           "web@2: partial\nweb@2: \nweb@2: end\n"
	                           "untagged\n";
	struct output_sink *s;
	struct output_partial part = { NULL, 0, 0 };
	struct buf out = { NULL, 0, 0 };
	char tag[101], want[200], *got;
	size_t len;

	s = sink("tag");
	output_feed(s, &part, "web@2", "hello\nworld\npar", 15);
	output_feed(s, &part, "web@2", "tial\n\nend", 9);
	output_feed_end(s, &part, "web@2");
	output_feed(s, &part, NULL, "untagged\n", 9);
	memset(tag, 'x', 100);
	tag[100] = '\0';
	output_feed(s, &part, tag, "long tag\n", 9);
	output_sink_free(s);
	got = slurp_log("tag", 0, &len);
	memset(want, 'x', 64);
	want[64] = '\0';
	ASSERT_OK(got != NULL && len > 0);
	ASSERT_OK(strncmp(got, head, strlen(head)) == 0);
	ASSERT_EQ(len, strlen(head) + 64 + 2 + 9);
	ASSERT_OK(memcmp(got + strlen(head), want, 64) == 0);
	ASSERT_STREQ(got + strlen(head) + 64, ": long tag\n");
	free(got);

	s = sink("tagtime");
	output_sink_configure(s, 0, 0, 1);
	output_feed(s, &part, "web@2", "hello\n", 6);
	output_sink_free(s);
	got = slurp_log("tagtime", 0, &len);
	ASSERT_OK(got != NULL);
	ASSERT_EQ(strip_times(got, len, NULL, &out), 0);
	ASSERT_STREQ(out.p, "web@2: hello\n");
	free(got);
	buf_free(&out);
	return (0);
}

/* Markers are lines of vigil's own, with the same prefixes. */
TEST(markers)
{
	struct output_sink *s;
	struct output_partial part = { NULL, 0, 0 };
	struct buf out = { NULL, 0, 0 };
	char big[1000], *got;
	size_t len;

	s = sink("mark");
	output_marker(s, NULL, "started pid %d", 12);
	output_marker(s, "web@2", "exited %d", 0);
	output_feed(s, &part, NULL, "wait", 4);
	output_marker(s, NULL, "%s", "between");
	output_feed_end(s, &part, NULL);
	output_sink_free(s);
	got = slurp_log("mark", 0, &len);
	ASSERT_STREQ(got,
	    "vigil: started pid 12\nweb@2: vigil: exited 0\n"
	    "vigil: between\nwait\n");
	free(got);

	s = sink("marktime");
	output_sink_configure(s, 0, 0, 1);
	output_marker(s, "web@2", "started pid %d", 12);
	memset(big, 'm', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	output_marker(s, NULL, "%s", big);
	output_sink_free(s);
	got = slurp_log("marktime", 0, &len);
	ASSERT_OK(got != NULL);
	ASSERT_EQ(strip_times(got, len, NULL, &out), 0);
	free(got);
	/* A long one is cut to 511 bytes. */
	ASSERT_EQ(out.len, 29 + 511 + 1);
	ASSERT_OK(strncmp(out.p, "web@2: vigil: started pid 12\nvigil: mmm",
	              39) == 0);
	ASSERT_OK(memcmp(out.p + 29 + 7, big, 511 - 7) == 0);
	ASSERT_OK(out.p[out.len - 1] == '\n');
	buf_free(&out);
	return (0);
}

/* The tap sees exactly what is written. */
TEST(tap)
{
	struct output_sink *s;
	struct output_partial part = { NULL, 0, 0 }, part2 = { NULL, 0, 0 };
	struct buf tap = { NULL, 0, 0 }, in = { NULL, 0, 0 };
	struct buf files = { NULL, 0, 0 };
	char *got, big[LMAX + 50];
	size_t len;
	int k;

	numbered_lines(&in, 0, 300);
	memset(big, 'b', sizeof(big));
	s = sink("tap");
	output_sink_configure(s, 0, 0, 1);
	output_sink_set_tap(s, tap_cb, &tap);
	feed_chunks(s, &part, "web@1", in.p, in.len, 0);
	output_feed(s, &part2, "web@2", "other pipe", 10);
	output_marker(s, NULL, "started pid %d", 12);
	output_feed(s, &part, NULL, big, sizeof(big));
	output_feed_end(s, &part, NULL);
	output_feed_end(s, &part2, "web@2");
	output_sink_free(s);
	got = slurp_log("tap", 0, &len);
	ASSERT_OK(got != NULL);
	ASSERT_OK(len > in.len + sizeof(big));
	ASSERT_EQ(tap.len, len);
	ASSERT_OK(memcmp(tap.p, got, len) == 0);
	free(got);

	/* Across rotations, when every file is kept. */
	buf_free(&tap);
	s = sink("taprot");
	output_sink_configure(s, 1024, 1000, 0);
	output_sink_set_tap(s, tap_cb, &tap);
	feed_chunks(s, &part, NULL, in.p, in.len, 0);
	output_sink_free(s);
	ASSERT_EQ(log_size("taprot", 1000), -1);
	ASSERT_OK(log_size("taprot", 20) != -1);
	for (k = 999; k >= 0; k--) {
		if ((got = slurp_log("taprot", k, &len)) == NULL)
			continue;
		buf_add(&files, got, len);
		free(got);
	}
	ASSERT_EQ(files.len, in.len);
	ASSERT_EQ(tap.len, in.len);
	ASSERT_OK(memcmp(tap.p, in.p, in.len) == 0);
	ASSERT_OK(memcmp(files.p, in.p, in.len) == 0);
	buf_free(&files);
	buf_free(&tap);
	buf_free(&in);
	return (0);
}

/* After an external rename and a reopen, a new file is started. */
TEST(reopen)
{
	struct output_sink *s;
	struct output_partial part = { NULL, 0, 0 };
	char path[PATH_MAX], moved[PATH_MAX + 8], *got;
	size_t len;

	s = sink("reopen");
	output_feed(s, &part, NULL, "one\n", 4);
	logpath(path, sizeof(path), "reopen", 0);
	snprintf(moved, sizeof(moved), "%s.old", path);
	ASSERT_EQ(rename(path, moved), 0);
	/* Until the reopen, lines go to the renamed file. */
	output_feed(s, &part, NULL, "two\n", 4);
	ASSERT_EQ(log_size("reopen", 0), -1);
	output_sink_reopen(s);
	output_sink_reopen(s);
	output_feed(s, &part, NULL, "three\n", 6);
	got = slurp(moved, &len);
	ASSERT_STREQ(got, "one\ntwo\n");
	free(got);
	got = slurp_log("reopen", 0, &len);
	ASSERT_STREQ(got, "three\n");
	free(got);
	ASSERT_STREQ(output_sink_path(s), path);
	output_sink_free(s);

	/* The size of the file found at the reopen counts toward max_size. */
	s = sink("reopen2");
	output_sink_configure(s, 1024, 2, 0);
	output_feed(s, &part, NULL, "x\n", 2);
	output_sink_reopen(s);
	got = malloc(1001);
	ASSERT_OK(got != NULL);
	memset(got, 'y', 1000);
	got[999] = '\n';
	got[1000] = '\0';
	ASSERT_EQ(
	    spit(logpath(path, sizeof(path), "reopen2", 0), got, 1000), 0);
	free(got);
	output_feed(s, &part, NULL, "0123456789012345678901234\n", 26);
	output_sink_free(s);
	ASSERT_EQ(log_size("reopen2", 1), 1000);
	ASSERT_EQ(log_size("reopen2", 0), 26);
	return (0);
}

/*
 * output_tail of path into a NUL-terminated *out (never NULL); the result
 * of output_tail.
 */
static int
tail(const char *path, size_t n, size_t max, char **out)
{
	char *p, *cause = NULL;
	size_t len;
	int rv;

	rv = output_tail(AT_FDCWD, path, n, max, &p, &len, &cause);
	if (rv != 0) {
		fprintf(stderr, "  tail %s: %s\n", path, cause);
		free(cause);
		len = 0;
	}
	if ((*out = malloc(len + 1)) == NULL)
		abort();
	if (len > 0)
		memcpy(*out, p, len);
	(*out)[len] = '\0';
	free(p);
	return (rv);
}

/* Tail of dir/NAME.log; 0 if it is want. */
static int
tail_is(const char *name, size_t n, size_t max, const char *want)
{
	char path[PATH_MAX], *got;
	int ok;

	if (tail(logpath(path, sizeof(path), name, 0), n, max, &got) != 0) {
		free(got);
		return (-1);
	}
	ok = strcmp(got, want) == 0;
	if (!ok)
		fprintf(stderr, "  tail %s %zu %zu: \"%s\", want \"%s\"\n",
		    name, n, max, got, want);
	free(got);
	return (ok ? 0 : -1);
}

/* Write dir/NAME.log.k (k = 0: NAME.log); 0 or -1. */
static int
spit_log(const char *name, int k, const char *text)
{
	char path[PATH_MAX];

	return (spit(logpath(path, sizeof(path), name, k), text, strlen(text)));
}

/* The last lines of one file, or of NAME.log.1 and NAME.log together. */
TEST(tail_small)
{
	ASSERT_EQ(spit_log("t", 0, "l1\nl2\nl3\nl4\nl5\n"), 0);
	ASSERT_EQ(tail_is("t", 0, SIZE_MAX, ""), 0);
	ASSERT_EQ(tail_is("t", 1, SIZE_MAX, "l5\n"), 0);
	ASSERT_EQ(tail_is("t", 3, SIZE_MAX, "l3\nl4\nl5\n"), 0);
	ASSERT_EQ(tail_is("t", 5, SIZE_MAX, "l1\nl2\nl3\nl4\nl5\n"), 0);
	ASSERT_EQ(tail_is("t", 100, SIZE_MAX, "l1\nl2\nl3\nl4\nl5\n"), 0);

	/* Without a trailing newline, the last line is still a line. */
	ASSERT_EQ(spit_log("nonl", 0, "l1\nl2\nl3"), 0);
	ASSERT_EQ(tail_is("nonl", 0, SIZE_MAX, ""), 0);
	ASSERT_EQ(tail_is("nonl", 1, SIZE_MAX, "l3"), 0);
	ASSERT_EQ(tail_is("nonl", 2, SIZE_MAX, "l2\nl3"), 0);
	ASSERT_EQ(tail_is("nonl", 9, SIZE_MAX, "l1\nl2\nl3"), 0);
	ASSERT_EQ(spit_log("one", 0, "only"), 0);
	ASSERT_EQ(tail_is("one", 1, SIZE_MAX, "only"), 0);
	ASSERT_EQ(spit_log("blank", 0, "\n\n\n"), 0);
	ASSERT_EQ(tail_is("blank", 2, SIZE_MAX, "\n\n"), 0);
	ASSERT_EQ(tail_is("blank", 5, SIZE_MAX, "\n\n\n"), 0);

	/* Empty and missing files are empty. */
	ASSERT_EQ(spit_log("empty", 0, ""), 0);
	ASSERT_EQ(tail_is("empty", 10, SIZE_MAX, ""), 0);
	ASSERT_EQ(tail_is("missing", 10, SIZE_MAX, ""), 0);

	/* NAME.log has fewer than n: the rest comes from NAME.log.1. */
	ASSERT_EQ(spit_log("two", 1, "a1\na2\na3\n"), 0);
	ASSERT_EQ(spit_log("two", 2, "never\n"), 0);
	ASSERT_EQ(spit_log("two", 0, "b1\nb2\n"), 0);
	ASSERT_EQ(tail_is("two", 1, SIZE_MAX, "b2\n"), 0);
	ASSERT_EQ(tail_is("two", 2, SIZE_MAX, "b1\nb2\n"), 0);
	ASSERT_EQ(tail_is("two", 3, SIZE_MAX, "a3\nb1\nb2\n"), 0);
	ASSERT_EQ(tail_is("two", 4, SIZE_MAX, "a2\na3\nb1\nb2\n"), 0);
	ASSERT_EQ(tail_is("two", 50, SIZE_MAX, "a1\na2\na3\nb1\nb2\n"), 0);
	/* Just rotated: an empty NAME.log. */
	ASSERT_EQ(spit_log("two", 0, ""), 0);
	ASSERT_EQ(tail_is("two", 2, SIZE_MAX, "a2\na3\n"), 0);
	/* Or none (renamed by logrotate). */
	ASSERT_EQ(spit_log("one", 1, "x1\nx2\n"), 0);
	ASSERT_EQ(tail_is("one", 2, SIZE_MAX, "x2\nonly"), 0);
	ASSERT_EQ(spit_log("gone", 1, "x1\nx2\n"), 0);
	ASSERT_EQ(tail_is("gone", 1, SIZE_MAX, "x2\n"), 0);
	return (0);
}

/*
 * Where the last n lines of p (size bytes) start, reading only the window
 * of max bytes at the end.  Only lines known to be whole count: a line
 * starting at the window's edge counts only if strict is 0 (the newline
 * before it is just outside).
 */
static size_t
ref_tail(const char *p, size_t size, size_t n, size_t max, int strict)
{
	size_t floor = size > max ? size - max : 0, start = size, i, found = 0;

	if (n == 0 || size == 0)
		return (size);
	i = p[size - 1] == '\n' ? size - 1 : size;
	while (i > 0 && found < n) {
		i--;
		if (p[i] != '\n')
			continue;
		if (i + 1 < floor + (strict ? 1 : 0))
			break;
		found++;
		start = i + 1;
	}
	if (i == 0 && found < n && floor == 0)
		start = 0;
	return (start);
}

/* A big file, scanned across 64 KiB chunks, and the bytes window. */
TEST(tail_big)
{
	static const size_t ns[] = { 1, 2, 10, 500, 1000, 5000, 100000 };
	static const size_t maxes[] = { SIZE_MAX, 200000, 65536, 65537, 70000,
		1000, 301, 100, 10, 1, 0 };
	struct buf in = { NULL, 0, 0 };
	char path[PATH_MAX], line[32], *got;
	size_t i, j, a, b, n, t, total = 0, len;
	unsigned num = 0;

	while (in.len < 300 * 1024)
		numbered_lines(&in, num++, 1);
	ASSERT_EQ(spit(logpath(path, sizeof(path), "big", 0), in.p, in.len), 0);
	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		for (j = 0; j < sizeof(maxes) / sizeof(maxes[0]); j++) {
			a = ref_tail(in.p, in.len, ns[i], maxes[j], 1);
			b = ref_tail(in.p, in.len, ns[i], maxes[j], 0);
			ASSERT_EQ(tail(path, ns[i], maxes[j], &got), 0);
			len = strlen(got);
			/* Either way: whole lines at the end, within max. */
			if ((len != in.len - a || strcmp(got, in.p + a) != 0) &&
			    (len != in.len - b || strcmp(got, in.p + b) != 0))
				TEST_FAIL_("tail %zu %zu: %zu bytes, want %zu",
				    ns[i], maxes[j], len, in.len - a);
			ASSERT_OK(len <= maxes[j]);
			total += len;
			free(got);
		}
	}
	ASSERT_OK(total > 0);
	/* All of it, and a line for every number. */
	ASSERT_EQ(tail(path, num + 1, SIZE_MAX, &got), 0);
	ASSERT_STREQ(got, in.p);
	free(got);
	ASSERT_EQ(tail(path, num, in.len, &got), 0);
	ASSERT_STREQ(got, in.p);
	free(got);
	buf_free(&in);

	/*
	 * Sixteen-byte lines after a last line of t bytes: for t = 15 and 16
	 * a newline is the first or the last byte of a 64 KiB chunk.
	 */
	for (t = 1; t <= 17; t++) {
		for (i = 0; i < 3 * 4096 + 7; i++) {
			snprintf(line, sizeof(line), "%015zu\n", i);
			buf_add(&in, line, 16);
		}
		memset(line, 'z', t - 1);
		line[t - 1] = '\n';
		buf_add(&in, line, t);
		ASSERT_EQ(spit(path, in.p, in.len), 0);
		for (n = 4090; n <= 4100; n++) {
			a = ref_tail(in.p, in.len, n, SIZE_MAX, 1);
			ASSERT_EQ(tail(path, n, SIZE_MAX, &got), 0);
			ASSERT_EQ(strlen(got), in.len - a);
			ASSERT_STREQ(got, in.p + a);
			free(got);
			a = ref_tail(in.p, in.len, n + 4096, SIZE_MAX, 1);
			ASSERT_EQ(tail(path, n + 4096, SIZE_MAX, &got), 0);
			ASSERT_EQ(strlen(got), in.len - a);
			ASSERT_STREQ(got, in.p + a);
			free(got);
		}
		buf_free(&in);
	}

	/* Ten-byte lines: a 35-byte window holds three whole ones. */
	ASSERT_EQ(spit_log("ten", 0,
	              "000000001\n000000002\n000000003\n"
	              "000000004\n000000005\n"),
	    0);
	ASSERT_EQ(
	    tail_is("ten", 100, 35, "000000003\n000000004\n000000005\n"), 0);
	ASSERT_EQ(tail_is("ten", 2, 35, "000000004\n000000005\n"), 0);
	ASSERT_EQ(tail_is("ten", 100, 9, ""), 0);
	ASSERT_EQ(tail_is("ten", 100, 0, ""), 0);

	/* The window spans NAME.log.1 and NAME.log. */
	ASSERT_EQ(spit_log("win", 1, "a1\na2\na3\n"), 0);
	ASSERT_EQ(spit_log("win", 0, "b1\nb2\n"), 0);
	ASSERT_EQ(tail_is("win", 10, 8, "b1\nb2\n"), 0);
	ASSERT_EQ(tail_is("win", 10, 10, "a3\nb1\nb2\n"), 0);
	ASSERT_EQ(tail_is("win", 10, 13, "a2\na3\nb1\nb2\n"), 0);
	/* A line of NAME.log cut by the window: nothing older after it. */
	ASSERT_EQ(spit_log("cut", 1, "a1\na2\n"), 0);
	ASSERT_EQ(spit_log("cut", 0,
	              "a long line that does not fit the window\nb2\n"),
	    0);
	ASSERT_EQ(tail_is("cut", 5, 20, "b2\n"), 0);
	ASSERT_EQ(tail_is("cut", 5, 2, ""), 0);
	ASSERT_EQ(tail_is("cut", 5, 1000,
	              "a1\na2\na long line that does not fit the window\nb2\n"),
	    0);
	return (0);
}

/* The last lines of a rotating sink's files, read back. */
TEST(tail_rotated)
{
	struct output_sink *s;
	struct output_partial part = { NULL, 0, 0 };
	struct buf in = { NULL, 0, 0 }, both = { NULL, 0, 0 };
	char path[PATH_MAX], *got, *p;
	size_t len, lines, n;
	unsigned i;

	for (i = 0; i < 25; i++)
		numbered_line(&in, i, 100);
	s = sink("tr");
	output_sink_configure(s, 1024, 3, 0);
	output_feed(s, &part, NULL, in.p, in.len);
	output_sink_free(s);
	/* Lines 10..19 in NAME.log.1, 20..24 in NAME.log. */
	ASSERT_EQ(log_size("tr", 0), 500);
	logpath(path, sizeof(path), "tr", 0);
	for (n = 0; n <= 20; n++) {
		ASSERT_EQ(tail(path, n, SIZE_MAX, &got), 0);
		lines = n < 15 ? n : 15;
		ASSERT_EQ(strlen(got), lines * 100);
		ASSERT_STREQ(got, in.p + in.len - lines * 100);
		free(got);
	}
	p = slurp_log("tr", 1, &len);
	buf_add(&both, p, len);
	free(p);
	p = slurp_log("tr", 0, &len);
	buf_add(&both, p, len);
	free(p);
	ASSERT_EQ(both.len, 1500);
	ASSERT_OK(memcmp(both.p, in.p + 1000, 1500) == 0);
	buf_free(&both);
	buf_free(&in);
	return (0);
}

/* Feed 3000 bytes of 100-byte lines to a sink rotating at 1024 bytes. */
static void
feed_3000(struct output_sink *s, int keep)
{
	struct output_partial part = { NULL, 0, 0 };
	struct buf in = { NULL, 0, 0 };
	unsigned i;

	for (i = 0; i < 30; i++)
		numbered_line(&in, i, 100);
	output_sink_configure(s, 1024, keep, 0);
	output_feed(s, &part, NULL, in.p, in.len);
	output_partial_clear(&part);
	buf_free(&in);
}

/* Is dir/name a file holding exactly text? */
static int
holds(const char *name, const char *text)
{
	char path[PATH_MAX], *got;
	size_t len;
	int ok;

	snprintf(path, sizeof(path), "%.3000s/%.64s", dir, name);
	if ((got = slurp(path, &len)) == NULL)
		return (0);
	ok = len == strlen(text) && memcmp(got, text, len) == 0;
	free(got);
	return (ok);
}

/*
 * A symbolic link, a second hard link or a FIFO planted as NAME.log: the
 * target is neither written, nor truncated by a rotation (keep 0 empties
 * the file), nor read by tail; a FIFO does not block.
 */
TEST(planted_links)
{
	static const char secret[] = "root:x:0:0:secret\n";
	struct output_sink *s;
	char path[PATH_MAX], *out = NULL, *cause = NULL;
	size_t len;
	int keep;

	snprintf(path, sizeof(path), "%.3000s/victim", dir);
	ASSERT_EQ(spit(path, secret, strlen(secret)), 0);
	ASSERT_EQ(symlinkat("victim", dfd, "sym.log"), 0);
	ASSERT_EQ(linkat(dfd, "victim", dfd, "hard.log", 0), 0);
	ASSERT_EQ(mkfifoat(dfd, "fifo.log", 0600), 0);
	for (keep = 0; keep < 2; keep++) {
		s = sink("sym");
		feed_3000(s, keep);
		output_sink_free(s);
		ASSERT_OK(holds("victim", secret));
		s = sink("hard");
		feed_3000(s, keep);
		output_sink_free(s);
		ASSERT_OK(holds("victim", secret));
	}
	s = sink("fifo");
	feed_3000(s, 0);
	output_sink_free(s);
	ASSERT_OK(holds("victim", secret));

	/* tail reads no file through a link, and no FIFO. */
	ASSERT_EQ(unlinkat(dfd, "sym.log", 0), 0);
	ASSERT_EQ(symlinkat("victim", dfd, "sym.log"), 0);
	ASSERT_EQ(
	    output_tail(dfd, "sym.log", 10, SIZE_MAX, &out, &len, &cause), -1);
	ASSERT_OK(strstr(cause, "symbolic link") != NULL);
	free(cause);
	cause = NULL;
	ASSERT_EQ(
	    output_tail(dfd, "fifo.log", 10, SIZE_MAX, &out, &len, &cause), -1);
	free(cause);
	return (0);
}

/*
 * A log directory that others may write to gets no file; once it is safe
 * again, lines are written.
 */
TEST(unsafe_dir)
{
	struct output_partial part = { NULL, 0, 0 };
	struct output_sink *s;
	char sub[PATH_MAX], path[PATH_MAX], *got;
	size_t len;
	int fd;

	snprintf(sub, sizeof(sub), "%.3000s/open", dir);
	ASSERT_EQ(mkdir(sub, 0700), 0);
	ASSERT_EQ(chmod(sub, 01777), 0);
	ASSERT_OK((fd = open(sub, O_RDONLY | O_DIRECTORY)) >= 0);
	s = output_sink_new(fd, sub, "x.log");
	output_feed(s, &part, NULL, "one\n", 4);
	snprintf(path, sizeof(path), "%.3000s/x.log", sub);
	ASSERT_EQ(access(path, F_OK), -1);
	ASSERT_EQ(chmod(sub, 0755), 0);
	output_feed(s, &part, NULL, "two\n", 4);
	output_sink_free(s);
	got = slurp(path, &len);
	ASSERT_STREQ(got, "two\n");
	free(got);
	close(fd);
	return (0);
}

int
main(void)
{
	const char *tmp = getenv("TMPDIR");

	if (tmp == NULL || *tmp == '\0')
		tmp = "/tmp";
	snprintf(dir, sizeof(dir), "%s/test-output.XXXXXX", tmp);
	if (mkdtemp(dir) == NULL ||
	    (dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		perror(dir);
		return (1);
	}
	RUN(whole_lines_any_chunks);
	RUN(rotation_bounds);
	RUN(keep_lowered);
	RUN(long_lines_cut);
	RUN(timestamps);
	RUN(tags);
	RUN(markers);
	RUN(tap);
	RUN(reopen);
	RUN(tail_small);
	RUN(tail_big);
	RUN(tail_rotated);
	RUN(planted_links);
	RUN(unsafe_dir);
	if (test_failed == 0)
		test_rmtree(dir);
	else
		printf("# kept %s\n", dir);
	TEST_MAIN_END();
}
