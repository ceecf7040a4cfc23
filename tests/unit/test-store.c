/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Tests of state.db in a temporary directory: schema creation, the run
 * round trip, bounded retention, recovery of open runs, intents, corrupt
 * and foreign files, unwritable places, and a store that keeps working
 * after an error.  SQLite is used directly only to play another process
 * that holds the write lock.  The last test prints (as "# " lines) what a
 * recorded run costs and how large the file grows.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "queue.h"
#include "store.h"
#include "test.h"

#define MAX_RUNS 16

static char dir[] = "/tmp/test-store.XXXXXX";

struct runs {
	struct store_run r[MAX_RUNS];
	int n;
};

struct intents {
	struct store_intent it[MAX_RUNS];
	int n;
};

static const char *
tpath(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
	return (buf);
}

static double
mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
}

static void
collect_run(const struct store_run *r, void *arg)
{
	struct runs *rs = arg;

	if (rs->n < MAX_RUNS)
		rs->r[rs->n] = *r;
	rs->n++;
}

static void
collect_intent(const struct store_intent *it, void *arg)
{
	struct intents *is = arg;

	if (is->n < MAX_RUNS)
		is->it[is->n] = *it;
	is->n++;
}

/* Count a job's runs, checking that ids grow; the first id in *first. */
struct count {
	int n;
	int64_t first, last;
	int unordered;
};

static void
count_run(const struct store_run *r, void *arg)
{
	struct count *c = arg;

	if (c->n == 0)
		c->first = r->id;
	else if (r->id <= c->last)
		c->unordered = 1;
	c->last = r->id;
	c->n++;
}

static int
count_runs(struct store *s, const char *job)
{
	struct count c;

	memset(&c, 0, sizeof(c));
	if (store_history(s, job, -1, count_run, &c, NULL) == -1 || c.unordered)
		return (-1);
	return (c.n);
}

/* Read a big-endian integer of len bytes at off in a file. */
static long
header_field(const char *path, off_t off, size_t len)
{
	unsigned char b[4];
	long v = 0;
	size_t i;
	int fd;

	if ((fd = open(path, O_RDONLY)) == -1)
		return (-1);
	if (pread(fd, b, len, off) != (ssize_t)len) {
		close(fd);
		return (-1);
	}
	close(fd);
	for (i = 0; i < len; i++)
		v = v << 8 | b[i];
	return (v);
}

static int
overwrite(const char *path, off_t off, int byte, size_t len, int random)
{
	unsigned char buf[4096];
	size_t i;
	int fd;

	if (len > sizeof(buf))
		return (-1);
	for (i = 0; i < len; i++)
		buf[i] = random ? (unsigned char)(i * 7919 + 13) : byte;
	if ((fd = open(path, O_WRONLY | O_CREAT, 0644)) == -1)
		return (-1);
	if (pwrite(fd, buf, len, off) != (ssize_t)len) {
		close(fd);
		return (-1);
	}
	return (close(fd));
}

/* Number of files in dir whose names start with prefix. */
static int
count_files(const char *prefix)
{
	struct dirent *de;
	DIR *d;
	int n = 0;

	if ((d = opendir(dir)) == NULL)
		return (-1);
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, prefix, strlen(prefix)) == 0)
			n++;
	}
	closedir(d);
	return (n);
}

static off_t
file_size(const char *path)
{
	struct stat sb;

	return (stat(path, &sb) == -1 ? 0 : sb.st_size);
}

/* Record n finished runs of job, keeping keep. */
static int
record_runs(struct store *s, const char *job, int n, int keep, int64_t t0)
{
	char run_id[33];
	int64_t id;
	int i;

	for (i = 0; i < n; i++) {
		snprintf(run_id, sizeof(run_id), "%032x", i);
		if (store_run_begin(
		        s, job, 0, run_id, 1000 + i, t0 + i, &id, NULL) == -1 ||
		    store_run_end(
		        s, id, t0 + i + 1, 0, -1, "exited", keep, NULL) == -1)
			return (-1);
	}
	return (0);
}

TEST(open_creates_schema)
{
	struct store *s;
	char p[256], *cause = NULL;

	tpath(p, sizeof(p), "schema.db");
	ASSERT_OK((s = store_open(p, &cause)) != NULL);
	ASSERT_OK(cause == NULL);
	store_close(s);
	ASSERT_EQ(header_field(p, 60, 4), 5); /* user_version */
	ASSERT_EQ(header_field(p, 18, 1), 2); /* WAL */
	/* Opening it again migrates nothing and loses nothing. */
	ASSERT_OK((s = store_open(p, &cause)) != NULL);
	ASSERT_OK(cause == NULL);
	store_close(s);
	ASSERT_EQ(header_field(p, 60, 4), 5);
	store_close(NULL);
	ASSERT_OK((s = store_open(":memory:", &cause)) != NULL);
	ASSERT_OK(cause == NULL);
	store_close(s);
	return (0);
}

TEST(run_round_trip)
{
	struct store *s;
	struct runs rs;
	char p[256], *cause = NULL;
	int64_t a, b, c;

	ASSERT_OK((s = store_open(tpath(p, sizeof(p), "runs.db"), NULL)));
	ASSERT_EQ(store_run_begin(s, "web", 0, "r1", 101, 1000, &a, &cause), 0);
	ASSERT_OK(a > 0);
	ASSERT_EQ(store_run_ready(s, a, 1500, &cause), 0);
	ASSERT_EQ(store_run_end(s, a, 2000, 3, -1, "exited", 10, &cause), 0);
	ASSERT_EQ(store_run_begin(s, "web", 1, "r2", 102, 3000, &b, &cause), 0);
	ASSERT_EQ(store_run_end(s, b, 4000, -1, 9, "killed after stop_timeout",
	              10, &cause),
	    0);
	ASSERT_EQ(store_run_begin(s, "web", 0, "r3", 103, 5000, &c, &cause), 0);
	ASSERT_EQ(store_run_begin(s, "other", 0, "o1", 0, 5500, &a, &cause), 0);
	ASSERT_OK(cause == NULL);

	memset(&rs, 0, sizeof(rs));
	ASSERT_EQ(store_history(s, "web", 10, collect_run, &rs, &cause), 0);
	ASSERT_EQ(rs.n, 3);
	ASSERT_STREQ(rs.r[0].job, "web");
	ASSERT_EQ(rs.r[0].instance, 0);
	ASSERT_STREQ(rs.r[0].run_id, "r1");
	ASSERT_EQ(rs.r[0].pid, 101);
	ASSERT_EQ(rs.r[0].started, 1000);
	ASSERT_EQ(rs.r[0].ready, 1500);
	ASSERT_EQ(rs.r[0].ended, 2000);
	ASSERT_EQ(rs.r[0].exit_code, 3);
	ASSERT_EQ(rs.r[0].signal, -1);
	ASSERT_STREQ(rs.r[0].reason, "exited");
	ASSERT_EQ(rs.r[1].id, b);
	ASSERT_EQ(rs.r[1].instance, 1);
	ASSERT_EQ(rs.r[1].ready, 0);
	ASSERT_EQ(rs.r[1].exit_code, -1);
	ASSERT_EQ(rs.r[1].signal, 9);
	ASSERT_STREQ(rs.r[1].reason, "killed after stop_timeout");
	/* Still open: no end, no status, no reason. */
	ASSERT_EQ(rs.r[2].id, c);
	ASSERT_EQ(rs.r[2].ended, 0);
	ASSERT_EQ(rs.r[2].exit_code, -1);
	ASSERT_EQ(rs.r[2].signal, -1);
	ASSERT_STREQ(rs.r[2].reason, "");

	/* The newest n, still oldest first. */
	memset(&rs, 0, sizeof(rs));
	ASSERT_EQ(store_history(s, "web", 2, collect_run, &rs, &cause), 0);
	ASSERT_EQ(rs.n, 2);
	ASSERT_EQ(rs.r[0].id, b);
	ASSERT_EQ(rs.r[1].id, c);
	memset(&rs, 0, sizeof(rs));
	ASSERT_EQ(store_history(s, "none", 10, collect_run, &rs, &cause), 0);
	ASSERT_EQ(rs.n, 0);
	memset(&rs, 0, sizeof(rs));
	ASSERT_EQ(store_history(s, "other", 10, collect_run, &rs, &cause), 0);
	ASSERT_EQ(rs.n, 1);
	ASSERT_EQ(rs.r[0].pid, 0); /* no pid recorded */

	/* A run no longer recorded is not an error. */
	ASSERT_EQ(store_run_ready(s, 999999, 1, &cause), 0);
	ASSERT_EQ(store_run_end(s, 999999, 1, 0, -1, "exited", 10, &cause), 0);
	ASSERT_OK(cause == NULL);
	store_close(s);
	return (0);
}

TEST(skipped_and_last_start)
{
	struct store *s;
	struct runs rs;
	char p[256], *cause = NULL;
	int64_t a, at = -1;
	int i;

	ASSERT_OK((s = store_open(tpath(p, sizeof(p), "skip.db"), NULL)));
	ASSERT_EQ(store_last_start(s, "tick", &at, &cause), 0);
	ASSERT_EQ(at, 0);
	ASSERT_EQ(store_run_begin(s, "tick", 0, "r1", 7, 1000, &a, &cause), 0);
	ASSERT_EQ(store_run_skipped(s, "tick", 0, 2000, 10, &cause), 0);
	ASSERT_EQ(store_run_begin(s, "other", 0, "o1", 8, 9000, &a, &cause), 0);
	ASSERT_EQ(store_last_start(s, "tick", &at, &cause), 0);
	ASSERT_EQ(at, 2000);
	ASSERT_EQ(store_last_start(s, "other", &at, &cause), 0);
	ASSERT_EQ(at, 9000);
	memset(&rs, 0, sizeof(rs));
	ASSERT_EQ(store_history(s, "tick", 10, collect_run, &rs, &cause), 0);
	ASSERT_EQ(rs.n, 2);
	ASSERT_EQ(rs.r[1].pid, 0);
	ASSERT_EQ(rs.r[1].started, 2000);
	ASSERT_EQ(rs.r[1].ended, 2000);
	ASSERT_EQ(rs.r[1].exit_code, -1);
	ASSERT_STREQ(rs.r[1].reason, "skipped");
	/* Skipped slots are pruned like runs: keep 3 of them. */
	for (i = 0; i < 10; i++)
		ASSERT_EQ(
		    store_run_skipped(s, "tick", 0, 3000 + i, 3, &cause), 0);
	memset(&rs, 0, sizeof(rs));
	ASSERT_EQ(store_history(s, "tick", 100, collect_run, &rs, &cause), 0);
	/* The open run r1 is never pruned. */
	ASSERT_EQ(rs.n, 4);
	ASSERT_EQ(rs.r[3].started, 3009);
	ASSERT_OK(cause == NULL);
	store_close(s);
	return (0);
}

TEST(retention)
{
	struct store *s;
	struct runs rs;
	char p[256];
	int64_t open_id;
	int i;

	ASSERT_OK((s = store_open(tpath(p, sizeof(p), "keep.db"), NULL)));
	ASSERT_EQ(record_runs(s, "b", 50, 100, 1), 0);
	for (i = 0; i < 30; i++)
		ASSERT_EQ(record_runs(s, "a", 100, 100, i * 100), 0);
	ASSERT_EQ(count_runs(s, "a"), 100);
	ASSERT_EQ(count_runs(s, "b"), 50);
	/* The newest were kept. */
	memset(&rs, 0, sizeof(rs));
	ASSERT_EQ(store_history(s, "a", 1, collect_run, &rs, NULL), 0);
	ASSERT_EQ(rs.n, 1);
	ASSERT_EQ(rs.r[0].started, 29 * 100 + 99);

	/* Lowering keep prunes at the next end. */
	ASSERT_EQ(record_runs(s, "a", 1, 10, 5000), 0);
	ASSERT_EQ(count_runs(s, "a"), 10);
	ASSERT_EQ(count_runs(s, "b"), 50);

	/*
	 * An open run is never pruned, even when it falls out of keep; once
	 * ended, it goes (runs are ordered by their start).
	 */
	ASSERT_EQ(store_run_begin(s, "c", 1, "long", 7, 1, &open_id, NULL), 0);
	ASSERT_EQ(record_runs(s, "c", 5, 2, 10), 0);
	ASSERT_EQ(count_runs(s, "c"), 3);
	memset(&rs, 0, sizeof(rs));
	ASSERT_EQ(store_history(s, "c", 10, collect_run, &rs, NULL), 0);
	ASSERT_EQ(rs.r[0].id, open_id);
	ASSERT_EQ(rs.r[1].started, 13);
	ASSERT_EQ(store_run_end(s, open_id, 100, 0, -1, "stopped", 2, NULL), 0);
	ASSERT_EQ(count_runs(s, "c"), 2);
	memset(&rs, 0, sizeof(rs));
	ASSERT_EQ(store_history(s, "c", 10, collect_run, &rs, NULL), 0);
	ASSERT_EQ(rs.r[0].started, 13);
	ASSERT_EQ(rs.r[1].started, 14);

	/* keep < 1 prunes nothing. */
	ASSERT_EQ(record_runs(s, "b", 1, 0, 1), 0);
	ASSERT_EQ(count_runs(s, "b"), 51);
	store_close(s);
	return (0);
}

TEST(close_open_runs_as_lost)
{
	struct store *s;
	struct runs rs;
	char p[256], *cause = NULL;
	int64_t a, b, c;
	size_t n = 99;

	ASSERT_OK((s = store_open(tpath(p, sizeof(p), "lost.db"), NULL)));
	ASSERT_EQ(store_run_begin(s, "j", 0, "a", 1, 10, &a, NULL), 0);
	ASSERT_EQ(store_run_begin(s, "j", 1, "b", 2, 20, &b, NULL), 0);
	ASSERT_EQ(store_run_ready(s, b, 25, NULL), 0);
	ASSERT_EQ(store_run_begin(s, "k", 0, "c", 3, 30, &c, NULL), 0);
	ASSERT_EQ(store_run_end(s, a, 40, 0, -1, "exited", 10, NULL), 0);
	store_close(s);

	/* A new vigild finds b and c open. */
	ASSERT_OK((s = store_open(p, NULL)));
	ASSERT_EQ(store_runs_close_open(s, 1000, "lost", &n, &cause), 0);
	ASSERT_EQ(n, 2);
	memset(&rs, 0, sizeof(rs));
	ASSERT_EQ(store_history(s, "j", 10, collect_run, &rs, NULL), 0);
	ASSERT_EQ(rs.n, 2);
	ASSERT_STREQ(rs.r[0].reason, "exited");
	ASSERT_EQ(rs.r[0].ended, 40);
	ASSERT_STREQ(rs.r[1].reason, "lost");
	ASSERT_EQ(rs.r[1].ended, 1000);
	ASSERT_EQ(rs.r[1].ready, 25);
	ASSERT_EQ(rs.r[1].exit_code, -1);
	ASSERT_EQ(rs.r[1].signal, -1);
	ASSERT_EQ(store_runs_close_open(s, 2000, "lost", &n, &cause), 0);
	ASSERT_EQ(n, 0);
	ASSERT_EQ(store_runs_close_open(s, 2000, "lost", NULL, &cause), 0);
	ASSERT_OK(cause == NULL);
	store_close(s);
	return (0);
}

TEST(intents)
{
	struct store *s;
	struct store_intent it;
	struct intents is;
	char p[256], *cause = NULL;

	ASSERT_OK((s = store_open(tpath(p, sizeof(p), "intent.db"), NULL)));
	memset(&it, 0, sizeof(it));
	strlcpy(it.job, "web", sizeof(it.job));
	it.held = 1;
	it.uid = 0;
	it.at = 100;
	ASSERT_EQ(store_intent_set(s, &it, &cause), 0);
	it.instance = 1;
	it.held = 0;
	it.started = 1;
	it.uid = 1000;
	it.at = 200;
	ASSERT_EQ(store_intent_set(s, &it, &cause), 0);
	strlcpy(it.job, "db", sizeof(it.job));
	it.instance = 0;
	ASSERT_EQ(store_intent_set(s, &it, &cause), 0);
	/* Replacing web 0. */
	strlcpy(it.job, "web", sizeof(it.job));
	it.held = 0;
	it.started = 1;
	it.uid = 42;
	it.at = 300;
	ASSERT_EQ(store_intent_set(s, &it, &cause), 0);
	store_close(s);

	ASSERT_OK((s = store_open(p, NULL)));
	memset(&is, 0, sizeof(is));
	ASSERT_EQ(store_intents(s, collect_intent, &is, &cause), 0);
	ASSERT_EQ(is.n, 3);
	ASSERT_STREQ(is.it[0].job, "db");
	ASSERT_STREQ(is.it[1].job, "web");
	ASSERT_EQ(is.it[1].instance, 0);
	ASSERT_EQ(is.it[1].held, 0);
	ASSERT_EQ(is.it[1].started, 1);
	ASSERT_EQ(is.it[1].uid, 42);
	ASSERT_EQ(is.it[1].at, 300);
	ASSERT_EQ(is.it[2].instance, 1);
	ASSERT_EQ(is.it[2].uid, 1000);

	ASSERT_EQ(store_intent_clear(s, "web", 1, &cause), 0);
	ASSERT_EQ(store_intent_clear(s, "nothing", 0, &cause), 0);
	memset(&is, 0, sizeof(is));
	ASSERT_EQ(store_intents(s, collect_intent, &is, &cause), 0);
	ASSERT_EQ(is.n, 2);
	ASSERT_STREQ(is.it[0].job, "db");
	ASSERT_STREQ(is.it[1].job, "web");
	ASSERT_EQ(is.it[1].instance, 0);
	ASSERT_OK(cause == NULL);
	store_close(s);
	return (0);
}

/* Open a damaged file at name: it must be moved aside and replaced. */
static int
check_moved_aside(const char *name)
{
	struct store *s;
	char p[256], prefix[128], *cause = NULL;
	int64_t id;

	tpath(p, sizeof(p), name);
	snprintf(prefix, sizeof(prefix), "%s.corrupt-", name);
	ASSERT_EQ(count_files(prefix), 0);
	ASSERT_OK((s = store_open(p, &cause)) != NULL);
	ASSERT_OK(cause != NULL);
	ASSERT_OK(strncmp(cause, "moved aside", 11) == 0);
	ASSERT_OK(strstr(cause, prefix) != NULL);
	free(cause);
	ASSERT_EQ(count_files(prefix), 1);
	/* The new one works. */
	ASSERT_EQ(store_run_begin(s, "x", 0, "r", 1, 1, &id, NULL), 0);
	ASSERT_EQ(store_run_end(s, id, 2, 0, -1, "exited", 5, NULL), 0);
	ASSERT_EQ(count_runs(s, "x"), 1);
	store_close(s);
	cause = NULL;
	ASSERT_OK((s = store_open(p, &cause)) != NULL);
	ASSERT_OK(cause == NULL);
	ASSERT_EQ(count_runs(s, "x"), 1);
	store_close(s);
	return (0);
}

TEST(garbage_moved_aside)
{
	char p[256];
	int i;

	tpath(p, sizeof(p), "garbage.db");
	for (i = 0; i < 3; i++)
		ASSERT_EQ(overwrite(p, i * 4096, 0, 4096, 1), 0);
	return (check_moved_aside("garbage.db"));
}

TEST(zeroed_first_page_moved_aside)
{
	struct store *s;
	char p[256];

	ASSERT_OK((s = store_open(tpath(p, sizeof(p), "zero.db"), NULL)));
	ASSERT_EQ(record_runs(s, "z", 200, 1000, 1), 0);
	store_close(s);
	ASSERT_OK(file_size(p) > 4096);
	ASSERT_EQ(overwrite(p, 0, 0, 4096, 0), 0);
	return (check_moved_aside("zero.db"));
}

TEST(damaged_page_moved_aside)
{
	struct store *s;
	char p[256];

	ASSERT_OK((s = store_open(tpath(p, sizeof(p), "page.db"), NULL)));
	ASSERT_EQ(record_runs(s, "z", 2000, 10000, 1), 0);
	store_close(s);
	ASSERT_OK(file_size(p) > 8 * 4096);
	/* The header is fine; the table's root page is not. */
	ASSERT_EQ(overwrite(p, 4096, 0, 4096, 1), 0);
	return (check_moved_aside("page.db"));
}

TEST(unwritable_places)
{
	struct store *s;
	char p[256], d[256], *cause = NULL;

	/* A directory that does not exist. */
	ASSERT_OK(
	    store_open(tpath(p, sizeof(p), "nodir/state.db"), &cause) == NULL);
	ASSERT_OK(cause != NULL);
	ASSERT_OK(strncmp(cause, "state.db: ", 10) == 0);
	free(cause);
	cause = NULL;
	ASSERT_OK(store_open(p, NULL) == NULL);

	if (geteuid() == 0) {
		printf("# skipped read-only checks: running as root\n");
		return (0);
	}
	/* A new file in a read-only directory. */
	ASSERT_EQ(mkdir(tpath(d, sizeof(d), "ro"), 0755), 0);
	ASSERT_EQ(chmod(d, 0555), 0);
	ASSERT_OK(
	    store_open(tpath(p, sizeof(p), "ro/state.db"), &cause) == NULL);
	ASSERT_OK(cause != NULL);
	free(cause);
	cause = NULL;

	/* An existing database in a directory now read-only: no WAL. */
	ASSERT_EQ(chmod(d, 0755), 0);
	ASSERT_OK((s = store_open(p, NULL)) != NULL);
	store_close(s);
	ASSERT_EQ(chmod(d, 0555), 0);
	ASSERT_OK(store_open(p, &cause) == NULL);
	ASSERT_OK(cause != NULL);
	ASSERT_OK(file_size(p) > 0); /* not moved aside */
	free(cause);
	cause = NULL;
	ASSERT_EQ(chmod(d, 0755), 0);

	/* A read-only file. */
	ASSERT_EQ(chmod(p, 0444), 0);
	ASSERT_OK(store_open(p, &cause) == NULL);
	ASSERT_OK(cause != NULL);
	ASSERT_OK(file_size(p) > 0);
	free(cause);
	ASSERT_EQ(chmod(p, 0644), 0);
	return (0);
}

/* The mode of path, or -1 if it is missing. */
static long
mode_of(const char *path)
{
	struct stat st;

	if (lstat(path, &st) == -1)
		return (-1);
	return ((long)(st.st_mode & 07777));
}

/*
 * state.db and its -wal and -shm: 0600 whatever the umask, 0640 in a
 * directory only its group may read (0750); a symbolic link is refused.
 */
TEST(file_modes)
{
	static const struct {
		const char *dir;
		mode_t dmode;
		long fmode;
	} c[] = {
		{ "m700", 0700, 0600 },
		{ "m750", 0750, 0640 },
		{ "m755", 0755, 0600 },
	};
	static const char *suffix[] = { "", "-wal", "-shm" };
	struct store *s;
	char d[256], p[300], f[310], *cause = NULL;
	int64_t row;
	size_t i, j;
	mode_t old;

	old = umask(0);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		ASSERT_EQ(mkdir(tpath(d, sizeof(d), c[i].dir), c[i].dmode), 0);
		snprintf(p, sizeof(p), "%s/state.db", d);
		ASSERT_OK((s = store_open(p, NULL)) != NULL);
		ASSERT_EQ(store_run_begin(s, "j", 0, "r", 1, 1, &row, NULL), 0);
		for (j = 0; j < 3; j++) {
			snprintf(f, sizeof(f), "%s%s", p, suffix[j]);
			ASSERT_EQ(mode_of(f), c[i].fmode);
		}
		store_close(s);
	}
	umask(old);
	snprintf(f, sizeof(f), "%s/link.db", d);
	ASSERT_EQ(symlink("state.db", f), 0);
	ASSERT_OK(store_open(f, &cause) == NULL);
	ASSERT_OK(cause != NULL && strstr(cause, "symbolic link") != NULL);
	free(cause);
	return (0);
}

TEST(future_version_refused)
{
	struct store *s;
	struct stat a, b;
	char p[256], *cause = NULL;
	unsigned char v[4] = { 0, 0, 0, 99 };
	int fd;

	ASSERT_OK((s = store_open(tpath(p, sizeof(p), "future.db"), NULL)));
	store_close(s);
	ASSERT_OK((fd = open(p, O_WRONLY)) != -1);
	ASSERT_EQ(pwrite(fd, v, 4, 60), 4);
	close(fd);
	ASSERT_EQ(stat(p, &a), 0);
	ASSERT_OK(store_open(p, &cause) == NULL);
	ASSERT_OK(cause != NULL);
	ASSERT_OK(strstr(cause, "99") != NULL);
	free(cause);
	ASSERT_EQ(stat(p, &b), 0);
	ASSERT_EQ(a.st_size, b.st_size);
	ASSERT_EQ(a.st_mtim.tv_sec, b.st_mtim.tv_sec);
	ASSERT_EQ(a.st_mtim.tv_nsec, b.st_mtim.tv_nsec);
	ASSERT_EQ(header_field(p, 60, 4), 99);
	ASSERT_EQ(count_files("future.db.corrupt-"), 0);
	return (0);
}

/* In a callback, the store remains usable for other calls. */
static void
write_from_callback(const struct store_run *r, void *arg)
{
	struct store *s = arg;
	int64_t id;

	if (store_run_begin(s, "cb", 0, r->run_id, 1, 1, &id, NULL) == 0)
		store_run_end(s, id, 2, 0, -1, "exited", 100, NULL);
}

TEST(works_after_errors)
{
	struct store *s;
	sqlite3 *other;
	char p[256], *cause = NULL;
	int64_t id, id2;
	double t;

	ASSERT_OK((s = store_open(tpath(p, sizeof(p), "errors.db"), NULL)));
	/* A constraint failure. */
	ASSERT_EQ(store_run_begin(s, NULL, 0, "r", 1, 1, &id, &cause), -1);
	ASSERT_OK(cause != NULL);
	ASSERT_OK(strncmp(cause, "state.db: ", 10) == 0);
	ASSERT_EQ(store_is_busy(s), 0); /* not a lock: reopen may help */
	free(cause);
	cause = NULL;
	ASSERT_EQ(store_run_begin(s, "e", 0, "r", 1, 1, &id, &cause), 0);

	/* Another process holds the write lock: a short wait, then -1. */
	ASSERT_EQ(sqlite3_open(p, &other), SQLITE_OK);
	ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL, NULL),
	    SQLITE_OK);
	t = mono();
	ASSERT_EQ(store_run_end(s, id, 2, 0, -1, "exited", 10, &cause), -1);
	t = mono() - t;
	ASSERT_OK(t >= 0.04 && t < 2);
	ASSERT_OK(cause != NULL && strstr(cause, "locked") != NULL);
	ASSERT_EQ(store_is_busy(s), 1); /* the lock of another: wait */
	free(cause);
	cause = NULL;
	ASSERT_EQ(store_batch_begin(s, NULL), -1);
	ASSERT_EQ(store_is_busy(s), 1);
	ASSERT_EQ(store_batch_end(s, NULL), 0); /* nothing began */
	ASSERT_EQ(store_run_begin(s, "e", 0, "r2", 1, 1, &id2, &cause), -1);
	free(cause);
	cause = NULL;
	ASSERT_EQ(store_run_ready(s, id, 5, NULL), -1);
	ASSERT_EQ(count_runs(s, "e"), 1); /* reading goes on */
	/* A caller that may wait longer says so. */
	store_busy_timeout_set(s, 300);
	t = mono();
	ASSERT_EQ(store_run_ready(s, id, 5, NULL), -1);
	t = mono() - t;
	ASSERT_OK(t >= 0.29 && t < 5);
	store_busy_timeout_set(s, 50);
	ASSERT_EQ(sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(other);

	/* Free again. */
	ASSERT_EQ(store_run_end(s, id, 2, 0, -1, "exited", 10, &cause), 0);
	ASSERT_EQ(store_history(s, "e", 10, write_from_callback, s, &cause), 0);
	ASSERT_OK(cause == NULL);
	ASSERT_EQ(count_runs(s, "cb"), 1);
	store_close(s);
	return (0);
}

/*
 * Record up to total runs of one job with keep 1000, in chunks, stopping
 * once budget seconds have passed.  Return the runs recorded (-1 on an
 * error), with the time taken and the cost of the first and last chunk.
 */
struct measure {
	double t, first, last; /* seconds */
};

#define MEASURE_CHUNK 2000

static int
measure_runs(struct store *s, int total, double budget, struct measure *m)
{
	double t, c;
	int n = 0;

	memset(m, 0, sizeof(*m));
	t = mono();
	while (n < total) {
		c = mono();
		if (record_runs(s, "web", MEASURE_CHUNK, 1000, n) == -1)
			return (-1);
		n += MEASURE_CHUNK;
		c = mono() - c;
		if (m->first == 0)
			m->first = c;
		m->last = c;
		if (mono() - t > budget)
			break;
	}
	m->t = mono() - t;
	return (n);
}

/* Print (as "# " lines) what n runs cost; note a run cut short. */
static void
measure_print(const char *what, int n, int total, const struct measure *m)
{
	printf("# %s: %.1f us per recorded run (begin+end, keep 1000) over "
	       "%d runs; first %d %.1f us, last %d %.1f us\n",
	    what, m->t * 1e6 / n, n, MEASURE_CHUNK,
	    m->first * 1e6 / MEASURE_CHUNK, MEASURE_CHUNK,
	    m->last * 1e6 / MEASURE_CHUNK);
	if (n < total)
		printf("# %s: stopped by the time budget; %d runs would take "
		       "about %.0f s\n",
		    what, total, m->t * total / n);
}

/*
 * Not a check: what a run costs (begin + end, pruning included) and how
 * large the file grows.  Each part stops after a time budget (under
 * valgrind, say), and then says so.
 */
/* Rows of the runs table as another connection sees them. */
static int
runs_seen(const char *path)
{
	struct store *o;
	sqlite3_stmt *st;
	int n = -1;

	if ((o = store_open(path, NULL)) == NULL)
		return (-1);
	if (sqlite3_prepare_v2(store_db(o), "SELECT count(*) FROM runs", -1,
	        &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	store_close(o);
	return (n);
}

/* A batch makes many calls one transaction; a failure ends it early. */
TEST(batch)
{
	struct store *s;
	char p[256], *cause = NULL;
	int64_t a, b;

	tpath(p, sizeof(p), "batch.db");
	ASSERT_OK((s = store_open(p, NULL)));
	ASSERT_EQ(store_batch_begin(s, &cause), 0);
	ASSERT_EQ(store_in_batch(s), 1);
	ASSERT_EQ(store_run_begin(s, "j", 0, "r1", 1, 10, &a, NULL), 0);
	ASSERT_EQ(store_run_end(s, a, 20, 0, -1, "exited", 10, NULL), 0);
	ASSERT_EQ(store_run_begin(s, "j", 0, "r2", 2, 30, &b, NULL), 0);
	ASSERT_EQ(runs_seen(p), 0); /* nothing committed yet */
	ASSERT_EQ(store_batch_end(s, &cause), 0);
	ASSERT_EQ(store_in_batch(s), 0);
	ASSERT_EQ(runs_seen(p), 2);
	/* Outside a batch each call commits on its own. */
	ASSERT_EQ(store_run_end(s, b, 40, 1, -1, "exited", 10, NULL), 0);
	ASSERT_EQ(store_run_begin(s, "j", 0, "r3", 3, 50, &a, NULL), 0);
	ASSERT_EQ(runs_seen(p), 3);
	/* A failed call rolls the batch back; later calls commit alone. */
	ASSERT_EQ(store_batch_begin(s, NULL), 0);
	ASSERT_EQ(store_run_begin(s, "j", 0, "r4", 4, 60, &a, NULL), 0);
	ASSERT_EQ(store_run_begin(s, NULL, 0, "bad", 5, 70, &b, &cause), -1);
	free(cause);
	cause = NULL;
	ASSERT_EQ(store_in_batch(s), 0);
	ASSERT_EQ(store_run_begin(s, "j", 0, "r5", 6, 80, &b, NULL), 0);
	ASSERT_EQ(store_batch_end(s, &cause), 0);
	ASSERT_EQ(runs_seen(p), 4); /* r4 rolled back with the batch */
	store_close(s);
	return (0);
}

TEST(measure)
{
	struct store *s;
	struct measure m;
	char p[256], w[300];
	double t;
	int n, k;

	/* A tenth under valgrind, in a second: the figures are the bench's. */
	k = test_under_valgrind() ? 10 : 1;
	ASSERT_OK((s = store_open(tpath(p, sizeof(p), "perf1.db"), NULL)));
	ASSERT_OK((n = measure_runs(s, 10000 / k, 3 / k + 1, &m)) > 0);
	measure_print("10000 runs", n, 10000 / k, &m);
	store_close(s);

	ASSERT_OK((s = store_open(tpath(p, sizeof(p), "perf2.db"), NULL)));
	ASSERT_OK((n = measure_runs(s, 100000 / k, 8 / k + 1, &m)) > 0);
	measure_print("100000 runs", n, 100000 / k, &m);
	snprintf(w, sizeof(w), "%s-wal", p);
	printf("# after %d runs: state.db %lld bytes, -wal %lld bytes\n", n,
	    (long long)file_size(p), (long long)file_size(w));
	store_close(s);
	printf("# after close: state.db %lld bytes\n", (long long)file_size(p));
	t = mono();
	ASSERT_OK((s = store_open(p, NULL)));
	printf("# store_open (with quick_check) of it: %.2f ms\n",
	    (mono() - t) * 1e3);
	store_close(s);
	return (0);
}

/*
 * A write into a shared mapping of a file named *-shm that the file can no
 * longer back (truncated: SIGBUS) is made harmless: the bytes that could
 * be read stay, the write lands, and the fault is counted once.
 */
TEST(shm_fault)
{
	char path[PATH_MAX];
	long ps = sysconf(_SC_PAGESIZE);
	volatile char *m;
	int fd;

	snprintf(path, sizeof(path), "%s/fault.db-shm", dir);
	ASSERT_OK((fd = open(path, O_RDWR | O_CREAT, 0600)) >= 0);
	ASSERT_EQ(ftruncate(fd, 2 * ps), 0);
	m = mmap(
	    NULL, (size_t)(2 * ps), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_OK(m != MAP_FAILED);
	m[0] = 'a';
	ASSERT_EQ(store_fault_guard(), 0);
	ASSERT_EQ(store_fault_taken(), 0);
	ASSERT_EQ(ftruncate(fd, 0), 0); /* the pages are gone under m */
	m[ps] = 'b';                    /* SIGBUS, made harmless */
	ASSERT_EQ(m[ps], 'b');
	ASSERT_EQ(store_fault_taken(), 1);
	ASSERT_EQ(store_fault_taken(), 0);
	m[0] = 'c';
	ASSERT_EQ(m[0], 'c');
	ASSERT_EQ(munmap((void *)m, (size_t)(2 * ps)), 0);
	close(fd);
	return (0);
}

/* The number in file, or -1. */
static long long
read_mark(const char *file)
{
	FILE *f = fopen(file, "r");
	long long v = -1;

	if (f == NULL)
		return (-1);
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return (v);
}

/* Enqueue one message on s; its id, or -1. */
static int64_t
enqueue_one(struct store *s)
{
	struct queue *q;
	int64_t id = -1, existing = 0;
	char *cause = NULL;

	if ((q = queue_open(s, &cause)) == NULL)
		return (-1);
	if (queue_enqueue(
	        q, "j", "x", 1, NULL, 0, 0, 0, &id, &existing, &cause) != 0)
		id = -1;
	free(cause);
	queue_close(q);
	return (id);
}

static void
unlink_db(const char *p)
{
	char b[300];

	unlink(p);
	snprintf(b, sizeof(b), "%s-wal", p);
	unlink(b);
	snprintf(b, sizeof(b), "%s-shm", p);
	unlink(b);
}

static int
count_intents(const char *p)
{
	struct store *s;
	struct intents is;

	if ((s = store_open(p, NULL)) == NULL)
		return (-1);
	memset(&is, 0, sizeof(is));
	if (store_intents(s, collect_intent, &is, NULL) == -1)
		is.n = -1;
	store_close(s);
	return (is.n);
}

/*
 * A database deleted under its store: seen, copied from the open
 * connection, put back; the rows are all there.  Replaced by another
 * file: seen, the stranger moved aside whole (its own rows kept, none of
 * ours replayed into it).
 */
TEST(lost_and_put_back)
{
	struct store *s;
	struct store_disk ours;
	struct store_intent it;
	sqlite3 *o;
	char p[256], copy[300], other[256], *what = NULL, *aside = NULL;
	char *cause = NULL;
	int i;

	tpath(p, sizeof(p), "lost.db");
	snprintf(copy, sizeof(copy), "%s.restore", p);
	ASSERT_OK((s = store_open(p, NULL)) != NULL);
	memset(&it, 0, sizeof(it));
	for (i = 0; i < 3; i++) {
		snprintf(it.job, sizeof(it.job), "job%d", i);
		it.held = 1;
		ASSERT_EQ(store_intent_set(s, &it, NULL), 0);
	}
	ASSERT_EQ(store_files_check(s, &what), 0);
	unlink_db(p);
	ASSERT_EQ(store_files_check(s, &what), STORE_FILES_DELETED);
	ASSERT_OK(strstr(what, "lost.db was deleted") != NULL);
	free(what);
	what = NULL;
	ASSERT_EQ(store_copy(s, copy, &cause), 0);
	store_disk_get(s, &ours);
	store_close(s);
	ASSERT_EQ(store_put_back(p, copy, &ours, &aside, &cause), 0);
	ASSERT_OK(aside == NULL);
	ASSERT_EQ(count_intents(p), 3);

	/* Replaced by another database. */
	ASSERT_OK((s = store_open(p, NULL)) != NULL);
	tpath(other, sizeof(other), "other.db");
	ASSERT_EQ(sqlite3_open(other, &o), SQLITE_OK);
	ASSERT_EQ(
	    sqlite3_exec(o, "CREATE TABLE t (a); INSERT INTO t VALUES (42)",
	        NULL, NULL, NULL),
	    SQLITE_OK);
	sqlite3_close(o);
	ASSERT_EQ(rename(other, p), 0);
	ASSERT_EQ(store_files_check(s, &what), STORE_FILES_REPLACED);
	free(what);
	ASSERT_EQ(store_copy(s, copy, &cause), 0);
	store_disk_get(s, &ours);
	store_close(s);
	ASSERT_EQ(store_put_back(p, copy, &ours, &aside, &cause), 0);
	ASSERT_OK(aside != NULL);
	ASSERT_EQ(count_intents(p), 3);
	ASSERT_EQ(sqlite3_open(aside, &o), SQLITE_OK);
	ASSERT_EQ(
	    sqlite3_exec(o, "SELECT a FROM t", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(o);
	free(aside);
	return (0);
}

/*
 * Message ids never repeat: a clean close leaves the mark at the last
 * id; a database lost after a crash (a mark left high) or a clean close
 * starts above every id given.
 */
TEST(ids_mark)
{
	struct store *s;
	char p[256], ids[256], *cause = NULL;

	tpath(p, sizeof(p), "ids.db");
	tpath(ids, sizeof(ids), "queue-ids");
	ASSERT_OK((s = store_open(p, NULL)) != NULL);
	ASSERT_EQ(store_ids_keep(s, ids, 1, &cause), 0);
	ASSERT_EQ(read_mark(ids), 1000);
	ASSERT_EQ(enqueue_one(s), 1);
	ASSERT_EQ(enqueue_one(s), 2);
	store_close(s);
	ASSERT_EQ(read_mark(ids), 2); /* brought down: no gap */
	unlink_db(p);
	ASSERT_OK((s = store_open(p, NULL)) != NULL);
	ASSERT_EQ(store_ids_keep(s, ids, 1, &cause), 0);
	ASSERT_EQ(enqueue_one(s), 3);
	/* Not the owner (a crash, for the mark): it stays high. */
	store_close(s);
	ASSERT_OK((s = store_open(p, NULL)) != NULL);
	ASSERT_EQ(store_ids_keep(s, ids, 0, &cause), 0);
	ASSERT_EQ(read_mark(ids), 1003);
	ASSERT_EQ(enqueue_one(s), 4);
	store_close(s);
	ASSERT_EQ(read_mark(ids), 1003);
	unlink_db(p);
	ASSERT_OK((s = store_open(p, NULL)) != NULL);
	ASSERT_EQ(store_ids_keep(s, ids, 1, &cause), 0);
	ASSERT_EQ(enqueue_one(s), 1004);
	store_close(s);
	/* A mark that is not a number is refused, not guessed. */
	{
		FILE *f = fopen(ids, "w");

		ASSERT_OK(f != NULL);
		fputs("garbage\n", f);
		fclose(f);
	}
	ASSERT_OK((s = store_open(p, NULL)) != NULL);
	ASSERT_EQ(store_ids_keep(s, ids, 1, &cause), -1);
	ASSERT_OK(cause != NULL && strstr(cause, "not a number") != NULL);
	free(cause);
	store_close(s);
	return (0);
}

int
main(void)
{
	char d[256];

	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return (1);
	}
	RUN(open_creates_schema);
	RUN(run_round_trip);
	RUN(skipped_and_last_start);
	RUN(retention);
	RUN(close_open_runs_as_lost);
	RUN(intents);
	RUN(garbage_moved_aside);
	RUN(zeroed_first_page_moved_aside);
	RUN(damaged_page_moved_aside);
	RUN(unwritable_places);
	RUN(file_modes);
	RUN(future_version_refused);
	RUN(works_after_errors);
	RUN(batch);
	RUN(measure);
	RUN(shm_fault);
	RUN(lost_and_put_back);
	RUN(ids_mark);
	chmod(tpath(d, sizeof(d), "ro"), 0755);
	if (test_failed == 0)
		test_rmtree(dir);
	else
		printf("# kept %s\n", dir);
	TEST_MAIN_END();
}
