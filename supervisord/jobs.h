/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Jobs and their instances at run time: struct job, struct inst (one
 * running copy of a job: its lifecycle, its run, its cgroup, lock, timers,
 * alert state, lease and kind's slot) and struct run.
 */

#ifndef VIGILD_JOBS_H
#define VIGILD_JOBS_H

#include <sys/types.h>

#include <bsd/sys/queue.h>
#include <bsd/sys/tree.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "child.h"
#include "conf.h"
#include "job.h"
#include "life.h"
#include "lock.h"
#include "queue.h"

struct cgroup_files;
struct kind_ops;
struct lease_slot;
struct logfile;
struct outpipe;
struct prober;
struct proc_info;

struct waiter; /* waiters.c */
TAILQ_HEAD(waiter_list, waiter);

/* One run of an instance: a fork, from spawn to reap (run.c). */
struct run {
	pid_t pid;           /* leader, 0 when none */
	struct child leader; /* its reap is the run's (child.c) */
	pid_t pgid;          /* its process group while the run lasts */
	uint64_t starttime;  /* its /proc start time if known at spawn, or 0 */
	uint64_t started;    /* monotonic usec at fork */
	char id[17];
	int64_t row;             /* its row in the state backend, or 0 */
	int stdin_fd;            /* stdin = "pipe": the write end, or -1 */
	sd_event_source *report; /* the exec report, until the exec */
	struct outpipe *out;     /* its pipe to the job's log, or NULL */
	/* ready = "notify": what the job said on NOTIFY_SOCKET. */
	char *status;     /* STATUS=, or NULL */
	int notify_errno; /* ERRNO=, or 0 */
	pid_t mainpid;    /* MAINPID=, or 0 */
	/* its cgroup's OOM kills at spawn (UINT64_MAX: unknown); more at
	 * the end: the OOM killer ended it (reason "oom") */
	uint64_t oom_kills;
	int oom;
	uint64_t born; /* boot clock ticks just before the first fork */
	/* without a cgroup: the run's processes found last (track.c) */
	struct proc_info *lineage;
	size_t nlineage;
	pid_t refused; /* the last pid_file pid not believed (said once) */
	/* exec_start_pre and exec_stop_post lead the run before and after
	 * the command, the forking job's daemon is waited for: the stages
	 * of the lifecycle (life-run.c), with a timer of their own */
	sd_event_source *stage_timer;
	char *step_failed;   /* why exec_start_pre failed, or NULL */
	int last_status;     /* the wait status of the last leader reaped */
	int main_status;     /* how the run ended, while exec_stop_post runs */
	pid_t main_pid;      /* whose end that is */
	uint64_t main_ended; /* monotonic usec of that end */
};

/* How the last run ended. */
struct run_end {
	int known;  /* a run reached exec and ended */
	int status; /* its wait status */
	char *what; /* how it ended, in run_describe's words, or NULL */
};

/* kind = "periodic": the instance's schedule (periodic.c). */
struct periodic_slot {
	sd_event_source *src; /* the next slot */
	uint64_t mono;        /* every: monotonic usec of the next slot */
	int64_t wall;         /* wall clock usec of the next slot */
	unsigned int skipped; /* slots skipped: a run was still going */
};

/* kind = "queue": each instance is a slot working one message. */
struct queue_slot {
	struct queue_msg msg; /* the message of the current run; id 0: none */
	int deleted;          /* the message was deleted while it ran */
	char *tail;           /* the ended run's last output, or NULL */
	size_t tail_len;
};

/* How an instance's reason begins when vigild had no descriptor left. */
#define INST_NO_FDS "out of file descriptors"

/* One running copy of a job (instances = N gives N of these). */
struct inst {
	struct job *job;
	int index;
	char *label;          /* "name", or "name@index" when instances > 1 */
	struct life life;     /* its lifecycle (lib/life.c) */
	enum job_state state; /* life_state(life.phase), as users see it */
	uint64_t since;       /* monotonic usec of the last state change */
	char *reason;         /* why it is in this state, or NULL */
	struct run run;       /* the current run (run.pid 0: none) */
	struct run_end last;  /* how the last one ended */
	uint64_t next_start;  /* BACKOFF: monotonic usec of the restart */

	int cg_fd;                     /* its cgroup (track.c), or -1 */
	struct cgroup_files *cg_files; /* its usage files, kept open */
	int cg_killed;                 /* cgroup.kill was written to it */
	sd_event_source *cg_watch;     /* its cgroup.events */
	int lock_fd;   /* its lock, held while active, else -1 */
	int record_fd; /* its holder record (never a job's), or -1 */
	struct lock_holder leftover; /* BLOCKED: the group being reclaimed */

	/* the operator's word is life.intent; who said it and when: */
	long intent_uid;
	int64_t intent_at; /* when, wall clock usec */
	int reload_start;  /* start after a reload replaced the job */

	sd_event_source *timer;    /* for life.timer's purpose */
	sd_event_source *deadline; /* the run's timeout */
	sd_event_source *watchdog; /* fires when WATCHDOG=1 is late */
	sd_event_source *stable;   /* wakes start waiters at min_uptime */
	struct prober *probe;      /* its ready or health probe (prober.c) */

	/* Its alert state (alert.c), kept in state.db while not ALERT_OK. */
	struct inst_alert {
		int state;               /* ALERT_OK, _FAILING, _CRASHLOOP */
		int64_t since;           /* failing since, wall usec */
		unsigned int failures;   /* failed runs since */
		int64_t said;            /* the last alert said, wall usec */
		uint64_t delay;          /* the restart delay reached */
		sd_event_source *stable; /* recovered at min_uptime */
		uint64_t *fails; /* start_limit: failed starts (monotonic) */
		int nfails, capfails;
	} alert;

	struct lease_slot *lease; /* cluster = true: its lease (cluster.c) */

	struct periodic_slot per; /* kind = "periodic" */
	struct queue_slot q;      /* kind = "queue" */

	int dep_wait; /* on the dependency wait list */
	TAILQ_ENTRY(inst) dep_entry;
	struct waiter_list waiters;
	unsigned int resolve_mark;  /* cmd_resolve(): taken once per request */
	RB_ENTRY(inst) sid_entry;   /* by session (run.pgid) */
	TAILQ_ENTRY(inst) gw_entry; /* on the group-wait list */
};

struct job {
	char *name;
	struct job_spec *spec;
	const struct kind_ops *kind; /* what its kind does: inst_kind_of() */
	unsigned int cg_warned;      /* cgroup limits said to be ignored */
	struct job_spec *next_spec;  /* reload: replaces spec once all stop */
	int retiring;                /* reload: removed once all stop */
	int shrink_to; /* reload: instances past this go once down, or 0 */
	/* watch.c: changes seen, the last one, the wait for quiet */
	sd_event_source *watch_timer;
	unsigned int watch_changes;
	char *watch_last;
	int nactive;             /* instances in an active state */
	int dependents;          /* shutdown: active jobs needing this */
	sd_event_source *settle; /* deferred replace or removal */
	struct logfile *log;     /* LOG_DIR/NAME.log, its followers */
	struct inst **insts;     /* each allocated alone: it never moves */
	int ninsts;
	/* kind = "queue" */
	sd_event_source *kick; /* deferred dispatch */
	sd_event_source *due;  /* wakes dispatch at the next due message */
	int recovered;         /* messages left running were recovered */
	int claiming;          /* cluster = true: a claim is on its way */
	/* cluster = true: the job's id in the database (0: not seeded yet)
	 * and the operator's hold, cluster-wide */
	int64_t cluster_id;
	int cluster_held;
	RB_ENTRY(job) entry;
};

#endif
