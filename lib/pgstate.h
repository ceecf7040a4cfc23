/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The SQL of cluster mode: the schema vigild creates and migrates itself,
 * and every statement it sends, each with its parameters ($n) and the
 * columns of its answer.  Like store.c and queue-sqlite.c for SQLite,
 * the only file with SQL for PostgreSQL.  Arrays go as text ("{1,2}",
 * pg_array_*), every other parameter as text too.
 *
 * search_path: the sessions pin it (pg_session_sql) and so does every
 * function.  What goes on the work connection, which may go through a
 * pooler where no session setting holds, is either a call of a vigil
 * function or uses only operators and functions that pg_catalog has for
 * exactly those argument types (pg_catalog is searched first, so an
 * object of the same name planted elsewhere is never chosen).
 */

#ifndef VIGIL_PGSTATE_H
#define VIGIL_PGSTATE_H

#include <stddef.h>
#include <stdint.h>

/* The version the schema below brings a database to. */
#define PG_SCHEMA_VERSION 5
/*
 * Fencing tokens: the runs of one holding take epoch + 0, 1, ...; a new
 * epoch is at least PG_EPOCH_STRIDE above the last and at least the
 * database's clock in seconds times PG_EPOCH_PER_SEC (below 2^53 until
 * the year 2242: JSON readers keep every digit).
 */
#define PG_EPOCH_STRIDE_S "1024"
#define PG_EPOCH_PER_SEC_S "1048576"
/* usec the first set-up of a node (the schema, after the other nodes'
 * under the same advisory lock) may take; its statements 10 s each. */
#define PG_SCHEMA_TIMEOUT (30ULL * 1000 * 1000)

/*
 * Advisory lock keys: 'VIGL', then 0 for the migrations, 1 for the
 * rescue of messages; 'VIGM', then a job id for its claims under a
 * cluster-wide cap.
 */
#define PG_LOCK_NS "1447645004"
#define PG_LOCK_JOB_NS "1447645005"

/*
 * Message ids of cluster queues start here, so that they never meet the
 * ids of state.db's queue (vigilctl retry and delete tell them apart).
 */
#define PG_MSG_ID_MIN "1000000000000"
#define PG_MSG_ID_FIRST 1000000000000LL

extern const char pg_schema[];
extern const char pg_node_register[];
extern const char pg_node_drain[];
extern const char pg_failover_guard[];
extern const char pg_job_seed[];
extern const char pg_node_jobs[];
extern const char pg_lease_acquire[];
extern const char pg_lease_renew_all[];
extern const char pg_job_gc[];
extern const char pg_lease_peek[];
extern const char pg_lease_state[];
extern const char pg_lease_release[];
extern const char pg_lease_fail[];
extern const char pg_lease_hold[];
extern const char pg_lease_held[];
extern const char pg_request_ask[];
extern const char pg_request_take[];
extern const char pg_request_done[];
extern const char pg_request_answers[];
extern const char pg_periodic_fire[];
extern const char pg_periodic_skipped[];
extern const char pg_cluster_nodes[];
extern const char pg_cluster_leases[];
extern const char pg_run_begin[];
extern const char pg_run_end[];
extern const char pg_run_history[];
extern const char pg_status_view[];
extern const char pg_listen[];
extern const char pg_q_claim[];
extern const char pg_q_outcomes[];
extern const char pg_q_rescue[];
extern const char pg_q_enqueue[];
extern const char pg_q_counts[];
extern const char pg_q_dead[];
extern const char pg_q_retry[];
extern const char pg_q_delete[];
extern const char pg_q_purge[];
extern const char pg_q_kick[];

char *pg_session_sql(unsigned long long);
char *pg_array_int(const int64_t *, size_t);
char *pg_array_text(const char *const *, size_t);
char *pg_bytea(const void *, size_t);
void *pg_bytea_decode(const char *, size_t *);

#endif
