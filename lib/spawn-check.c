/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Whether a job's command can run, asked before any run (vigild -t): its
 * argv[0] found as the child would find it (as written when it has a
 * slash, from the job's directory when relative; else on the job's PATH,
 * the one its environment and env_file give it), and executable by the
 * user and groups it runs as.  The permission is read from the file's
 * mode, as the kernel would judge it for those ids; the directories on
 * the way are not checked, nor what a script's interpreter needs.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "spawn-env.h"
#include "xmalloc.h"

/* Whether u (its uid, gid and groups) may execute the file of st. */
static int
spawn_check_mode(const struct stat *st, const struct spawn_user *u)
{
	int i;

	if (u->uid == 0)
		return ((st->st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)) != 0);
	if (st->st_uid == u->uid)
		return ((st->st_mode & S_IXUSR) != 0);
	if (u->has_gid && st->st_gid == u->gid)
		return ((st->st_mode & S_IXGRP) != 0);
	for (i = 0; i < u->ngroups; i++) {
		if (st->st_gid == u->groups[i])
			return ((st->st_mode & S_IXGRP) != 0);
	}
	return ((st->st_mode & S_IXOTH) != 0);
}

/*
 * Whether path is a file u may run: 1, else 0 with *why set (ENOENT for a
 * file that is not there, so that a PATH search goes on).
 */
static int
spawn_check_file(
    const char *path, const struct spawn_user *u, int *err, const char **why)
{
	struct stat st;

	if (stat(path, &st) == -1) {
		*err = errno;
		*why = strerror(errno);
		return (0);
	}
	*err = EACCES;
	if (!S_ISREG(st.st_mode)) {
		*why = "not a regular file";
		return (0);
	}
	if (!spawn_check_mode(&st, u)) {
		*why = "not executable by the job's user";
		return (0);
	}
	return (1);
}

/*
 * Check the command of spec as described above.  Returns 0, or -1 with
 * *why set to an owned sentence for a warning: what was looked for,
 * where, and why it cannot run.  An environment that cannot be built
 * (env_file unreadable) or a user that does not exist is a question for
 * the run; it is not reported here.
 */
int
spawn_command_check(const struct job_spec *spec, char **why)
{
	struct spawn_request req;
	struct spawn_user u;
	char full[PATH_MAX], bad[PATH_MAX] = "", **envp;
	const char *path, *dirs, *reason = NULL, *badwhy = NULL, *name;
	char *cause = NULL;
	int err = ENOENT, found = 0, rc = 0;

	*why = NULL;
	if (spec->argv == NULL || spec->argv[0] == NULL)
		return (0);
	name = spec->argv[0];
	memset(&req, 0, sizeof(req));
	req.spec = spec;
	req.run_id = "check";
	if (spawn_user_init(&u, spec, &cause) == -1) {
		free(cause);
		return (0);
	}
	if ((envp = spawn_environment(&req, &u, &cause)) == NULL) {
		free(cause);
		spawn_user_clear(&u);
		return (0);
	}
	if (strchr(name, '/') != NULL) {
		if (name[0] == '/' ||
		    (size_t)snprintf(full, sizeof(full), "%s/%s",
		        spec->directory != NULL ? spec->directory : "/",
		        name) >= sizeof(full))
			strlcpy(full, name, sizeof(full));
		if (!spawn_check_file(full, &u, &err, &reason)) {
			xasprintf(
			    why, "command: %s cannot run: %s", full, reason);
			rc = -1;
		}
		goto out;
	}
	if ((path = spawn_env_get(envp, "PATH")) == NULL)
		path = SPAWN_DEFAULT_PATH;
	dirs = path;
	while (
	    !found && spawn_path_next(&dirs, name, full, sizeof(full)) == 0) {
		found = spawn_check_file(full, &u, &err, &reason);
		/* As exec goes on past it: the first that cannot run. */
		if (!found && err != ENOENT && err != ENOTDIR && *bad == '\0') {
			strlcpy(bad, full, sizeof(bad));
			badwhy = reason;
		}
	}
	if (!found && *bad != '\0') {
		xasprintf(why, "command: %s cannot run: %s", bad, badwhy);
		rc = -1;
	} else if (!found) {
		xasprintf(why,
		    "command: \"%s\" is not found on the job's PATH (%s)", name,
		    path);
		rc = -1;
	}
out:
	spawn_env_free(envp);
	spawn_user_clear(&u);
	return (rc);
}
