/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Cluster mode's public face: a PostgreSQL connection on the loop
 * (pgconn.c), the leases (cluster.c, cluster-claim.c), the operator's
 * verbs acted on by the holder (cluster-ask.c), cluster queues
 * (cluster-queue.c) and the fence keeper (keeper.c).  Its inside is
 * cluster-int.h.
 */

#ifndef VIGILD_CLUSTER_H
#define VIGILD_CLUSTER_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

struct claim_ops;
struct conf_errors;
struct conf_jobs;
struct inst;
struct job;
struct job_spec;
struct queue_msg;
struct spawn_announce;
struct state_ops;

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
void cluster_intent(struct inst *, int, long);
/* cluster-ask.c: the operator's verbs acted on by the holder */
int cluster_elsewhere(const struct inst *);
uint64_t cluster_request(struct inst *, const char *, int, long, int);
int cluster_answer(uint64_t, int *, const char **);
void cluster_request_forget(uint64_t);
int cluster_runs_elsewhere(const struct inst *);
void cluster_wait_watch(void);
extern const struct inst_observer cluster_taken_observer; /* cluster-ask.c */
extern const struct inst_observer cluster_lease_observer; /* cluster-state.c */
struct cluster_view {
	const char *node;   /* the node that runs it, or NULL: not known */
	int64_t epoch;      /* its fencing token when it is ours, or 0 */
	int64_t expires_ms; /* trusted (ours) or could last (theirs), or -1 */
};
int cluster_view(const struct inst *, struct cluster_view *);
const char *cluster_reason(const struct inst *, char *, size_t);
void cluster_slot_fired(struct inst *, int64_t); /* cluster-claim.c */
int cluster_periodic(const struct inst *);
int cluster_standby(const struct inst *);
int cluster_hold_pending(const struct inst *);
extern void (*cluster_waiters)(struct inst *);
int cluster_ask(
    const char *, int, const char *const *, pgconn_done_fn, void *, char **);
const char *cluster_node_name(void);
void cluster_run_end(struct inst *, int, const char *);
extern const struct claim_ops claim_cluster; /* cluster-claim.c */

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

#endif
