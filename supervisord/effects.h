/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The modules that carry an instance's lifecycle out, each with its own
 * part: the runs (run.c), cgroups (track.c), watched paths, exec_start_post,
 * the counters, hooks and alerts, probes, readiness, dependencies, the
 * job logs, periodic slots and the queue's dispatch.
 */

#ifndef VIGILD_EFFECTS_H
#define VIGILD_EFFECTS_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include "job.h"
#include "life.h"

struct client;
struct conf_errors;
struct conf_jobs;
struct inst;
struct inst_event;
struct job;
struct job_spec;

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
extern const struct inst_observer counters_observer;
uint64_t counters_restarts(const struct inst *);
uint64_t counters_skipped(const struct inst *);
void counters_free_all(void);

/* hook.c */
void hook_failure(struct inst *, const char *, int, int64_t);
extern const struct inst_observer hook_observer;
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
extern const struct inst_observer alert_observer;
void alert_resume(struct inst *);
int alert_limit_reached(const struct inst *);

/* prober.c */
void prober_sync(struct inst *);
void prober_forget(struct inst *);

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
extern const struct inst_observer deps_observer;
void deps_shutdown(void);

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

#endif
