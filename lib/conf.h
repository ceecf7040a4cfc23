/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Configuration: vigil.conf (struct conf) and one job per file in jobs.d
 * (struct job_spec), read with libconfuse and validated.  Every error is a
 * string "FILE:LINE: message" (LINE omitted only when libconfuse has none).
 * A spec is immutable once loaded; reload compares specs with
 * job_spec_equal().
 */

#ifndef VIGIL_CONF_H
#define VIGIL_CONF_H

#include <sys/types.h>
#include <sys/resource.h>

#include <stddef.h>
#include <stdint.h>

#include "probe.h"
#include "schedule.h"

#define CONF_NAME_MAX 64

enum conf_kind {
	CONF_KIND_SERVICE = 0,
	CONF_KIND_PERIODIC,
	CONF_KIND_QUEUE,
};

enum conf_restart {
	CONF_RESTART_ALWAYS = 0,
	CONF_RESTART_ON_FAILURE,
	CONF_RESTART_NEVER,
};

enum conf_ready {
	CONF_READY_EXEC = 0,
	CONF_READY_NOTIFY,
	CONF_READY_PROBE, /* ready_probe answers */
};

/* What a job's stdin is (option stdin). */
enum conf_stdin {
	CONF_STDIN_NULL = 0, /* /dev/null */
	CONF_STDIN_PIPE,     /* a pipe whose write end vigild holds */
};

enum conf_output {
	CONF_OUTPUT_FILE = 0,
	CONF_OUTPUT_JOURNAL,
	CONF_OUTPUT_NULL,
	CONF_OUTPUT_INHERIT,
};

/* Resource limits: the limit_nofile ... limit_memlock options, in order. */
enum conf_limit {
	CONF_LIMIT_NOFILE = 0,
	CONF_LIMIT_CORE,
	CONF_LIMIT_NPROC,
	CONF_LIMIT_AS,
	CONF_LIMIT_DATA,
	CONF_LIMIT_STACK,
	CONF_LIMIT_FSIZE,
	CONF_LIMIT_CPU,
	CONF_LIMIT_MEMLOCK,
	CONF_LIMIT_COUNT,
};

struct conf_rlimit {
	int set;          /* 0: inherit vigild's */
	int resource;     /* RLIMIT_* */
	struct rlimit rl; /* RLIM_INFINITY for "infinity" */
};

/* Error list: each entry is an owned "FILE:LINE: message" string. */
struct conf_errors {
	char **msgs;
	size_t n;
};

/* One job file, parsed and validated.  All strings are owned. */
struct job_spec {
	char *name; /* file name without ".conf" */
	char *path; /* the job file */

	char **argv; /* NULL-terminated, argv[0] non-empty */
	size_t argc;
	enum conf_kind kind;
	int instances; /* >= 1 */
	int autostart;
	enum conf_restart restart;
	uint8_t success[32]; /* bitmap of exit codes 0..255 */
	uint64_t min_uptime; /* durations in microseconds */
	uint64_t restart_delay;
	uint64_t restart_delay_max;
	int max_restarts; /* 0: never give up */
	enum conf_ready ready;
	struct probe_spec ready_probe; /* ready = "tcp:..." and the like */
	uint64_t ready_timeout;
	struct probe_spec health; /* PROBE_NONE: no health checks */
	uint64_t health_interval;
	int health_failures;    /* in a row, to restart it */
	char **pre_argv;        /* exec_start_pre, or NULL */
	char **start_post_argv; /* exec_start_post, or NULL */
	char **stop_post_argv;  /* exec_stop_post, or NULL */
	char **failure_argv;    /* on_failure, or NULL */
	uint64_t hook_timeout;  /* on_failure's bound, default 30s */
	char **watch;           /* paths whose changes restart it, or NULL */
	size_t nwatch;
	uint64_t watch_delay; /* the quiet after a change, then the restart */
	int forking;          /* type = "forking": the command daemonizes */
	char *pid_file;       /* forking: where the main pid is, or NULL */
	char **depends;       /* job names */
	size_t ndepends;

	int stop_signal;
	uint64_t stop_timeout;
	int kill_group;
	int pdeath_signal; /* defaults to stop_signal */

	char *user; /* NULL: vigild's */
	char *group;
	int has_uid; /* uid/gid resolved from user/group at load */
	uid_t uid;
	int has_gid;
	gid_t gid;
	char *directory;    /* default "/" */
	char **environment; /* "KEY=value" */
	size_t nenvironment;
	char *env_file; /* NULL: none */
	int umask;      /* -1: inherit */
	int has_nice;
	int nice;
	struct conf_rlimit limits[CONF_LIMIT_COUNT];

	enum conf_stdin input; /* option stdin */
	enum conf_output out;
	enum conf_output err;
	uint64_t log_max_size; /* bytes */
	int log_keep;
	int log_timestamps;
	uint64_t watchdog; /* 0: none */
	int cluster;       /* one copy across every vigild (cluster mode) */
	int cluster_handover_after; /* service: failed starts in a row on
	                               the holder before the lease moves */
	char **cluster_nodes;       /* globs over node_name: who may run it, or
	                         NULL: every node */

	/* periodic */
	uint64_t every;       /* 0: not set */
	char *schedule;       /* NULL: not set */
	struct schedule cron; /* schedule, parsed */
	int catch_up;
	uint64_t random_delay;
	uint64_t timeout; /* periodic/queue run timeout, 0: none */

	/* queue */
	int concurrency;         /* runs at once on this node */
	int cluster_concurrency; /* cluster = true: across every node, 0: any */
	int max_attempts;
	uint64_t retry_delay;
	uint64_t retry_delay_max;
	uint64_t drain_timeout; /* after a stop; defaults to stop_timeout */
	/* CONF_LIMITS_*: what a limit that cannot be enforced does; -1:
	 * vigil.conf's limits. */
	int limits_policy;
	uint64_t alert_repeat; /* a failing instance's reminder, at most */
	int start_limit_burst; /* start_limit N: give up, 0: never */
	uint64_t start_limit_interval; /* ... at N failed starts in this */
	/* cgroup limits (0: not set), applied where the controller is on. */
	struct conf_cglimits {
		uint64_t memory_max;  /* bytes */
		uint64_t memory_high; /* bytes */
		int tasks_max;
		int cpu_weight; /* 1..10000 */
		int cpu_max;    /* per cent of one CPU */
		int io_weight;  /* 1..10000 */
	} cg;
};

/* What vigild does with its cluster jobs once it cannot renew leases. */
enum conf_db_loss {
	CONF_DB_LOSS_KILL = 0, /* stop them before another node may start */
	CONF_DB_LOSS_KEEP,     /* let them run */
};

/*
 * The cluster section of vigil.conf: cluster mode, in which each instance
 * of a job with cluster = true holds a lease in PostgreSQL so that at most
 * one copy runs across every vigild.  All zero when the section is absent.
 * Durations are in microseconds.
 */
struct conf_cluster {
	int enabled;         /* the section is present */
	char *conninfo;      /* libpq conninfo string (or URI), not empty */
	char *work_conninfo; /* queue work and reads; NULL: conninfo */
	char *node_name;     /* never NULL when enabled (default: host name) */
	uint64_t lease_ttl;  /* default 30s */
	uint64_t renew_interval;  /* default 5s */
	uint64_t query_timeout;   /* default renew_interval */
	uint64_t fence_margin;    /* default 2s */
	uint64_t connect_timeout; /* default renew_interval */
	uint64_t forget_after;    /* a job no live node has: default 1h */
	int on_db_loss;           /* CONF_DB_LOSS_KILL (default) or _KEEP */
	int line;                 /* the line of the section, for messages */
	int conninfo_line;        /* the lines of these options (else line) */
	int work_conninfo_line;
};

/* vigil.conf.  All strings are owned. */
struct conf {
	char *path; /* NULL when no file was read */
	char *jobs_dir;
	char *runtime_dir;
	char *state_dir;
	char *log_dir;
	char *log_level;    /* NULL: not set */
	char *socket_group; /* NULL: none */
	int has_socket_gid;
	gid_t socket_gid;
	int socket_mode;   /* default 0600, 0660 with socket_group */
	int history_keep;  /* default 1000 */
	int cgroup;        /* CONF_CGROUP_AUTO (default) or _OFF */
	int limits_policy; /* CONF_LIMITS_BEST_EFFORT (default) or _REQUIRE */
	char **event_argv; /* on_event, or NULL */
	uint64_t hook_timeout; /* on_event's bound, default 30s */
	char *http_listen;     /* as written, checked; NULL: no HTTP server */
	char *http_token_file; /* NULL: none */
	char **http_allowed_hosts; /* NULL-terminated, or NULL: none */
	struct conf_cluster cluster;
};

enum conf_cgroup {
	CONF_CGROUP_AUTO = 0, /* one cgroup per instance where possible */
	CONF_CGROUP_OFF,      /* process groups only */
};

/* A cgroup limit whose controller is not there: */
enum conf_limits {
	CONF_LIMITS_BEST_EFFORT = 0, /* the job runs, and that is said */
	CONF_LIMITS_REQUIRE,         /* the job does not run: BROKEN */
};

/* A loaded jobs.d: the specs that are valid, sorted by name. */
struct conf_jobs {
	struct job_spec **specs;
	size_t n;
};

int conf_name_is_valid(const char *);
int conf_file_is_job(const char *);

char *conf_default_path(void);
struct conf *conf_load(const char *, int, struct conf_errors *);
void conf_free(struct conf *);

struct job_spec *job_spec_load(
    const char *, const char *, struct conf_errors *);
struct job_spec *job_spec_new(const char *);
void job_spec_free(struct job_spec *);
int job_spec_equal(const struct job_spec *, const struct job_spec *);
int job_spec_equal_but_instances(
    const struct job_spec *, const struct job_spec *);
int job_spec_is_success(const struct job_spec *, int);

int conf_jobs_load(const char *, struct conf_jobs *, struct conf_errors *);
void conf_jobs_clear(struct conf_jobs *);
struct job_spec *conf_jobs_find(const struct conf_jobs *, const char *);

void conf_errors_init(struct conf_errors *);
void conf_errors_add(struct conf_errors *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
void conf_errors_clear(struct conf_errors *);

#endif
