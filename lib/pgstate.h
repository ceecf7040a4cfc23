/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The SQL of cluster mode: the schema vigild creates and migrates itself,
 * and every statement it sends, each with its parameters ($n) and the
 * columns of its answer.  Like store.c and queue-sqlite.c for SQLite,
 * the only file with SQL for PostgreSQL.  Arrays go as text ("{1,2}",
 * pg_array_*), every other parameter as text too.
 */

#ifndef VIGIL_PGSTATE_H
#define VIGIL_PGSTATE_H

#include <stddef.h>
#include <stdint.h>

/* The version the schema below brings a database to. */
#define PG_SCHEMA_VERSION 1

/* Advisory lock keys: 'VIGL', then 0 for the migrations. */
#define PG_LOCK_NS "1447645004"

extern const char pg_schema[];
extern const char pg_node_register[];
extern const char pg_failover_guard[];
extern const char pg_job_seed[];
extern const char pg_node_jobs[];
extern const char pg_lease_acquire[];
extern const char pg_lease_renew_all[];
extern const char pg_lease_state[];
extern const char pg_lease_release[];
extern const char pg_lease_hold[];
extern const char pg_periodic_fire[];
extern const char pg_periodic_skipped[];
extern const char pg_cluster_nodes[];
extern const char pg_cluster_leases[];
extern const char pg_run_begin[];
extern const char pg_run_end[];
extern const char pg_listen[];

char *pg_session_sql(unsigned long long);
char *pg_array_int(const int64_t *, size_t);
char *pg_array_text(const char *const *, size_t);

#endif
