/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The physical limits of a supervisor, posix_spawn and nothing else.
 *
 * usage: spawnloop N C command [args...]
 *   C > 0: the ceiling of a queue: run the command N times with at most C
 *          children at once, waitpid each, and print the runs per second;
 *   C = 0: the floor of a start: start N copies one after the other
 *          without waiting, then wait for them all (the caller ends them).
 */

#include <sys/wait.h>

#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

extern char **environ;

int
main(int argc, char **argv)
{
	struct timespec t0, t1;
	long n, c, started = 0, running = 0;
	double secs;
	pid_t pid;
	int status;

	if (argc < 4) {
		fprintf(stderr, "usage: spawnloop N C command [args...]\n");
		return (2);
	}
	n = strtol(argv[1], NULL, 10);
	c = strtol(argv[2], NULL, 10);
	if (n <= 0 || c < 0) {
		fprintf(
		    stderr, "spawnloop: N must be positive, C not negative\n");
		return (2);
	}
	if (c == 0)
		c = n;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (started < n || running > 0) {
		while (started < n && running < c) {
			if (posix_spawnp(&pid, argv[3], NULL, NULL, argv + 3,
			        environ) != 0) {
				perror("posix_spawnp");
				return (1);
			}
			started++;
			running++;
		}
		if (waitpid(-1, &status, 0) > 0)
			running--;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("%.0f\n", (double)n / secs);
	return (0);
}
