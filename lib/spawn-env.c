/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The parent's half of a spawn (spawn.c forks): the user a job runs as,
 * with its groups, and the environment of the run (the defaults, the
 * user's, `environment`, `env_file`, the caller's extra variables and
 * VIGIL_*), all made before the fork so that the child allocates
 * nothing and never calls NSS.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "safedir.h"
#include "spawn-env.h"
#include "xmalloc.h"

/* The largest env_file read, in bytes (vigil.conf(5)). */
#define SPAWN_ENV_FILE_MAX (1024 * 1024)

struct spawn_env {
	char **v;
	size_t n;
};

/* Set KEY=value in env, replacing an earlier KEY. */
static void
spawn_env_put(struct spawn_env *env, const char *kv)
{
	size_t i, klen;

	klen = strcspn(kv, "=");
	for (i = 0; i < env->n; i++) {
		if (strncmp(env->v[i], kv, klen) == 0 &&
		    env->v[i][klen] == '=') {
			free(env->v[i]);
			env->v[i] = xstrdup(kv);
			return;
		}
	}
	env->v = xreallocarray(env->v, env->n + 2, sizeof(*env->v));
	env->v[env->n++] = xstrdup(kv);
	env->v[env->n] = NULL;
}

static void
spawn_env_putf(struct spawn_env *env, const char *key, const char *value)
{
	char *kv;

	xasprintf(&kv, "%s=%s", key, value);
	spawn_env_put(env, kv);
	free(kv);
}

/* Strip one level of matching quotes from an env_file value, in place. */
static char *
spawn_env_unquote(char *v)
{
	size_t len = strlen(v);

	if (len >= 2 && (v[0] == '"' || v[0] == '\'') && v[len - 1] == v[0]) {
		v[len - 1] = '\0';
		return (v + 1);
	}
	return (v);
}

/*
 * Read what fd holds, at most max bytes, into a NUL-terminated buffer
 * (the caller's to free), starting with room for hint bytes.  Return it
 * with its length in *len, or NULL with errno (EFBIG: more than max).
 */
static char *
spawn_read_bounded(int fd, size_t hint, size_t max, size_t *len)
{
	size_t cap = (hint < max ? hint : max) + 1, n = 0;
	char *buf = xmalloc(cap + 1);
	ssize_t r;
	int err;

	for (;;) {
		if (n == cap) {
			if (cap > max) {
				free(buf);
				errno = EFBIG;
				return (NULL);
			}
			cap = max + 1;
			buf = xreallocarray(buf, cap + 1, 1);
		}
		if ((r = read(fd, buf + n, cap - n)) == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			err = errno;
			free(buf);
			errno = err;
			return (NULL);
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*len = n;
	return (buf);
}

/*
 * Read the env_file at path into a NUL-terminated buffer (the caller's to
 * free), or return NULL with *cause naming the file.  Its directory may
 * be writable by the job's user, who must neither stall vigild (a FIFO, a
 * device) nor read through the job's environment what the user may not
 * (a symbolic link to /etc/shadow, in the file's place or a directory's):
 * the file is opened without blocking and through no link the user could
 * have made (safedir_open_path), and must be a regular file of at most
 * SPAWN_ENV_FILE_MAX bytes, also while it is read (it may grow).
 */
static char *
spawn_env_file_read(const char *path, char **cause)
{
	struct stat st;
	char *buf = NULL, *why;
	size_t len;
	int fd;

	fd = safedir_open_path(
	    path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, &why);
	if (fd == -1) {
		xasprintf(cause, "env_file %s: %s", path, why);
		free(why);
		return (NULL);
	}
	if (fstat(fd, &st) == -1)
		xasprintf(cause, "env_file %s: %s", path, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		xasprintf(
		    cause, "env_file %s: not a regular file, refused", path);
	else if (st.st_size > SPAWN_ENV_FILE_MAX ||
	    (buf = spawn_read_bounded(
	         fd, (size_t)st.st_size, SPAWN_ENV_FILE_MAX, &len)) == NULL) {
		if (st.st_size > SPAWN_ENV_FILE_MAX || errno == EFBIG)
			xasprintf(cause, "env_file %s: larger than %d bytes",
			    path, SPAWN_ENV_FILE_MAX);
		else
			xasprintf(
			    cause, "env_file %s: %s", path, strerror(errno));
	}
	close(fd);
	return (buf);
}

/*
 * Read an env_file: KEY=value lines, '#' and ';' comments, blank lines,
 * optional "export " and quotes around the value (the common subset of
 * systemd's EnvironmentFile= syntax).
 */
static int
spawn_env_file(struct spawn_env *env, const char *path, char **cause)
{
	char *buf, *line, *next, *p, *eq, *kv;
	size_t n;

	if ((buf = spawn_env_file_read(path, cause)) == NULL)
		return (-1);
	for (line = buf; line != NULL; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		n = strlen(line);
		while (n > 0 && isspace((unsigned char)line[n - 1]))
			line[--n] = '\0';
		p = line + strspn(line, " \t");
		if (*p == '\0' || *p == '#' || *p == ';')
			continue;
		if (strncmp(p, "export ", 7) == 0)
			p += 7 + strspn(p + 7, " \t");
		if ((eq = strchr(p, '=')) == NULL || eq == p)
			continue;
		*eq = '\0';
		xasprintf(&kv, "%s=%s", p, spawn_env_unquote(eq + 1));
		spawn_env_put(env, kv);
		free(kv);
	}
	free(buf);
	return (0);
}

/*
 * Look up the user a job runs as (its own user, else vigild's), with the
 * group and supplementary groups it gets.  Return 0, or -1 with *cause.
 */
int
spawn_user_init(struct spawn_user *u, const struct job_spec *spec, char **cause)
{
	struct passwd *pw;
	int n = 16;

	memset(u, 0, sizeof(*u));
	u->uid = spec->has_uid ? spec->uid : geteuid();
	u->has_gid = spec->has_gid;
	u->gid = spec->gid;
	if ((pw = getpwuid(u->uid)) != NULL) {
		u->name = xstrdup(pw->pw_name);
		u->home = xstrdup(pw->pw_dir);
		u->shell =
		    xstrdup(pw->pw_shell[0] != '\0' ? pw->pw_shell : "/bin/sh");
		if (spec->has_uid && !spec->has_gid) {
			u->has_gid = 1;
			u->gid = pw->pw_gid;
		}
	} else if (spec->has_uid && !spec->has_gid) {
		xasprintf(cause, "user %ld has no passwd entry: set group too",
		    (long)u->uid);
		return (-1);
	}
	if (!spec->has_uid || u->name == NULL)
		return (0);
	/* initgroups() would need NSS in the child: ask here instead. */
	for (;;) {
		u->groups =
		    xreallocarray(u->groups, (size_t)n, sizeof(*u->groups));
		if (getgrouplist(u->name, u->gid, u->groups, &n) != -1)
			break;
	}
	u->ngroups = n;
	return (0);
}

void
spawn_user_clear(struct spawn_user *u)
{
	free(u->name);
	free(u->home);
	free(u->shell);
	free(u->groups);
}

/*
 * Build the child's environment: a clean base (PATH, and HOME, USER,
 * LOGNAME, SHELL of the user it runs as), then environment, then env_file
 * (which wins, as in systemd), then extra_env and VIGIL_JOB,
 * VIGIL_INSTANCE, VIGIL_RUN_ID, which cannot be overridden.  Return a
 * NULL-terminated array (free each string, then the array), or NULL with
 * *cause set.
 */
char **
spawn_environment(
    const struct spawn_request *req, const struct spawn_user *u, char **cause)
{
	const struct job_spec *spec = req->spec;
	struct spawn_env env = { NULL, 0 };
	char buf[32];
	size_t i;

	env.v = xcalloc(1, sizeof(*env.v));
	spawn_env_putf(&env, "PATH", SPAWN_DEFAULT_PATH);
	if (u->name != NULL) {
		spawn_env_putf(&env, "HOME", u->home);
		spawn_env_putf(&env, "USER", u->name);
		spawn_env_putf(&env, "LOGNAME", u->name);
		spawn_env_putf(&env, "SHELL", u->shell);
	}
	for (i = 0; i < spec->nenvironment; i++)
		spawn_env_put(&env, spec->environment[i]);
	if (spec->env_file != NULL &&
	    spawn_env_file(&env, spec->env_file, cause) == -1)
		goto fail;
	for (i = 0; req->extra_env != NULL && req->extra_env[i] != NULL; i++)
		spawn_env_put(&env, req->extra_env[i]);
	spawn_env_putf(&env, "VIGIL_JOB", spec->name);
	snprintf(buf, sizeof(buf), "%d", req->instance);
	spawn_env_putf(&env, "VIGIL_INSTANCE", buf);
	spawn_env_putf(&env, "VIGIL_RUN_ID", req->run_id);
	return (env.v);
fail:
	for (i = 0; i < env.n; i++)
		free(env.v[i]);
	free(env.v);
	return (NULL);
}

void
spawn_env_free(char **envp)
{
	size_t i;

	for (i = 0; envp != NULL && envp[i] != NULL; i++)
		free(envp[i]);
	free(envp);
}

const char *
spawn_env_get(char **envp, const char *key)
{
	size_t i, klen = strlen(key);

	for (i = 0; envp[i] != NULL; i++) {
		if (strncmp(envp[i], key, klen) == 0 && envp[i][klen] == '=')
			return (envp[i] + klen + 1);
	}
	return (NULL);
}

/*
 * The next place on the PATH list *dirs (moved past it) to look for name:
 * "DIR/name" in full (len bytes), empty and too long entries skipped.
 * Returns 0, or -1 at the end of the list.  Only snprintf: the child
 * calls it between fork and exec, as spawn_command_check does before.
 */
int
spawn_path_next(const char **dirs, const char *name, char *full, size_t len)
{
	const char *dir, *end;
	size_t dlen;

	while ((dir = *dirs) != NULL) {
		end = strchr(dir, ':');
		dlen = end != NULL ? (size_t)(end - dir) : strlen(dir);
		*dirs = end != NULL ? end + 1 : NULL;
		if (dlen > 0 &&
		    (size_t)snprintf(
		        full, len, "%.*s/%s", (int)dlen, dir, name) < len)
			return (0);
	}
	return (-1);
}
