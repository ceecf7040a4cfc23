/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * /proc helpers.  A pid alone does not name a process for long: pids are
 * reused.  The pair (pid, start time in clock ticks since boot, field 22 of
 * /proc/PID/stat) does, and is what lock holder records store.
 */

#include "config.h"

#include <sys/types.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proc.h"

/*
 * Read numeric field want (1-based, as in proc(5)) of /proc/PID/stat into
 * *out.  Return 0, or -1 with errno ENOENT/ESRCH if there is no such
 * process.
 */
static int
proc_stat_field(pid_t pid, int want, uint64_t *out)
{
	char path[64], buf[1024], *p, *end;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (-1);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0) {
		errno = ESRCH;
		return (-1);
	}
	buf[n] = '\0';
	/* The command name (field 2) may hold spaces and parentheses. */
	if ((p = strrchr(buf, ')')) == NULL) {
		errno = EINVAL;
		return (-1);
	}
	p++;
	/* p now points before field 3; find the space before field want. */
	for (field = 2; field < want - 1 && p != NULL; field++)
		p = strchr(p + 1, ' ');
	if (p == NULL) {
		errno = EINVAL;
		return (-1);
	}
	errno = 0;
	*out = strtoull(p + 1, &end, 10);
	if (errno != 0 || end == p + 1) {
		errno = EINVAL;
		return (-1);
	}
	return (0);
}

/*
 * Read the start time of pid (clock ticks after boot) into *out.  Return 0,
 * or -1 with errno ENOENT/ESRCH if there is no such process.
 */
int
proc_starttime(pid_t pid, uint64_t *out)
{
	return (proc_stat_field(pid, 22, out));
}

/*
 * Read the process group of pid into *out.  Return 0, or -1 with errno
 * ENOENT/ESRCH if there is no such process.
 */
int
proc_pgid(pid_t pid, pid_t *out)
{
	uint64_t v;

	if (proc_stat_field(pid, 5, &v) == -1)
		return (-1);
	*out = (pid_t)v;
	return (0);
}

/*
 * Read the parent of pid into *out.  Return 0, or -1 with errno
 * ENOENT/ESRCH if there is no such process.
 */
int
proc_ppid(pid_t pid, pid_t *out)
{
	uint64_t v;

	if (proc_stat_field(pid, 4, &v) == -1)
		return (-1);
	*out = (pid_t)v;
	return (0);
}

/*
 * Read the session of pid into *out.  Return 0, or -1 with errno
 * ENOENT/ESRCH if there is no such process.
 */
int
proc_sid(pid_t pid, pid_t *out)
{
	uint64_t v;

	if (proc_stat_field(pid, 6, &v) == -1)
		return (-1);
	*out = (pid_t)v;
	return (0);
}

/*
 * Read the real and effective user of pid into *ruid and *euid.  Return
 * 0, or -1 with errno (ENOENT: no such process; EINVAL: no Uid line).
 */
int
proc_uids(pid_t pid, uid_t *ruid, uid_t *euid)
{
	char path[64], line[256];
	unsigned long r, e;
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	if ((f = fopen(path, "re")) == NULL)
		return (-1);
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = sscanf(line, "Uid: %lu %lu", &r, &e) == 2;
	fclose(f);
	if (!found) {
		errno = EINVAL;
		return (-1);
	}
	*ruid = (uid_t)r;
	*euid = (uid_t)e;
	return (0);
}

/*
 * Call fn(pid, arg) for each process in /proc until fn returns non-zero;
 * return that value, 0 when every process was seen, or -1 with errno when
 * /proc cannot be read.
 */
int
proc_each(int (*fn)(pid_t, void *), void *arg)
{
	struct dirent *de;
	DIR *d;
	long pid;
	char *end;
	int r = 0;

	if ((d = opendir("/proc")) == NULL)
		return (-1);
	while (r == 0 && (de = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = strtol(de->d_name, &end, 10);
		if (*end != '\0' || pid <= 0)
			continue;
		r = fn((pid_t)pid, arg);
	}
	closedir(d);
	return (r);
}

/* Read /proc/PID/stat into *pi; -1 with errno when pid is gone. */
static int
proc_info_read(pid_t pid, struct proc_info *pi)
{
	char path[64], buf[1024], *p;
	unsigned long long v[4];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (-1);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || (buf[n] = '\0', p = strrchr(buf, ')')) == NULL) {
		errno = ESRCH;
		return (-1);
	}
	/* Fields 3 (state) to 6 (session), then 22 (starttime). */
	if (sscanf(p + 1,
	        " %c %llu %llu %llu %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
	        "%*s %*s %*s %*s %*s %llu",
	        &pi->state, &v[0], &v[1], &v[2], &v[3]) != 5) {
		errno = EINVAL;
		return (-1);
	}
	pi->pid = pid;
	pi->ppid = (pid_t)v[0];
	pi->pgid = (pid_t)v[1];
	pi->sid = (pid_t)v[2];
	pi->starttime = v[3];
	return (0);
}

static int
proc_snapshot_one(pid_t pid, void *arg)
{
	struct proc_snapshot *ps = arg;
	struct proc_info pi;

	if (proc_info_read(pid, &pi) == -1)
		return (0); /* gone meanwhile */
	if (ps->n == ps->cap) {
		ps->cap = ps->cap == 0 ? 256 : ps->cap * 2;
		if ((ps->procs = reallocarray(
		         ps->procs, ps->cap, sizeof(*ps->procs))) == NULL)
			return (-1);
	}
	ps->procs[ps->n++] = pi;
	return (0);
}

static int
proc_info_cmp(const void *a, const void *b)
{
	const struct proc_info *x = a, *y = b;

	return (x->pid < y->pid ? -1 : x->pid > y->pid);
}

/*
 * Read every process's parent, group, session and start time into ps,
 * sorted by pid (proc_snapshot_find).  Return 0, or -1 with errno; either
 * way ps is to be freed with proc_snapshot_clear.
 */
int
proc_snapshot(struct proc_snapshot *ps)
{
	memset(ps, 0, sizeof(*ps));
	if (proc_each(proc_snapshot_one, ps) != 0)
		return (-1);
	qsort(ps->procs, ps->n, sizeof(*ps->procs), proc_info_cmp);
	return (0);
}

/* The entry of pid in ps, or NULL. */
struct proc_info *
proc_snapshot_find(const struct proc_snapshot *ps, pid_t pid)
{
	struct proc_info key;

	if (ps->n == 0)
		return (NULL);
	memset(&key, 0, sizeof(key));
	key.pid = pid;
	return (
	    bsearch(&key, ps->procs, ps->n, sizeof(*ps->procs), proc_info_cmp));
}

/* Free what proc_snapshot read. */
void
proc_snapshot_clear(struct proc_snapshot *ps)
{
	free(ps->procs);
	memset(ps, 0, sizeof(*ps));
}

/*
 * Does the environment pid was started with (/proc/PID/environ) hold the
 * entry "KEY=value" exactly?  Return 1 or 0 (also when it cannot be read).
 */
int
proc_environ_has(pid_t pid, const char *entry)
{
	char path[64], buf[8192], *p, *end;
	size_t len = strlen(entry), have = 0;
	ssize_t n;
	int fd, found = 0;

	if (len == 0 || len >= sizeof(buf) / 2)
		return (0);
	snprintf(path, sizeof(path), "/proc/%ld/environ", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (0);
	/* Whole entries only; a partial last one moves to the front. */
	while (!found && (n = read(fd, buf + have, sizeof(buf) - have)) > 0) {
		have += (size_t)n;
		for (p = buf; !found &&
		     (end = memchr(p, '\0', have - (size_t)(p - buf))) != NULL;
		     p = end + 1)
			found = (size_t)(end - p) == len &&
			    memcmp(p, entry, len) == 0;
		have -= (size_t)(p - buf);
		memmove(buf, p, have);
		if (have == sizeof(buf))
			have = 0; /* an entry too long to be ours */
	}
	close(fd);
	return (found);
}

/*
 * Describe pid for a log line, "1234 (name) uid 65534", into buf.  Return
 * buf; a vanished process is described by its pid alone.
 */
const char *
proc_describe(pid_t pid, char *buf, size_t len)
{
	char path[64], comm[64], line[256];
	FILE *f;
	long uid = -1;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%ld/comm", (long)pid);
	comm[0] = '\0';
	if ((f = fopen(path, "re")) != NULL) {
		n = fread(comm, 1, sizeof(comm) - 1, f);
		comm[n] = '\0';
		comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	if ((f = fopen(path, "re")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL) {
			if (sscanf(line, "Uid: %ld", &uid) == 1)
				break;
		}
		fclose(f);
	}
	if (uid >= 0)
		snprintf(buf, len, "%ld (%s) uid %ld", (long)pid, comm, uid);
	else
		snprintf(buf, len, "%ld", (long)pid);
	return (buf);
}

/*
 * Return 1 if pid is alive (zombies included) and started at starttime,
 * else 0.
 */
int
proc_is_same(pid_t pid, uint64_t starttime)
{
	uint64_t st;

	if (pid <= 0 || proc_starttime(pid, &st) == -1)
		return (0);
	return (st == starttime);
}

/* Return 1 if process group pgid has any member left, else 0. */
int
proc_group_exists(pid_t pgid)
{
	if (pgid <= 1)
		return (0);
	if (kill(-pgid, 0) == 0)
		return (1);
	return (errno == EPERM);
}

/*
 * Send sig to every process in group pgid.  Return 0, or -1 with errno
 * (ESRCH when the group is empty).  Refuses pgid <= 1, which kill(2) would
 * read as "every process".
 */
int
proc_group_signal(pid_t pgid, int sig)
{
	if (pgid <= 1) {
		errno = EINVAL;
		return (-1);
	}
	return (kill(-pgid, sig));
}

/*
 * The boot clock in the unit of /proc/PID/stat's starttime (clock ticks
 * since boot, as the kernel stamps a new task).  A child made between two
 * equal readings started at exactly that tick: its start time is known
 * without reading /proc, which after an exec waits for the child's memory
 * map.  Return 0 if the clock cannot be read.
 */
uint64_t
proc_boot_ticks(void)
{
	static long hz;
	struct timespec ts;

	if (hz <= 0 && (hz = sysconf(_SC_CLK_TCK)) <= 0)
		return (0);
	if (clock_gettime(CLOCK_BOOTTIME, &ts) == -1)
		return (0);
	return ((uint64_t)ts.tv_sec * (uint64_t)hz +
	    (uint64_t)ts.tv_nsec / (1000000000ULL / (uint64_t)hz));
}
