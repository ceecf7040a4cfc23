/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Process tracking by cgroup v2 (vigil.conf `cgroup = "auto"`): each
 * instance runs in its own cgroup, BASE/NAME@INDEX, entered by the child
 * before it execs, so every process the job ever makes is a member
 * whatever its session.  BASE is vigild's own cgroup when systemd
 * delegated it (Delegate=yes; vigild moves itself into BASE/supervisor,
 * the "no internal processes" rule), else, as root, a `vigil` cgroup at
 * the hierarchy's top (`vigil-HASH` for a runtime directory other than
 * the default, so that two vigild never share one).  Otherwise, or with
 * `cgroup = "off"`, one log line says why and instances are tracked by
 * their lineage (lineage.c).
 *
 * Hooks have cgroups of their own beside the instances' (JOB@hooks for a
 * job's on_failure, @on_event), emptied when each hook ends and removed
 * at exit; exec_start_post runs in its instance's cgroup.
 *
 * The end of a run is "populated 0" in the cgroup's cgroup.events,
 * watched as an I/O source (the kernel wakes it with POLLPRI), at a lower
 * priority than SIGCHLD so that the leader's exit status comes first.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "effects.h"
#include "evloop.h"
#include "inst.h"
#include "jobs.h"
#include "log.h"
#include "spare.h"
#include "vigild.h"
#include "xmalloc.h"

/* The cgroup.events watch runs after SIGCHLD (sd-event's default is 0). */
#define TRACK_PRIORITY 10

static int track_base = -1; /* BASE, or -1: tracking by process group */
static char track_where[PATH_MAX];
static int track_own; /* BASE was made by vigild, not delegated to it */
static char track_mount[PATH_MAX]; /* the hierarchy's root */

/* The cgroup of a line of hooks (track_hook_cgroup). */
struct track_hook {
	char *name;
	int fd;
	TAILQ_ENTRY(track_hook) entry;
};
static TAILQ_HEAD(, track_hook) track_hooks = TAILQ_HEAD_INITIALIZER(
    track_hooks);

/* A limit: its option, its controller, its file. */
struct track_limit {
	const char *option;
	const char *controller;
	const char *file;
};

static const struct track_limit track_limits[] = {
	{ "memory_max", "memory", "memory.max" },
	{ "memory_high", "memory", "memory.high" },
	{ "tasks_max", "pids", "pids.max" },
	{ "cpu_weight", "cpu", "cpu.weight" },
	{ "cpu_max", "cpu", "cpu.max" },
	{ "io_weight", "io", "io.weight" },
};
#define TRACK_NLIMITS (sizeof(track_limits) / sizeof(track_limits[0]))

/* The controllers of the limits, and whether each can be had (-1: not
 * asked since the last load). */
static const char *const track_ctls[] = { "memory", "pids", "cpu", "io" };
#define TRACK_NCTL (sizeof(track_ctls) / sizeof(track_ctls[0]))
static int track_ctl_ok[TRACK_NCTL] = { -1, -1, -1, -1 };

/* vigild -t: the cgroup vigild would have (track_check_init), or -1. */
static int track_probe = -1;
static char track_probe_where[PATH_MAX];

/* FNV-1a of s, for the name of a runtime directory's BASE. */
static uint64_t
track_hash(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return (h);
}

/* Open (make) BASE under dir; say why not on failure. */
static int
track_open_base(const char *dir, const char *name)
{
	int dfd, fd;

	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		log_warn("cgroup: %s", dir);
		return (-1);
	}
	fd = cgroup_open(dfd, name, 1);
	if (fd == -1)
		log_warn("cgroup: cannot make %s/%s; jobs are tracked by "
		         "process group",
		    dir, name);
	close(dfd);
	if (fd != -1 &&
	    (size_t)snprintf(track_where, sizeof(track_where), "%s/%s", dir,
	        name) >= sizeof(track_where))
		log_warnx("cgroup: %s/%s: name too long to show", dir, name);
	return (fd);
}

/* Delegated: vigild itself moves into BASE/supervisor; BASE is its own. */
static int
track_delegated(const struct cgroup_where *w)
{
	int base, sup;

	if ((base = open(w->self, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		log_warn("cgroup: %s", w->self);
		return (-1);
	}
	if ((sup = cgroup_open(base, "supervisor", 1)) == -1 ||
	    cgroup_move(sup, 0) == -1) {
		log_warn("cgroup: cannot move vigild into %s/supervisor; jobs "
		         "are tracked by process group",
		    w->self);
		if (sup != -1)
			close(sup);
		close(base);
		return (-1);
	}
	close(sup);
	strlcpy(track_where, w->self, sizeof(track_where));
	return (base);
}

/* Choose where instances' cgroups go, once, at start. */
void
track_init(void)
{
	struct cgroup_where w;
	char name[64], *cause = NULL;

	if (vigild.conf->cgroup == CONF_CGROUP_OFF)
		return;
	if (cgroup_find(&w, &cause) == -1) {
		log_info(
		    "cgroup: %s; jobs are tracked by process group", cause);
		free(cause);
		return;
	}
	if (w.delegated)
		track_base = track_delegated(&w);
	else if (access("/run/systemd/system", F_OK) == 0 && !w.is_root)
		log_info("cgroup: %s is not delegated (Delegate=yes in the "
		         "unit); jobs are tracked by process group",
		    w.self);
	else if (geteuid() != 0)
		log_info("cgroup: not root and %s is not delegated; jobs are "
		         "tracked by process group",
		    w.self);
	else {
		if (strcmp(vigild.runtime_dir, RUNSTATEDIR "/vigil") == 0)
			strlcpy(name, "vigil", sizeof(name));
		else
			snprintf(name, sizeof(name), "vigil-%012llx",
			    (unsigned long long)(track_hash(
			                             vigild.runtime_dir) &
			        0xffffffffffffULL));
		track_base = track_open_base(w.mount, name);
		track_own = track_base != -1;
		strlcpy(track_mount, w.mount, sizeof(track_mount));
	}
	if (track_base != -1)
		log_info(
		    "cgroup: each instance runs in its own cgroup under %s",
		    track_where);
}

/* Is tracking by cgroup on? */
int
track_enabled(void)
{
	return (track_base != -1);
}

/* cgroup.events changed: the run's processes may all be gone. */
static int
track_events(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	struct inst *in = arg;
	char buf[256];

	/* Read it whole again: that ends the wake-up. */
	(void)lseek(fd, 0, SEEK_SET);
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	if (in->life.run == LIFE_RUN_GROUP && cgroup_populated(in->cg_fd) == 0)
		inst_feed(in, LIFE_EV_GROUP_GONE);
	return (0);
}

/* Watch the instance's cgroup.events. */
static int
track_watch(struct inst *in, char **cause)
{
	int fd;

	fd = openat(
	    in->cg_fd, "cgroup.events", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd == -1) {
		xasprintf(cause, "cgroup %s/%s@%d: cgroup.events: %s",
		    track_where, in->job->name, in->index, strerror(errno));
		return (-1);
	}
	evloop_io(&in->cg_watch, fd, EPOLLPRI, track_events, in);
	(void)sd_event_source_set_io_fd_own(in->cg_watch, 1);
	(void)sd_event_source_set_priority(in->cg_watch, TRACK_PRIORITY);
	return (0);
}

/*
 * Make the controller ctl available to the instances' cgroups: enabled
 * in BASE's subtree (and, for a BASE vigild made, in the root's first).
 */
static int
track_enable(const char *ctl)
{
	char plus[32];
	int root;

	if (cgroup_lists(track_base, "cgroup.subtree_control", ctl))
		return (0);
	snprintf(plus, sizeof(plus), "+%s", ctl);
	if (track_own) {
		if ((root = open(track_mount,
		         O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
			return (-1);
		if (!cgroup_lists(root, "cgroup.subtree_control", ctl) &&
		    cgroup_write(root, "cgroup.subtree_control", plus) == -1) {
			close(root);
			return (-1);
		}
		close(root);
	}
	if (!cgroup_lists(track_base, "cgroup.controllers", ctl)) {
		errno = ENOENT;
		return (-1);
	}
	return (cgroup_write(track_base, "cgroup.subtree_control", plus));
}

/* The value of limit i of spec as its control file wants it, or NULL. */
static const char *
track_limit_value(const struct job_spec *spec, size_t i, char *buf, size_t len)
{
	const struct conf_cglimits *l = &spec->cg;
	uint64_t v[] = { l->memory_max, l->memory_high, (uint64_t)l->tasks_max,
		(uint64_t)l->cpu_weight, (uint64_t)l->cpu_max,
		(uint64_t)l->io_weight };

	if (v[i] == 0)
		return (NULL);
	if (strcmp(track_limits[i].file, "cpu.max") == 0)
		snprintf(
		    buf, len, "%llu 100000", (unsigned long long)v[i] * 1000);
	else if (strcmp(track_limits[i].file, "io.weight") == 0)
		snprintf(buf, len, "default %llu", (unsigned long long)v[i]);
	else
		snprintf(buf, len, "%llu", (unsigned long long)v[i]);
	return (buf);
}

/* The policy of spec for a limit that cannot be enforced. */
static int
track_policy(const struct job_spec *spec)
{
	if (spec->limits_policy != -1)
		return (spec->limits_policy);
	return (vigild.conf != NULL ? vigild.conf->limits_policy :
	                              CONF_LIMITS_BEST_EFFORT);
}

/* The slot of controller ctl in track_ctl_ok. */
static int
track_ctl_index(const char *ctl)
{
	size_t i;

	for (i = 0; i < TRACK_NCTL; i++) {
		if (strcmp(track_ctls[i], ctl) == 0)
			return ((int)i);
	}
	return (-1);
}

/*
 * Can controller ctl be had for the instances' cgroups?  Asked once per
 * load (track_jobs_check forgets the answers) and kept: with tracking
 * on, by enabling it (track_enable); for vigild -t, by the controllers of
 * the cgroup vigild would use (track_check_init); without tracking, no.
 */
static int
track_ctl_available(const char *ctl)
{
	int i = track_ctl_index(ctl);

	if (i == -1)
		return (0);
	if (track_ctl_ok[i] == -1) {
		if (track_base != -1)
			track_ctl_ok[i] = track_enable(ctl) == 0;
		else if (track_probe != -1)
			track_ctl_ok[i] = cgroup_lists(
			    track_probe, "cgroup.controllers", ctl);
		else
			track_ctl_ok[i] = 0;
	}
	return (track_ctl_ok[i]);
}

/*
 * The limits of spec that cannot be enforced here: a mask of
 * track_limits' bits (0: all can, or none is set), and in why (len
 * bytes) what is missing, "no cpu controller in /sys/fs/cgroup/vigil" or
 * "no cgroup: jobs are tracked by process group".
 */
unsigned int
track_limits_missing(const struct job_spec *spec, char *why, size_t len)
{
	char buf[64], ctls[64] = "";
	const char *last = NULL;
	unsigned int mask = 0;
	size_t i;

	if (why != NULL && len > 0)
		*why = '\0';
	/* "cpu", "pids or cpu", "memory, pids or cpu". */
	for (i = 0; i < TRACK_NLIMITS; i++) {
		if (track_limit_value(spec, i, buf, sizeof(buf)) == NULL ||
		    track_ctl_available(track_limits[i].controller))
			continue;
		mask |= 1U << i;
		if (last != NULL &&
		    strcmp(last, track_limits[i].controller) == 0)
			continue;
		if (last != NULL) {
			if (*ctls != '\0')
				strlcat(ctls, ", ", sizeof(ctls));
			strlcat(ctls, last, sizeof(ctls));
		}
		last = track_limits[i].controller;
	}
	if (last != NULL) {
		if (*ctls != '\0')
			strlcat(ctls, " or ", sizeof(ctls));
		strlcat(ctls, last, sizeof(ctls));
	}
	if (mask == 0 || why == NULL)
		return (mask);
	if (vigild.conf != NULL && vigild.conf->cgroup == CONF_CGROUP_OFF)
		snprintf(why, len, "cgroup = \"off\": no cgroups");
	else if (track_base == -1 && track_probe == -1)
		snprintf(
		    why, len, "no cgroup: jobs are tracked by process group");
	else
		snprintf(why, len, "no %s controller in %s", ctls,
		    track_base != -1 ? track_where : track_probe_where);
	return (mask);
}

/* The limits spec sets: a mask of track_limits' bits. */
unsigned int
track_limits_set(const struct job_spec *spec)
{
	char buf[64];
	unsigned int mask = 0;
	size_t i;

	for (i = 0; i < TRACK_NLIMITS; i++) {
		if (track_limit_value(spec, i, buf, sizeof(buf)) != NULL)
			mask |= 1U << i;
	}
	return (mask);
}

/* The option name of limit bit i, or NULL past the last. */
const char *
track_limit_name(unsigned int i)
{
	return (i < TRACK_NLIMITS ? track_limits[i].option : NULL);
}

/*
 * The limits of the jobs of a loaded jobs.d, with the controllers as they
 * are now: a job with limits = "require" whose limits cannot all be
 * enforced is an error, named by file (status shows it BROKEN; a reload
 * with one changes nothing), and taken out of jobs; for the others, each
 * limit that will not be enforced is a warning, in vigild's log (warn
 * set) or for vigild -t (counted in *nwarn, on standard error).
 */
void
track_jobs_check(
    struct conf_jobs *jobs, struct conf_errors *errs, int check, size_t *nwarn)
{
	struct job_spec *spec;
	char why[PATH_MAX + 64];
	unsigned int mask, b;
	size_t i, k = 0;

	memset(track_ctl_ok, -1, sizeof(track_ctl_ok));
	for (i = 0; i < jobs->n; i++) {
		spec = jobs->specs[i];
		if ((mask = track_limits_missing(spec, why, sizeof(why))) ==
		    0) {
			jobs->specs[k++] = spec;
			continue;
		}
		if (track_policy(spec) == CONF_LIMITS_REQUIRE) {
			conf_errors_add(errs,
			    "%s: limits = \"require\": %s cannot be enforced "
			    "(%s)",
			    spec->path, track_limit_list(mask), why);
			job_spec_free(spec);
			continue;
		}
		jobs->specs[k++] = spec;
		for (b = 0; b < TRACK_NLIMITS; b++) {
			if (!(mask & (1U << b)))
				continue;
			if (check) {
				fprintf(stderr,
				    "%s: warning: %s: not enforced here (%s)\n",
				    spec->path, track_limits[b].option, why);
				(*nwarn)++;
			} else
				log_warnx("%s: %s not enforced (%s); "
				          "limits = \"require\" would not run "
				          "it",
				    spec->name, track_limits[b].option, why);
		}
	}
	jobs->n = k;
}

/* The options of mask, "cpu_max, tasks_max" (a static buffer). */
const char *
track_limit_list(unsigned int mask)
{
	static char buf[128];
	unsigned int b;

	*buf = '\0';
	for (b = 0; b < TRACK_NLIMITS; b++) {
		if (!(mask & (1U << b)))
			continue;
		if (*buf != '\0')
			strlcat(buf, ", ", sizeof(buf));
		strlcat(buf, track_limits[b].option, sizeof(buf));
	}
	return (buf);
}

/*
 * For vigild -t: the cgroup whose controllers vigild would have (its own
 * when delegated, else the hierarchy's root), read but not touched.
 */
void
track_check_init(void)
{
	struct cgroup_where w;
	char *cause = NULL;

	if (vigild.conf->cgroup == CONF_CGROUP_OFF)
		return;
	if (cgroup_find(&w, &cause) == -1) {
		free(cause);
		return;
	}
	strlcpy(track_probe_where, w.delegated ? w.self : w.mount,
	    sizeof(track_probe_where));
	track_probe =
	    open(track_probe_where, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/*
 * Write the job's limits into the instance's new cgroup.  A limit whose
 * controller is not there (found at load, or only now) is said once per
 * job; with limits = "require" it fails the start: -1 with *cause.
 */
static int
track_limits_apply(struct job *job, int fd, char **cause)
{
	char buf[64];
	const char *v;
	size_t i;
	int ctl;

	for (i = 0; i < TRACK_NLIMITS; i++) {
		if ((v = track_limit_value(job->spec, i, buf, sizeof(buf))) ==
		    NULL)
			continue;
		if (track_enable(track_limits[i].controller) == 0 &&
		    cgroup_write(fd, track_limits[i].file, v) == 0)
			continue;
		if ((ctl = track_ctl_index(track_limits[i].controller)) != -1)
			track_ctl_ok[ctl] = 0;
		if (cause != NULL &&
		    track_policy(job->spec) == CONF_LIMITS_REQUIRE) {
			xasprintf(cause,
			    "limits = \"require\": %s cannot be enforced (the "
			    "%s controller in %s: %s)",
			    track_limits[i].option, track_limits[i].controller,
			    track_where, strerror(errno));
			return (-1);
		}
		if (job->cg_warned & (1U << i))
			continue;
		job->cg_warned |= 1U << i;
		log_warnx("%s: %s ignored: the %s controller is not "
		          "available in %s (%s)",
		    job->name, track_limits[i].option,
		    track_limits[i].controller, track_where, strerror(errno));
	}
	return (0);
}

/*
 * The cgroup a run of in goes into: made and watched the first time.
 * Return its descriptor, 0 when tracking is off, or -1 with *cause.
 */
int
track_prepare(struct inst *in, char **cause)
{
	char name[NAME_MAX + 1];

	if (track_base == -1)
		return (0);
	/*
	 * A cgroup that was emptied with cgroup.kill is made anew: the
	 * kernel compares each fork into it (CLONE_INTO_CGROUP) with the
	 * count of kills of the cgroup it forks from, and kills the child.
	 */
	if (in->cg_fd != -1 && in->cg_killed && !track_populated(in))
		track_release(in);
	if (in->cg_fd != -1)
		return (in->cg_fd);
	in->cg_killed = 0;
	snprintf(name, sizeof(name), "%s@%d", in->job->name, in->index);
	if ((in->cg_fd = cgroup_open(track_base, name, 1)) == -1) {
		xasprintf(cause, "cgroup %s/%s: %s", track_where, name,
		    strerror(errno));
		return (-1);
	}
	if (track_watch(in, cause) == -1) {
		close(in->cg_fd);
		in->cg_fd = -1;
		return (-1);
	}
	in->cg_files = xmalloc(sizeof(*in->cg_files));
	*in->cg_files = (struct cgroup_files)CGROUP_FILES_INIT;
	if (track_limits_apply(in->job, in->cg_fd, cause) == -1) {
		track_release(in);
		return (-1);
	}
	return (in->cg_fd);
}

/* Is anything of the instance's run left in its cgroup? */
int
track_populated(const struct inst *in)
{
	return (cgroup_populated(in->cg_fd) == 1);
}

/* What the instance's cgroup uses; -1 without one. */
int
track_usage(const struct inst *in, struct cgroup_usage *u)
{
	if (in->cg_fd == -1)
		return (-1);
	return (cgroup_usage(in->cg_fd, in->cg_files, u));
}

/* The OOM kills in the instance's cgroup so far; UINT64_MAX: unknown. */
uint64_t
track_oom_kills(const struct inst *in)
{
	return (in->cg_fd == -1 ? UINT64_MAX : cgroup_oom_kills(in->cg_fd));
}

/* The processes in the instance's cgroup: *pids (to free), *n. */
int
track_members(const struct inst *in, pid_t **pids, size_t *n)
{
	return (cgroup_pids(in->cg_fd, pids, n));
}

/* Return 1 if fewer than two descriptors are free (fd is open). */
static int
track_fds_short(int fd)
{
	int a, b = -1;

	if ((a = fcntl(fd, F_DUPFD_CLOEXEC, 0)) != -1)
		b = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (a != -1)
		close(a);
	if (b != -1)
		close(b);
	return (b == -1);
}

/* Send sig to every process of the instance's cgroup (KILL: at once). */
void
track_signal(struct inst *in, int sig)
{
	int r, spare;

	/*
	 * Signalling reads the cgroup's members and holds a pidfd: out of
	 * descriptors (a job set that took them all), with the spares.
	 */
	spare_give(); /* those free again, first */
	spare =
	    in->cg_fd != -1 && track_fds_short(in->cg_fd) && spare_take() == 0;
	r = sig == SIGKILL ? cgroup_kill(in->cg_fd) :
	                     cgroup_signal(in->cg_fd, sig);
	if (spare)
		spare_give();
	if (sig == SIGKILL)
		in->cg_killed = 1;

	if (r == -1)
		log_warn("%s: signal the cgroup", in->label);
}

/* The instance goes away: its cgroup too, once empty. */
void
track_release(struct inst *in)
{
	char name[NAME_MAX + 1];

	in->cg_watch = sd_event_source_disable_unref(in->cg_watch);
	if (in->cg_fd == -1)
		return;
	cgroup_files_close(in->cg_files);
	free(in->cg_files);
	in->cg_files = NULL;
	close(in->cg_fd);
	in->cg_fd = -1;
	snprintf(name, sizeof(name), "%s@%d", in->job->name, in->index);
	if (cgroup_remove(track_base, name) == -1)
		log_warn("cgroup %s/%s", track_where, name);
}

/*
 * The cgroup hooks of one line run in, BASE/name ("JOB@hooks" for a
 * job's on_failure, "@on_event"; "@" is in no job name, and an instance's
 * cgroup is NAME@N), made at first use with the limits of job (NULL:
 * none) and kept until exit.  Return its descriptor, 0 when tracking is
 * off, or -1 with *cause.
 */
int
track_hook_cgroup(const char *name, struct job *job, char **cause)
{
	struct track_hook *h;

	if (track_base == -1)
		return (0);
	TAILQ_FOREACH(h, &track_hooks, entry) {
		if (strcmp(h->name, name) == 0)
			break;
	}
	if (h == NULL) {
		h = xcalloc(1, sizeof(*h));
		if ((h->fd = cgroup_open(track_base, name, 1)) == -1) {
			xasprintf(cause, "cgroup %s/%s: %s", track_where, name,
			    strerror(errno));
			free(h);
			return (-1);
		}
		h->name = xstrdup(name);
		TAILQ_INSERT_TAIL(&track_hooks, h, entry);
	}
	/* Again each time: a reload may have changed the job's limits. */
	if (job != NULL)
		(void)track_limits_apply(job, h->fd, NULL);
	return (h->fd);
}

/*
 * A hook of the cgroup fd (track_hook_cgroup) ended: what it left there
 * is killed, signal by signal (never cgroup.kill, after which the kernel
 * kills what is cloned into the cgroup), so the cgroup serves again.
 */
void
track_hook_end(int fd)
{
	if (fd > 0 && cgroup_signal(fd, SIGKILL) == -1)
		log_warn("cgroup: kill what a hook left");
}

/* At exit: the hooks' cgroups are emptied and removed. */
static void
track_hooks_free(void)
{
	struct track_hook *h;
	int i;

	while ((h = TAILQ_FIRST(&track_hooks)) != NULL) {
		TAILQ_REMOVE(&track_hooks, h, entry);
		/* The SIGKILLed leave at once: a bounded wait (2 s). */
		for (i = 0; i < 200 && cgroup_populated(h->fd) == 1; i++) {
			(void)cgroup_signal(h->fd, SIGKILL);
			(void)usleep(10000);
		}
		close(h->fd);
		if (cgroup_remove(track_base, h->name) == -1)
			log_warn("cgroup %s/%s", track_where, h->name);
		free(h->name);
		free(h);
	}
}

/* At exit: a BASE vigild made goes if nothing is left in it. */
void
track_free(void)
{
	if (track_base == -1)
		return;
	track_hooks_free();
	close(track_base);
	track_base = -1;
	/* Busy: a leftover the next vigild reclaims. */
	if (track_own && rmdir(track_where) == -1 && errno != EBUSY &&
	    errno != ENOENT)
		log_warn("cgroup: remove %s", track_where);
}
