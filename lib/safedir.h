/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Directories vigild trusts: the runtime, locks, state and log
 * directories.  Each is made if missing, opened with O_DIRECTORY |
 * O_NOFOLLOW, and checked through its descriptor: a directory of the
 * process's effective user that neither its group nor others may write
 * to.  Files in it are then opened relative to that descriptor, so that
 * nobody else can plant a symbolic link there or swap the directory.
 * A path vigild opens for a job (env_file, pid_file, watch) is resolved
 * one component at a time, following only symbolic links that nobody but
 * root (or vigild's user) could have made.
 */

#ifndef VIGIL_SAFEDIR_H
#define VIGIL_SAFEDIR_H

#include <sys/types.h>

struct stat;

/* safedir_stat_check: a directory of root's is trusted too. */
#define SAFEDIR_ROOT_OK 0x1

int safedir_open(int, const char *, mode_t, char **);
int safedir_check(int, int, char **);
int safedir_stat_check(const struct stat *, int, char **);
int safedir_path_check(const char *, int, char **);
int safedir_refresh(int, const char *, int *, char **);
int safedir_tighten(int, mode_t, gid_t, char **);
int safedir_open_path(const char *, int, char **);

#endif
