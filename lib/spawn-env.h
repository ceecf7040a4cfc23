/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * What a run's child needs that the parent prepares before the fork
 * (spawn-env.c, for spawn.c only): the user it runs as, looked up with
 * NSS in the parent, and its environment.
 */

#ifndef VIGIL_SPAWN_ENV_H
#define VIGIL_SPAWN_ENV_H

#include <sys/types.h>

#include "spawn.h"

/* PATH of a job unless its environment sets one. */
#define SPAWN_DEFAULT_PATH                                                     \
	"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* Who the child runs as, looked up in the parent (no NSS in the child). */
struct spawn_user {
	uid_t uid;
	char *name; /* NULL: no passwd entry */
	char *home;
	char *shell;
	int has_gid;
	gid_t gid;     /* group, else the user's primary group */
	gid_t *groups; /* supplementary groups for setgroups() */
	int ngroups;
};

int spawn_user_init(struct spawn_user *, const struct job_spec *, char **);
void spawn_user_clear(struct spawn_user *);
char **spawn_environment(
    const struct spawn_request *, const struct spawn_user *, char **);
void spawn_env_free(char **);
const char *spawn_env_get(char **, const char *);
int spawn_path_next(const char **, const char *, char *, size_t);

#endif
