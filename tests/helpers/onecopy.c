/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * A test helper: the exactly-one sampler of the cluster tests.  Every
 * 10 ms it scans /proc and counts, for each MARKER, the live processes
 * (zombies do not count) with an argument exactly equal to MARKER.  A
 * process whose parent carries the same MARKER is not counted: it is that
 * parent's fork, not another copy (a shell between fork and exec).  Its
 * own process is never counted.
 *   usage: onecopy OUTFILE MARKER...
 * OUTFILE gets, one line each, as it happens:
 *   start SECONDS                       the first scan is done
 *   over SECONDS MARKER COUNT PID...    a sample with COUNT > 1 (PIDs:
 *                                       all with MARKER, forks too)
 * and on SIGTERM or SIGINT, before exit 0:
 *   samples N
 *   max MARKER COUNT                    one per MARKER, in their order
 * SECONDS is the wall clock, with milliseconds.  Only the first
 * ONECOPY_CMDLINE bytes of a command line are looked at.  Exit 2 if it
 * cannot start.
 */

#include "config.h"

#include <sys/types.h>

#include <ctype.h>
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ONECOPY_PERIOD_NS 10000000L
#define ONECOPY_CMDLINE 65536
#define ONECOPY_PIDS 64

/* One marker: its maximum so far, and the processes of this sample. */
struct onecopy_marker {
	const char *name;
	int max;
	int hit;                 /* among the arguments of this process */
	int n;                   /* matches in this sample */
	pid_t pid[ONECOPY_PIDS]; /* the first ONECOPY_PIDS of them */
	pid_t ppid[ONECOPY_PIDS];
};

static struct onecopy_marker *onecopy_markers;
static int onecopy_nmarkers;
static FILE *onecopy_out;

/* Print the wall clock as SECONDS.MILLIS. */
static void
onecopy_time(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	fprintf(onecopy_out, "%lld.%03ld", (long long)ts.tv_sec,
	    ts.tv_nsec / 1000000);
}

/* Read up to size - 1 bytes of the file name under dfd into buf; return
 * the length, or -1 (the process is gone). */
static ssize_t
onecopy_read(int dfd, const char *name, char *buf, size_t size)
{
	ssize_t n, len = 0;
	int fd;

	if ((fd = openat(dfd, name, O_RDONLY | O_CLOEXEC)) == -1)
		return (-1);
	while ((size_t)len < size - 1) {
		n = read(fd, buf + len, size - 1 - (size_t)len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	buf[len] = '\0';
	return (len);
}

/* The parent of pid, or -1 if pid is gone or a zombie. */
static pid_t
onecopy_parent(int dfd, const char *pid)
{
	char path[NAME_MAX + 16], buf[512], state, *p;
	int ppid;

	(void)snprintf(path, sizeof(path), "%s/stat", pid);
	if (onecopy_read(dfd, path, buf, sizeof(buf)) <= 0)
		return (-1);
	/* "pid (comm) S ppid ...": comm may hold spaces and parentheses. */
	if ((p = strrchr(buf, ')')) == NULL ||
	    sscanf(p, ") %c %d", &state, &ppid) != 2)
		return (-1);
	if (state == 'Z' || state == 'X')
		return (-1);
	return ((pid_t)ppid);
}

/* Look at one process: count it for each marker among its arguments. */
static void
onecopy_process(int dfd, const char *pid)
{
	static char buf[ONECOPY_CMDLINE];
	char path[NAME_MAX + 16], *arg, *end;
	struct onecopy_marker *m;
	int i, any = 0;
	ssize_t len;
	pid_t ppid;

	(void)snprintf(path, sizeof(path), "%s/cmdline", pid);
	if ((len = onecopy_read(dfd, path, buf, sizeof(buf))) <= 0)
		return; /* gone, a kernel thread or a zombie */
	end = buf + len;
	for (i = 0; i < onecopy_nmarkers; i++)
		onecopy_markers[i].hit = 0;
	for (arg = buf; arg < end; arg += strlen(arg) + 1) {
		for (i = 0; i < onecopy_nmarkers; i++) {
			if (strcmp(arg, onecopy_markers[i].name) == 0)
				any = onecopy_markers[i].hit = 1;
		}
	}
	if (!any || (ppid = onecopy_parent(dfd, pid)) == -1)
		return;
	for (i = 0; i < onecopy_nmarkers; i++) {
		m = &onecopy_markers[i];
		if (!m->hit)
			continue;
		if (m->n < ONECOPY_PIDS) {
			m->pid[m->n] = (pid_t)atoi(pid);
			m->ppid[m->n] = ppid;
		}
		m->n++;
	}
}

/* The count of m's sample: its matches less the forks of another. */
static int
onecopy_count(const struct onecopy_marker *m)
{
	int i, j, k = m->n < ONECOPY_PIDS ? m->n : ONECOPY_PIDS, n = m->n;

	for (i = 0; i < k; i++) {
		for (j = 0; j < k; j++) {
			if (m->ppid[i] == m->pid[j]) {
				n--;
				break;
			}
		}
	}
	return (n);
}

/* One sample: scan /proc, update the maxima, log the counts over 1. */
static void
onecopy_scan(DIR *proc, pid_t self)
{
	struct onecopy_marker *m;
	struct dirent *de;
	int i, j, n;

	for (i = 0; i < onecopy_nmarkers; i++)
		onecopy_markers[i].n = 0;
	rewinddir(proc);
	while ((de = readdir(proc)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]) ||
		    atoi(de->d_name) == self)
			continue;
		onecopy_process(dirfd(proc), de->d_name);
	}
	for (i = 0; i < onecopy_nmarkers; i++) {
		m = &onecopy_markers[i];
		n = onecopy_count(m);
		if (n > m->max)
			m->max = n;
		if (n <= 1)
			continue;
		fputs("over ", onecopy_out);
		onecopy_time();
		fprintf(onecopy_out, " %s %d", m->name, n);
		for (j = 0; j < m->n && j < ONECOPY_PIDS; j++)
			fprintf(onecopy_out, " %d", (int)m->pid[j]);
		fputc('\n', onecopy_out);
	}
}

/* Add ONECOPY_PERIOD_NS to *t. */
static void
onecopy_next(struct timespec *t)
{
	t->tv_nsec += ONECOPY_PERIOD_NS;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

/* Wait until the tick at *t (or skip the ticks already past); return 1 if
 * SIGTERM or SIGINT came, else 0. */
static int
onecopy_wait(const sigset_t *set, struct timespec *t)
{
	struct timespec now, left;
	long long ns;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ns = (long long)(t->tv_sec - now.tv_sec) * 1000000000LL +
	    (t->tv_nsec - now.tv_nsec);
	if (ns <= 0) {
		/* The scan overran: sample again at once, on a new grid. */
		*t = now;
		ns = 0;
	}
	left.tv_sec = (time_t)(ns / 1000000000LL);
	left.tv_nsec = (long)(ns % 1000000000LL);
	for (;;) {
		if (sigtimedwait(set, NULL, &left) > 0)
			return (1);
		if (errno == EAGAIN)
			return (0);
		if (errno != EINTR)
			err(2, "sigtimedwait");
	}
}

int
main(int argc, char **argv)
{
	struct timespec t;
	unsigned long long samples = 0;
	sigset_t set;
	DIR *proc;
	int i;

	if (argc < 3)
		errx(2, "usage: onecopy OUTFILE MARKER...");
	onecopy_nmarkers = argc - 2;
	onecopy_markers = calloc(onecopy_nmarkers, sizeof(*onecopy_markers));
	if (onecopy_markers == NULL)
		err(2, "calloc");
	for (i = 0; i < onecopy_nmarkers; i++)
		onecopy_markers[i].name = argv[i + 2];
	/* The signals wait for sigtimedwait(2): no handler runs mid-scan. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1)
		err(2, "sigprocmask");
	if ((onecopy_out = fopen(argv[1], "w")) == NULL)
		err(2, "%s", argv[1]);
	setvbuf(onecopy_out, NULL, _IOLBF, 0);
	if ((proc = opendir("/proc")) == NULL)
		err(2, "/proc");
	clock_gettime(CLOCK_MONOTONIC, &t);
	do {
		onecopy_scan(proc, getpid());
		if (samples++ == 0) {
			fputs("start ", onecopy_out);
			onecopy_time();
			fputc('\n', onecopy_out);
		}
		onecopy_next(&t);
	} while (!onecopy_wait(&set, &t));
	fprintf(onecopy_out, "samples %llu\n", samples);
	for (i = 0; i < onecopy_nmarkers; i++)
		fprintf(onecopy_out, "max %s %d\n", onecopy_markers[i].name,
		    onecopy_markers[i].max);
	closedir(proc);
	free(onecopy_markers);
	if (fclose(onecopy_out) == EOF)
		err(2, "%s", argv[1]);
	return (0);
}
