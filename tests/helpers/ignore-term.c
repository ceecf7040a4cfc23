/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * A test helper: ignore SIGTERM (and optionally fork a child that ignores
 * it too, in the same process group), write "ready" to a file, then sleep
 * until killed.  Usage: ignore-term READYFILE [fork]
 */

#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	FILE *f;

	signal(SIGTERM, SIG_IGN);
	if (argc > 2 && strcmp(argv[2], "fork") == 0 && fork() == 0) {
		for (;;)
			pause();
	}
	if (argc > 1 && (f = fopen(argv[1], "w")) != NULL) {
		fprintf(f, "%ld\n", (long)getpid());
		fclose(f);
	}
	for (;;)
		pause();
}
