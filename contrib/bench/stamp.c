/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * A service that exits at once, for the restart workload of bench.py: it
 * appends one line "START END" to a file and exits 1.  The file is argv[1];
 * run as ./run of a service directory (a symlink named run, for runit, s6
 * or daemontools) it is ./stamp.rec whatever the arguments (s6-supervise
 * passes the service's name).
 * START is CLOCK_MONOTONIC in nanoseconds as main() begins, END just before
 * the write; the gap from one line's END to the next line's START is the
 * supervisor's time from an exit to the next exec.  usage: stamp FILE
 */

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long
stamp_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
}

int
main(int argc, char **argv)
{
	long long start = stamp_now();
	const char *path = "stamp.rec", *base;
	char line[64];
	int fd, len;

	base = strrchr(argv[0], '/');
	base = base != NULL ? base + 1 : argv[0];
	if (strcmp(base, "run") != 0 && argc > 1)
		path = argv[1];
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd == -1)
		return (2);
	len = snprintf(line, sizeof line, "%lld %lld\n", start, stamp_now());
	if (write(fd, line, (size_t)len) != len)
		return (2);
	return (1);
}
