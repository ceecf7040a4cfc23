/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Daemon-private structures of vigild: jobs and their instances at run
 * time, control clients, the command table, the ops tables through which
 * the instance layer reaches the modules around it (inst_hooks, kind_ops,
 * claim_ops, state_ops), and what each file offers the others.  The map
 * of who calls whom is in docs/architecture.md (contrib/modgraph.py).
 */

#ifndef VIGILD_H
#define VIGILD_H

#include <sys/types.h>

#include <bsd/sys/queue.h>
#include <bsd/sys/tree.h>
#include <stdint.h>
#include <stdio.h>

#include <systemd/sd-event.h>

#include "child.h"
#include "conf.h"
#include "job.h"
#include "life.h"
#include "monotime.h"
#include "json.h"
#include "lock.h"
#include "proto.h"
#include "queue.h"
#include "store.h"
#include "xmalloc.h"

struct client;
struct job;
struct logfile;
struct outpipe;
struct proc_info;
struct spawn_announce;

/* A wait of a client for an instance to reach a state. */
enum wait_kind {
	WAIT_START, /* RUNNING is success; EXITED/BACKOFF/FATAL failure */
	WAIT_STOP,  /* any inactive state */
	WAIT_STATE, /* exactly target */
	WAIT_ASKED, /* the answer of another node (cluster-ask.c) */
};

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
RB_HEAD(job_tree, job);
RB_PROTOTYPE(job_tree, job, entry, registry_cmp)

/* vigild's global state. */
struct vigild {
	sd_event *event;
	struct conf *conf;
	const char *jobs_dir;
	const char *runtime_dir;
	const char *state_dir;
	const char *log_dir;
	/* The directories, opened and checked at start (lib/safedir.c). */
	int runtime_dirfd;
	int locks_dirfd; /* RUNTIME/locks */
	int state_dirfd; /* -1: no state dir, vigild goes on without it */
	int log_dirfd;
	struct job_tree jobs;
	size_t njobs;
	struct broken_job *broken; /* job files with errors, sorted by name */
	size_t nbroken;
	size_t nactive;                 /* instances in an active state */
	size_t nstate[JOB_STATE_COUNT]; /* instances in each state */
	int under_systemd;              /* NOTIFY_SOCKET was set */
	int shutting_down;
	int started; /* the jobs were started: catch_up is over */
	int exit_code;
	int lock_fd;
};

extern struct vigild vigild;

/* How to find a job by name (the tree is kept by registry.c). */
static inline struct job *
job_find(const char *name)
{
	struct job key = { .name = (char *)name };

	return (RB_FIND(job_tree, &vigild.jobs, &key));
}

/* claim.c: what taking a claim says */
enum claim_status {
	CLAIM_TAKEN = 0, /* the claim is the instance's now */
	CLAIM_LEFTOVER,  /* held by a proven leftover of a vigild */
	CLAIM_FOREIGN,   /* held by something else */
	CLAIM_ERROR,     /* cannot be had: cause */
	CLAIM_WAIT,      /* asked for (a cluster lease): the answer comes */
};

struct claim_result {
	int fd;       /* FOREIGN: our own description of the lock, or -1 */
	pid_t holder; /* LEFTOVER: the member of its group holding it */
	int same;     /* LEFTOVER: the one already being reclaimed */
	char *cause;  /* ERROR: why */
};

/* instance.c */
/* An event for inst_feed_event(): life's facts and the effects' own. */
struct inst_event {
	struct life_input in;
	const char *cause; /* SPAWN_FAILED, LOCK_ERROR, EXEC_FAILED: why */
	int quiet;         /* EXEC_FAILED known at the reap: logged there */
	int trigger;       /* WATCHDOG: WATCHDOG=trigger, not late */
	int lock_fd;       /* LOCK_FOREIGN: our description of the lock */
	pid_t holder;      /* LOCK_LEFTOVER: the member holding it */
	pid_t mainpid;     /* REAPED: the MAINPID= that carries on */
};

/*
 * What the instance layer needs from the modules around it, filled in at
 * start (vigild.c): it carries the lifecycle's actions out through these,
 * and names none of those modules itself.
 */
struct inst_hooks {
	/* deps.c */
	int (*held_back)(struct inst *); /* 1: held back by a dependency */
	void (*let_go)(struct inst *);
	/* claim.c: exclusivity */
	enum claim_status (*claim_take)(struct inst *, struct claim_result *);
	void (*claim_result_clear)(struct claim_result *);
	void (*claim_release)(struct inst *);
	void (*claim_failed)(struct inst *); /* the next release: failed */
	int (*claim_trusted)(struct inst *, char **); /* before each spawn */
	void (*leftover_term)(struct inst *, pid_t);
	void (*leftover_kill)(struct inst *, pid_t);
	void (*name_holder)(struct inst *, int);
	/* run.c: the processes */
	int (*fork)(struct inst *, enum life_stage, char **, int *, char **);
	/* the stage's actions (LIFE_S_*), then its answer */
	void (*stage)(
	    struct inst *, const struct inst_event *, const struct life_step *);
	void (*ended)(struct inst *, int, uint64_t, const struct life_step *);
	void (*close_stdin)(struct inst *);
	void (*forget)(struct inst *);
	unsigned int (*nforking)(void);
	void (*signal)(struct inst *, int); /* the run's processes */
	int (*alive)(struct inst *);        /* anything of the run left? */
	/* ready.c */
	void (*session_remove)(struct inst *);
	/* waiters, dependencies, reload, STATUS=: the state changed */
	void (*changed)(struct inst *, enum job_state); /* was */
	void (*gone)(struct inst *); /* the instance is freed */
	/* prober.c: after each step, the probe the phase calls for */
	void (*probe_sync)(struct inst *);
	/* poststart.c: the run became RUNNING (exec_start_post) */
	void (*running)(struct inst *);
};
extern struct inst_hooks inst_hooks;

/*
 * What differs between kinds (service, periodic, queue); NULL: nothing
 * (stdin_fd and env: the service's way).
 */
struct kind_ops {
	int (*stdin_fd)(struct inst *, int *, char **);
	void (*env)(struct inst *, char **); /* up to two "KEY=value" */
	void (*slot_arm)(struct inst *);     /* LIFE_A_ARM_SLOT */
	void (*slot_next)(struct inst *);    /* LIFE_A_NEXT_SLOT */
	void (*slot_disarm)(struct inst *);  /* LIFE_A_DISARM_SLOT */
	void (*slot_skip)(struct inst *);    /* LIFE_A_SKIP */
	int (*missed)(struct inst *);        /* catch_up: a slot passed */
	void (*kick)(struct job *);          /* LIFE_A_KICK */
	void (*msg_drop)(struct inst *);     /* LIFE_A_MSG_DROP */
	/* the run ended: status, success, its end as run_describe says */
	void (*run_end)(struct inst *, int, int, const char *);
	void (*job_free)(struct job *);
	int (*ninsts)(const struct job_spec *);         /* NULL: instances */
	uint64_t (*stop_time)(const struct job_spec *); /* NULL: stop_timeout */
	/* A start waited for (vigilctl start): settled in this state?  *ok:
	   its outcome.  -1: as a service's.  NULL: as a service's. */
	int (*start_settled)(const struct inst *, enum job_state, int *);
	int keep_tail; /* the run's last output is kept (the dead list) */
};
extern const struct kind_ops service_kind;  /* run.c */
extern const struct kind_ops periodic_kind; /* periodic.c */
extern const struct kind_ops queue_kind;    /* dispatch.c */

const struct kind_ops *inst_kind_of(const struct job_spec *);
const struct kind_ops *inst_kind(const struct inst *);
int inst_kind_ninsts(const struct job_spec *);
uint64_t inst_kind_stop_time(const struct job_spec *);
/* Replace an instance's reason (NULL: none). */
#define inst_reason(in, ...) xsetf(&(in)->reason, __VA_ARGS__)
void inst_feed(struct inst *, enum life_event);
void inst_feed_event(struct inst *, struct inst_event *);
void inst_exited(struct inst *, int, uint64_t);
void inst_exec_failed(struct inst *, const char *, int);
void inst_exec_said(struct inst *, const char *, int);
void inst_watchdog_trigger(struct inst *);
void inst_watchdog_arm(struct inst *);
void inst_check_groups(void);
void inst_start(struct inst *);
void inst_start_operator(struct inst *);
void inst_arm(struct inst *);
void inst_stop(struct inst *);
void inst_stop_operator(struct inst *);
void inst_signal(struct inst *, int);
void inst_init(struct inst *, struct job *, int);
void inst_clear(struct inst *);

/* run.c */
unsigned int run_spawning(void);
int run_begin(struct inst *, enum life_stage, char **, int *, char **);
void run_stage(
    struct inst *, const struct inst_event *, const struct life_step *);
void run_end(struct inst *, int, uint64_t, const struct life_step *);
const char *run_describe(
    const struct inst *, int, const struct life_step *, char *, size_t);
void run_stdin_close(struct inst *);
int run_memfd(const char *, size_t, char **);
void run_clear(struct inst *);
void run_signal(struct inst *, int);
int run_alive(struct inst *);
struct inst *run_find(pid_t);

/* track.c: cgroups */
void track_init(void);
void track_check_init(void);
unsigned int track_limits_missing(const struct job_spec *, char *, size_t);
unsigned int track_limits_set(const struct job_spec *);
const char *track_limit_name(unsigned int);
const char *track_limit_list(unsigned int);
void track_jobs_check(struct conf_jobs *, struct conf_errors *, int, size_t *);
void track_free(void);
int track_enabled(void);
int track_prepare(struct inst *, char **);
int track_populated(const struct inst *);
int track_members(const struct inst *, pid_t **, size_t *);
struct cgroup_usage;
int track_usage(const struct inst *, struct cgroup_usage *);
uint64_t track_oom_kills(const struct inst *);
void track_signal(struct inst *, int);
void track_release(struct inst *);
int track_hook_cgroup(const char *, struct job *, char **);
void track_hook_end(int);

/* watch.c */
void watch_job_attach(struct job *);
void watch_job_detach(struct job *);
void watch_free(void);

/* poststart.c */
void poststart_run(struct inst *);
void poststart_forget(struct inst *);

/* counters.c: what the metrics count, kept across reloads by job name */
enum counters_run {
	COUNT_RUN_SUCCESS = 0, /* success_exit_codes */
	COUNT_RUN_FAILURE,     /* failed (as on_failure sees it) */
	COUNT_RUN_STOPPED,     /* stopped on purpose */
	COUNT_RUN_N,
};
enum counters_msg {
	COUNT_MSG_DONE = 0, /* a queue message done */
	COUNT_MSG_RETRY,    /* failed, to be tried again */
	COUNT_MSG_DEAD,     /* failed at its last attempt */
	COUNT_MSG_N,
};
struct counters {
	uint64_t runs[COUNT_RUN_N];
	uint64_t msgs[COUNT_MSG_N];
	uint64_t *restarts; /* by instance: of the instances gone */
	uint64_t *skipped;  /* the same, periodic slots skipped */
	int ninsts;
};
const struct counters *counters_of(const char *);
void counters_run(const struct inst *, enum counters_run);
void counters_msg(const struct inst *, enum counters_msg);
void counters_retire(const struct inst *);
uint64_t counters_restarts(const struct inst *);
uint64_t counters_skipped(const struct inst *);
void counters_free_all(void);

/* hook.c */
void hook_failure(struct inst *, const char *, int, int64_t);
void hook_changed(struct inst *, enum job_state);
void hook_vigild(const char *, const char *);
void hook_alert(
    struct inst *, const char *, int, int64_t, unsigned int, int64_t);
void hook_free_all(void);

/* alert.c */
#define ALERT_OK 0
#define ALERT_FAILING 1
#define ALERT_CRASHLOOP 2
void alert_failed(struct inst *, int, int64_t);
void alert_succeeded(struct inst *);
void alert_changed(struct inst *, enum job_state);
void alert_free(struct inst *);
void alert_resume(struct inst *);
int alert_limit_reached(const struct inst *);

/* prober.c */
void prober_sync(struct inst *);
void prober_forget(struct inst *);

/* claim.c */
/* The exclusivity seam: one implementation per backend. */
struct claim_ops {
	const char *name;
	enum claim_status (*acquire)(struct inst *, struct claim_result *);
	void (*renew)(struct inst *, const struct lock_holder *);
	void (*release)(struct inst *);
	void (*failed)(struct inst *); /* the next release: it failed here */
	pid_t (*holder)(struct inst *, int); /* who holds it, or 0 */
	int (*held_elsewhere)(const struct job *);
	/* may a run start on the claim held now? (NULL: yes) */
	int (*trusted)(struct inst *, char **);
	/* before a spawn on the claim: what the child tells (NULL: none) */
	void (*announce)(struct inst *, int, struct spawn_announce *);
};
extern const struct claim_ops claim_local;

enum claim_status claim_take(struct inst *, struct claim_result *);
void claim_result_clear(struct claim_result *);
void claim_record(struct inst *, const struct lock_holder *);
void claim_release(struct inst *);
void claim_failed(struct inst *);
int claim_trusted(struct inst *, char **);
void claim_announce(struct inst *, int, struct spawn_announce *);
int claim_held_elsewhere(const struct job *);
void claim_leftover_term(struct inst *, pid_t);
void claim_leftover_kill(struct inst *, pid_t);
void claim_name_holder(struct inst *, int);

/* ready.c */
void ready_open(void);
void ready_close(void);
const char *ready_notify_path(void);
void ready_session_add(struct inst *);
void ready_session_remove(struct inst *);
struct inst *ready_session_find(pid_t);
void ready_forget(struct inst *);

/* deps.c */
int deps_wait(struct inst *);
void deps_unwait(struct inst *);
void deps_free(void);
void deps_changed(struct inst *, enum job_state);
void deps_shutdown(void);

/* registry.c */
void registry_add(struct job_spec *);
void registry_autostart(struct job *);
void registry_replace(struct job *, struct job_spec *);
int registry_resize(struct job *, struct job_spec *);
void registry_changed(struct inst *, enum job_state);
void registry_start_all(void);
void registry_shutdown(void);
void registry_free_all(void);

/* sdnotify.c */
void sdnotify_init(void);
void sdnotify_free(void);
void sdnotify_status_changed(void);
void sdnotify_ready(void);
void sdnotify_extend_timeout(void);
void sdnotify_stopping(void);

/* signals.c */
void signals_init(void);
void signals_free(void);

/* joblog.c */
void joblog_job_attach(struct job *);
void joblog_job_configure(struct job *);
void joblog_job_detach(struct job *);
int joblog_aux_fds(struct inst *, int[2], char **);
int joblog_child_fds(struct inst *, int[2], char **);
void joblog_child_fds_close(int[2]);
void joblog_inst_drain(struct inst *);
void joblog_inst_release(struct inst *);
size_t joblog_inst_tail(const struct inst *, char *, size_t);
void joblog_mark(struct inst *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
size_t joblog_reopen_all(void);
const char *joblog_job_path(const struct job *, const char **);
int joblog_job_tail(
    const struct job *, size_t, size_t, char **, size_t *, char **);
void joblog_follow(struct job *, struct client *);
void joblog_client_gone(struct client *);
void joblog_free_all(void);

/* periodic.c */
void periodic_init(void);
void periodic_free(void);

/* dispatch.c */
void dispatch_kick(struct job *);
void dispatch_msg_deleted(int64_t);

/* state.c */
/*
 * The state seam: run history, the operator's intent and the queue's
 * operations, one implementation per backend (each member as the state_*
 * function of its name; run_started, run_ended: state_run_begin, _end).
 * state.c calls the backend of the job concerned, the default one for
 * calls without a job.
 */
struct state_ops {
	const char *name;
	void (*open)(void);
	void (*close)(void);
	void (*batch_begin)(void);
	void (*batch_end)(void);
	/* run history */
	void (*run_started)(struct inst *);
	void (*run_ready)(struct inst *);
	void (*run_ended)(struct inst *, int, const char *);
	void (*run_skipped)(struct inst *, int64_t);
	int64_t (*last_start)(const char *);
	int (*history)(const char *, int, int, store_run_cb, void *, char **);
	/* the operator's intent; the alert state (the default backend's) */
	void (*intent)(struct inst *, int, int, long);
	void (*intents_load)(void);
	void (*alert)(const struct inst *);
	void (*alerts_load)(void);
	/* the queue: its handle, the outcomes of its runs */
	struct queue *(*queue)(void);
	void (*queue_failed)(char *);
	void (*queue_done)(const struct inst *, int64_t);
	void (*queue_release)(const struct inst *, int64_t);
	void (*queue_fail)(const struct inst *, int64_t, int, int64_t, int, int,
	    const char *, const char *, size_t);
};
extern const struct state_ops state_sqlite; /* state-sqlite.c */
struct store *state_sqlite_store(void);
const char *state_sqlite_path(void);
void state_sqlite_detach(void);
void state_sqlite_reattach(void);
extern void (*state_sqlite_aside)(const char *);

/* state-watch.c: state.db never lost without a word */
struct state_health {
	uint64_t lost;     /* found deleted, replaced or corrupt */
	uint64_t restored; /* put back from the open database */
	int64_t at;        /* the last event, wall usec; 0: none */
	char *what;        /* what it was, or NULL */
	char *failing;     /* why the last put-back failed, or NULL */
};
void state_watch_start(void);
void state_watch_stop(void);
const struct state_health *state_watch_health(void);

void state_open(void);
void state_close(void);
void state_run_begin(struct inst *);
void state_run_ready(struct inst *);
void state_run_end(struct inst *, int, const char *);
void state_run_skipped(struct inst *, int64_t);
int64_t state_last_start(const char *);
void state_intent(struct inst *, int, int, long);
void state_intents_load(void);
void state_alert(const struct inst *);
void state_alerts_load(void);
int state_history(const char *, int, int, store_run_cb, void *, char **);
struct queue *state_queue(void);
void state_batch_begin(void);
void state_batch_end(void);
void state_queue_failed(char *);
void state_queue_done(const struct inst *, int64_t);
void state_queue_release(const struct inst *, int64_t);
void state_queue_fail(const struct inst *, int64_t, int, int64_t, int, int,
    const char *, const char *, size_t);

/* reload.c */
/*
 * A job file that did not load (status shows it as BROKEN).  If a job of
 * that name runs, it runs the config of before the file broke.
 */
struct broken_job {
	char *name;
	char *reason; /* "FILE:LINE: message": the file's first error */
};

struct reload_list {
	char **names;
	size_t n;
};

struct reload_report {
	struct reload_list added;
	struct reload_list changed;
	struct reload_list removed;
	size_t unchanged;
	struct conf_errors errors;
};

int reload_run(int, struct reload_report *);
void reload_report_clear(struct reload_report *);
void reload_broken_set(const char *, const struct conf_errors *);
const struct broken_job *reload_broken_find(const char *);

/* server.c */
/* Called when a parked client goes away before its reply ended. */
typedef void (*server_gone_fn)(struct client *);
/* Runs a request: flags, argv, and the PROTO_DATA bytes before it. */
typedef void (*server_command_fn)(
    struct client *, uint32_t, int, char **, const uint8_t *, size_t);

/* Where the replies of a sink client go (server_client_attach()). */
struct server_sink {
	void (*write)(void *, enum proto_type, const void *, size_t);
	void (*finish)(void *, int); /* the exit code: the reply ended */
};

int server_open(const char *, int, gid_t, server_command_fn, char **);
void server_close(void);
void server_client_write(
    struct client *, enum proto_type, const void *, size_t);
void server_client_printf(struct client *, enum proto_type, const char *, ...)
    __attribute__((format(printf, 3, 4)));
void server_client_finish(struct client *, int);
uid_t server_client_uid(const struct client *);
int server_client_may_act(const struct client *);
void server_client_hold(struct client *);
void server_client_park(struct client *, server_gone_fn, void *);
void *server_client_parked(const struct client *);
int server_client_may_wait(struct client *);
const char *server_client_who(const struct client *);
struct client *server_client_attach(
    const struct server_sink *, void *, int, uid_t, const char *);
void server_client_detach(struct client *);

/* pgconn.c: a connection to PostgreSQL on the loop */
struct pgconn;
struct pgres;
/* A request's answer: res NULL on error (err says why); sent: when. */
typedef void (*pgconn_done_fn)(
    void *, const struct pgres *, const char *, uint64_t);
struct pgconn_cfg {
	char *conninfo;
	uint64_t connect_timeout;  /* usec, for the connection and set-up */
	uint64_t query_timeout;    /* usec, from the send of a request */
	uint64_t retry_max;        /* the longest delay between connections */
	void (*connected)(void *); /* queue PGQ_SETUP requests, then ready */
	void (*notify)(void *, const char *, const char *); /* channel, text */
	void (*down)(void *, const char *);                 /* why */
	void *arg; /* the callbacks' argument; NULL: the connection */
};
#define PGQ_FRONT 0x1  /* before every request waiting */
#define PGQ_SETUP 0x2  /* may go before the connection is ready */
#define PGQ_SIMPLE 0x4 /* several statements, no parameters */
uint64_t pgconn_now(void);
int pgconn_check(const char *, int *, char **);
struct pgconn *pgconn_new(const char *, const struct pgconn_cfg *);
void pgconn_free(struct pgconn *);
void pgconn_query(struct pgconn *, int, const char *, int, const char *const *,
    pgconn_done_fn, void *);
void pgconn_set_ready(struct pgconn *);
void pgconn_setup_budget(struct pgconn *, uint64_t);
int pgconn_is_ready(const struct pgconn *);
const char *pgconn_why(const struct pgconn *);
size_t pgconn_pending(const struct pgconn *);
void pgconn_drop(struct pgconn *, const char *);
int pgres_ntuples(const struct pgres *);
const char *pgres_value(const struct pgres *, int, int);
long long pgres_int(const struct pgres *, int, int, long long);
int pgres_bool(const struct pgres *, int, int);

/* cluster.c */
int cluster_enabled(void);
int cluster_check(char **);
int cluster_open(char **);
void cluster_close(void);
void cluster_shutdown(void (*)(void));
int cluster_job_check(const struct job_spec *, char **);
void cluster_jobs_check(struct conf_jobs *, struct conf_errors *);
void cluster_jobs_changed(void);
void cluster_env(struct inst *, char **, size_t);
void cluster_inst_free(struct inst *);
void cluster_intent(struct inst *, int, long);
/* cluster-ask.c: the operator's verbs acted on by the holder */
int cluster_elsewhere(const struct inst *);
uint64_t cluster_request(struct inst *, const char *, int, long, int);
int cluster_answer(uint64_t, int *, const char **);
void cluster_request_forget(uint64_t);
int cluster_runs_elsewhere(const struct inst *);
void cluster_wait_watch(void);
void cluster_taken_check(struct inst *);
struct cluster_view {
	const char *node;   /* the node that runs it, or NULL: not known */
	int64_t epoch;      /* its fencing token when it is ours, or 0 */
	int64_t expires_ms; /* trusted (ours) or could last (theirs), or -1 */
};
int cluster_view(const struct inst *, struct cluster_view *);
const char *cluster_reason(const struct inst *, char *, size_t);
void cluster_slot_fired(struct inst *, int64_t);
int cluster_periodic(const struct inst *);
int cluster_standby(const struct inst *);
int cluster_hold_pending(const struct inst *);
extern void (*cluster_waiters)(struct inst *);
int cluster_ask(
    const char *, int, const char *const *, pgconn_done_fn, void *, char **);
const char *cluster_node_name(void);
void cluster_run_end(struct inst *, int, const char *);
extern const struct claim_ops claim_cluster;

/* cluster-queue.c: queue jobs with cluster = true */
typedef void (*cluster_claimed_fn)(
    struct job *, struct queue_msg *, int, uint64_t, int64_t);
int cluster_queue_claim(struct job *, int, cluster_claimed_fn);
void cluster_queue_bind(struct inst *, uint64_t);
void cluster_queue_giveback(struct queue_msg *);
void cluster_queue_shutdown(void (*)(void));
extern const struct state_ops state_cluster;
extern const struct claim_ops claim_cluster_msg;

/* keeper.c: the fence keeper process */
int keeper_start(void (*)(void));
void keeper_stop(void);
void keeper_set(uint64_t, pid_t, uint64_t, int);
void keeper_del(uint64_t);
void keeper_announce(uint64_t, uint64_t, int, struct spawn_announce *);

/* http.c */
int http_open(server_command_fn, char **);
void http_close(void);

/* httpconn.c */
struct httpconn;
struct sockaddr;
typedef int (*httpconn_add_fn)(int, const struct sockaddr *, socklen_t);
int httpconn_open(int, int, httpconn_add_fn, void (*)(void), char **);
struct httpconn *httpconn_adding(void);
void httpconn_request(struct httpconn *, int);
void httpconn_idle(struct httpconn *);
void httpconn_gone(struct httpconn *);
void httpconn_close(void);

/* The dashboard's files, embedded by the build (contrib/embed.sh). */
struct http_file {
	const char *path;
	const char *type;
	const unsigned char *data;
	size_t len;
};
extern const struct http_file http_files[];

/* waiters.c */
int waiters_add(struct client *, struct inst *, enum wait_kind, enum job_state);
int waiters_add_asked(struct client *, struct inst *, uint64_t);
/* A step of a roll: 0, or the handle of a request to another node. */
typedef uint64_t (*waiters_step_fn)(struct client *, struct inst *);
int waiters_roll(struct client *, struct inst **, size_t, waiters_step_fn);
void waiters_report(struct client *, const char *);
int waiters_code(struct client *);
void waiters_timeout(struct client *, uint64_t);
void waiters_notify(struct inst *);
void waiters_cancel(struct inst *);
void waiters_move(struct inst *, struct inst *);

/* cmd.c */
enum cmd_retval {
	CMD_ERROR = -1,
	CMD_OK = 0,
	CMD_WAIT, /* reply later: the client stays connected */
};

/* What a command's operands name; cmd.c resolves them before exec. */
enum cmd_target {
	CMD_TARGET_NONE,      /* words the handler reads itself */
	CMD_TARGET_INSTANCES, /* all, JOB or JOB@N: ctx->insts */
	CMD_TARGET_ONE_JOB,   /* one JOB or JOB@N, not all: ctx->insts */
	CMD_TARGET_QUEUES,    /* queue jobs: ctx->jobs */
	CMD_TARGET_IDS,       /* message ids: ctx->ids */
};
#define CMD_TARGET_DEFAULT_ALL 0x1 /* no operand: every one there is */
#define CMD_TARGET_BROKEN 0x2      /* broken job files: ctx->broken */

/* The type of an option's value, checked by cmd.c before exec. */
enum cmd_opt_type {
	CMD_OPT_STRING,   /* any word */
	CMD_OPT_WORD,     /* a word that is not empty */
	CMD_OPT_INT,      /* an integer from min to max */
	CMD_OPT_DURATION, /* "10s", "1m30s": microseconds */
	CMD_OPT_STATE,    /* a state name: its enum job_state */
};

struct cmd_opt {
	int ch; /* the letter; 0 ends a list */
	enum cmd_opt_type type;
	long long min, max; /* CMD_OPT_INT */
};

struct cmd_ctx {
	struct client *client;
	const struct cmd_entry *entry;
	int argc; /* the operands, options taken out */
	char **argv;
	char **operands; /* owned array behind argv */
	char opts[128];  /* opts['x'] != 0: option -x given */
	char *optarg[128];
	long long optnum[128]; /* the value of a typed option */
	int json;
	int code;            /* exit code for the client, 0 by default */
	const uint8_t *data; /* PROTO_DATA sent before the command, or NULL */
	size_t datalen;
	struct proto_buf out;
	struct proto_buf err;
	struct json jw; /* JSON output, written into out */
	/* The targets, resolved by cmd.c (owned arrays, borrowed items). */
	struct inst **insts;
	size_t ninsts;
	struct job **jobs;
	size_t njobs;
	int64_t *ids;
	size_t nids;
	const struct broken_job **broken;
	size_t nbroken;
};

struct cmd_entry {
	const char *name;
	const char *alias;
	const char *usage;
	const char *optstring;
	const char *longopts; /* "no-wait=W,state=s": long name to letter */
	const struct cmd_opt *typed; /* options with typed values, or NULL */
	int min_args;
	int max_args; /* -1: no limit */
	int flags;
#define CMD_READONLY 0x1 /* allowed for peers without control rights */
	enum cmd_target target;
	int target_flags;
	int target_at; /* the first operand that is a target */
	int target_n;  /* how many are (0: every one from target_at) */
	/* Checks of the words that come before the targets, or NULL. */
	enum cmd_retval (*check)(struct cmd_ctx *);
	const char *help;
	enum cmd_retval (*exec)(struct cmd_ctx *);
};

/* Exit codes of vigilctl, as in interface.md. */
#define CMD_EXIT_OK 0
#define CMD_EXIT_FAILED 1
#define CMD_EXIT_USAGE 2
#define CMD_EXIT_NOT_RUNNING 3
#define CMD_EXIT_NO_JOB 4

void cmd_dispatch(
    struct client *, uint32_t, int, char **, const uint8_t *, size_t);
void cmd_buf_printf(struct proto_buf *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
void cmd_print(struct cmd_ctx *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
void cmd_error(struct cmd_ctx *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
void cmd_print_err(struct cmd_ctx *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
enum cmd_retval cmd_usage_error(struct cmd_ctx *, const char *, const char *);
void cmd_json_end(struct cmd_ctx *);
void cmd_send(struct cmd_ctx *);
void cmd_targets_free(struct cmd_ctx *);
int cmd_targets(struct cmd_ctx *);
/* cmd-cluster.c */
struct cmd_ctx *cmd_later(struct cmd_ctx *);
void cmd_later_end(struct cmd_ctx *);

/* cmd-queue-cluster.c: the rows of the queue verbs; cluster queues */
void cmd_queue_dead_head(struct cmd_ctx *, const char *);
void cmd_queue_dead_print(struct cmd_ctx *, const struct queue_msg *);
void cmd_queue_dead_tail(struct cmd_ctx *, const char *, size_t, size_t);
void cmd_queue_counts_head(struct cmd_ctx *, int, int);
void cmd_queue_counts_print(struct cmd_ctx *, const char *, int,
    const struct queue_counts *, const char *);
void cmd_queue_counts_tail(struct cmd_ctx *);
enum cmd_retval cmd_queue_enqueued(
    struct cmd_ctx *, const char *, int, int64_t, const char *);
enum cmd_retval cmd_cq_enqueue(
    struct cmd_ctx *, struct job *, const void *, size_t, long long, long long);
enum cmd_retval cmd_cq_counts(struct cmd_ctx *, struct queue *);
enum cmd_retval cmd_cq_dead(struct cmd_ctx *, struct job *, long);
enum cmd_retval cmd_cq_ids(struct cmd_ctx *, int, const int64_t *, size_t);
enum cmd_retval cmd_cq_purge(struct cmd_ctx *, struct job *, int);
enum cmd_retval cmd_cq_kick(struct cmd_ctx *, struct job *);
long long cmd_opt_num(const struct cmd_ctx *, int, long long);
char *cmd_format_time(int64_t, char *, size_t);
char *cmd_format_exit(int, int, char *, size_t);
void cmd_print_table(FILE *);
int cmd_is_instance(const char *);
extern const struct cmd_entry *const cmd_table[];
int cmd_is_readonly(const char *);

#endif
