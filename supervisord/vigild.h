/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Daemon-private structures of vigild: jobs and their instances at run
 * time, control clients, the command table, and the functions the
 * supervise/server/cmd files offer each other.
 */

#ifndef VIGILD_H
#define VIGILD_H

#include <sys/types.h>

#include <bsd/sys/queue.h>
#include <bsd/sys/tree.h>
#include <stdint.h>
#include <stdio.h>

#include <systemd/sd-event.h>

#include "conf.h"
#include "job.h"
#include "lock.h"
#include "proto.h"
#include "queue.h"
#include "store.h"

struct client;
struct job;
struct logfile;
struct outpipe;

/* A wait of a client for an instance to reach a state. */
enum wait_kind {
	WAIT_START, /* RUNNING is success; EXITED/BACKOFF/FATAL failure */
	WAIT_STOP,  /* any inactive state */
	WAIT_STATE, /* exactly target */
};

struct waiter {
	struct client *client;
	struct inst *inst;
	enum wait_kind kind;
	enum job_state target;
	TAILQ_ENTRY(waiter) ientry; /* on the instance */
	TAILQ_ENTRY(waiter) centry; /* on the client */
};
TAILQ_HEAD(waiter_list, waiter);

/* One running copy of a job (instances = N gives N of these). */
struct inst {
	struct job *job;
	int index;
	char *label; /* "name", or "name@index" when instances > 1 */
	enum job_state state;
	uint64_t since; /* monotonic usec of the last state change */
	char *reason;   /* why it is in this state, or NULL */

	pid_t pid;          /* leader, 0 when none */
	uint64_t starttime; /* its /proc start time if known at spawn, or 0 */
	uint64_t started;   /* monotonic usec at fork */
	char run_id[17];
	int lock_fd;   /* its lock, held while active, else -1 */
	int record_fd; /* its holder record (never a job's), or -1 */
	int stdin_fd;  /* stdin = "pipe": the write end while a run goes */
	int exec_failed;

	int want;             /* the operator or autostart wants it up */
	int held;             /* stopped by the operator: stays down */
	int by_hand;          /* started by the operator: stays up */
	long intent_uid;      /* who asked for held/by_hand */
	int64_t intent_at;    /* when, wall clock usec */
	int64_t run_row;      /* state.db row of the current run, or 0 */
	int reload_start;     /* start after a reload replaced the job */
	int stop_requested;   /* the current stop is on purpose */
	int start_after_stop; /* a start came during a stop */
	int killed;           /* SIGKILL already sent */
	int group_wait;       /* leader gone, waiting for its group */
	pid_t pgid;
	struct job_decision pending; /* applied once the group is gone */

	unsigned int failures; /* consecutive failed starts */
	unsigned int restarts;
	int has_exit;
	int last_status;     /* wait status of the last run */
	uint64_t delay;      /* current backoff delay */
	uint64_t next_start; /* monotonic usec, in BACKOFF */

	struct lock_holder leftover; /* BLOCKED: the group being reclaimed */
	uint64_t recheck;            /* BLOCKED: next poll interval */
	uint64_t kill_at;            /* BLOCKED: when to send SIGKILL */
	unsigned int quick_retries;  /* lock looks while children exec */

	sd_event_source *timer;
	sd_event_source *stable; /* wakes start waiters at min_uptime */

	/* kind = "periodic" */
	sd_event_source *slot;     /* the next slot */
	sd_event_source *deadline; /* the run's timeout */
	uint64_t slot_mono;        /* every: monotonic usec of the next slot */
	int64_t slot_wall;         /* wall clock usec of the next slot */
	int timed_out;             /* the run outlived timeout */
	unsigned int skipped;      /* slots skipped: a run was still going */

	/* ready = "notify": what the job said on NOTIFY_SOCKET. */
	int ready_seen;            /* READY=1 came for this run */
	int ready_timed_out;       /* no READY=1 within ready_timeout */
	int watchdog_fired;        /* no WATCHDOG=1 within watchdog */
	char *status;              /* STATUS=, or NULL */
	int notify_errno;          /* ERRNO=, or 0 */
	pid_t mainpid;             /* MAINPID=, or 0 */
	sd_event_source *watchdog; /* fires when WATCHDOG=1 is late */
	RB_ENTRY(inst) sid_entry;  /* by session (pgid), while it has one */
	int dep_wait;              /* waiting for its dependencies */
	TAILQ_ENTRY(inst) dep_entry;
	sd_event_source *report;
	struct outpipe *out; /* the pipe of the current run, or NULL */

	/* kind = "queue": each instance is a slot working one message. */
	struct queue_msg msg; /* the message of the current run; id 0: none */
	int drain_killed;     /* a drain outlived stop_timeout: signalled */
	int msg_deleted;      /* the message was deleted while it ran */
	char *tail;           /* the ended run's last output, or NULL */
	size_t tail_len;
	struct waiter_list waiters;
	unsigned int resolve_mark; /* cmd_resolve(): taken once per request */
	RB_ENTRY(inst) pid_entry;
	TAILQ_ENTRY(inst) gw_entry; /* on the group-wait list */
};

struct job {
	char *name;
	struct job_spec *spec;
	struct job_spec *next_spec; /* reload: replaces spec once all stop */
	int retiring;               /* reload: removed once all stop */
	int nactive;                /* instances in an active state */
	int dependents;             /* shutdown: active jobs needing this */
	sd_event_source *settle;    /* deferred replace or removal */
	struct logfile *log;        /* LOG_DIR/NAME.log, its followers */
	struct inst *insts;
	int ninsts;
	/* kind = "queue" */
	sd_event_source *kick; /* deferred dispatch */
	sd_event_source *due;  /* wakes dispatch at the next due message */
	int recovered;         /* messages left running were recovered */
	RB_ENTRY(job) entry;
};
RB_HEAD(job_tree, job);
RB_PROTOTYPE(job_tree, job, entry, job_cmp)

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
	sd_event_source *status_timer;  /* rate limit of STATUS= */
	int notify_fd;                  /* RUNTIME/notify.sock, or -1 */
	sd_event_source *notify_src;
	char *notify_path;
	uint64_t notify_garbage; /* datagrams ignored */
	int shutting_down;
	int started; /* the jobs were started: catch_up is over */
	int exit_code;
	int lock_fd;
	int listen_fd;
	uint64_t next_client_id;
	sd_event_source *listen_src;
	TAILQ_HEAD(, client) clients;
};

extern struct vigild vigild;

/* supervise.c */
void supervise_init(void);
void supervise_add_job(struct job_spec *);
void supervise_job_start(struct job *);
void supervise_job_replace(struct job *, struct job_spec *);
struct job *supervise_find_job(const char *);
void supervise_start_all(void);
void supervise_shutdown(void);
void supervise_inst_start(struct inst *);
void supervise_inst_launch(struct inst *);
void supervise_slot_run(struct inst *);
void supervise_inst_set_state(struct inst *, enum job_state);
void supervise_inst_terminate(struct inst *);
void inst_reason_set(struct inst *, const char *);
void supervise_inst_stop(struct inst *);
void supervise_inst_signal(struct inst *, int);
int supervise_inst_is_stable(struct inst *);
void supervise_free_all(void);
void supervise_status_changed(void);
void supervise_notify_open(void);
uint64_t supervise_now(void);

/* output.c */
void output_job_attach(struct job *);
void output_job_configure(struct job *);
void output_job_detach(struct job *);
int output_child_fds(struct inst *, int[2], char **);
void output_child_fds_close(int[2]);
void output_inst_drain(struct inst *);
void output_inst_release(struct inst *);
size_t output_inst_tail(const struct inst *, char *, size_t);
void output_mark(struct inst *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
size_t output_reopen_all(void);
const char *output_job_path(const struct job *, const char **);
int output_job_tail(
    const struct job *, size_t, size_t, char **, size_t *, char **);
void output_follow(struct job *, struct client *);
void output_client_gone(struct client *);
void output_free_all(void);

/* periodic.c */
void periodic_init(void);
void periodic_free(void);
void periodic_arm(struct inst *);
void periodic_disarm(struct inst *);
void periodic_start(struct inst *);
void periodic_run_started(struct inst *);
char *periodic_format_time(int64_t, char *, size_t);

/* dispatch.c */
void dispatch_slot_start(struct inst *);
void dispatch_slot_ready(struct inst *);
void dispatch_kick(struct job *);
void dispatch_run_end(struct inst *, int, int);
void dispatch_slot_drop(struct inst *);
void dispatch_msg_deleted(int64_t);
void dispatch_job_free(struct job *);

/* state.c */
void state_open(void);
void state_close(void);
void state_run_begin(struct inst *);
void state_run_ready(struct inst *);
void state_run_end(struct inst *, int, const char *);
void state_run_skipped(struct inst *, int64_t);
int64_t state_last_start(const char *);
void state_intent(struct inst *, int, int, long);
void state_intents_load(void);
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
int server_open(const char *, int, gid_t, char **);
void server_close(void);
void server_client_write(
    struct client *, enum proto_type, const void *, size_t);
void server_client_finish(struct client *, int);
uid_t server_client_uid(const struct client *);
int server_client_in_group(const struct client *, gid_t);
int server_waiter_add(
    struct client *, struct inst *, enum wait_kind, enum job_state);
void server_client_report(struct client *, const char *);
int server_client_wait_code(const struct client *);
void server_client_hold(struct client *);
void server_client_timeout(struct client *, uint64_t);
int server_client_may_wait(struct client *);
void server_waiters_notify(struct inst *);
void server_waiters_cancel(struct inst *);
void server_waiters_move(struct inst *, struct inst *);

/* cmd.c */
enum cmd_retval {
	CMD_ERROR = -1,
	CMD_OK = 0,
	CMD_WAIT, /* reply later: the client stays connected */
};

struct cmd_ctx {
	struct client *client;
	const struct cmd_entry *entry;
	int argc; /* the operands, options taken out */
	char **argv;
	char **operands; /* owned array behind argv */
	char opts[128];  /* opts['x'] != 0: option -x given */
	char *optarg[128];
	int json;
	int code;            /* exit code for the client, 0 by default */
	const uint8_t *data; /* PROTO_DATA sent before the command, or NULL */
	size_t datalen;
	struct proto_buf out;
	struct proto_buf err;
};

struct cmd_entry {
	const char *name;
	const char *alias;
	const char *usage;
	const char *optstring;
	const char *longopts; /* "no-wait=W,state=s": long name to letter */
	int min_args;
	int max_args; /* -1: no limit */
	int flags;
#define CMD_READONLY 0x1 /* allowed for peers without control rights */
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
void cmd_print(struct cmd_ctx *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
void cmd_error(struct cmd_ctx *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
void cmd_printf_client(struct client *, enum proto_type, const char *, ...)
    __attribute__((format(printf, 3, 4)));
void cmd_print_json_string(struct cmd_ctx *, const char *);
int cmd_peer_may_act(struct client *);
char *cmd_format_time(int64_t, char *, size_t);
char *cmd_format_exit(int, int, char *, size_t);
void cmd_print_table(FILE *);
int cmd_resolve(struct cmd_ctx *, int, char **, struct inst ***, size_t *);
int cmd_is_instance(const char *);
extern const struct cmd_entry *const cmd_table[];

#endif
