/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Cluster mode absent: its face when vigild is built without libpq (./configure
 * --without-postgresql, or no libpq-dev): vigil.conf refuses a cluster
 * section and a job's `cluster = true` (cluster_job_check), so every
 * instance is local, nothing is ever sent to a database and no answer
 * comes.  The functions the rest of vigild calls, each saying so.
 */

#include "config.h"

#ifndef HAVE_LIBPQ

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cluster.h"
#include "conf.h"
#include "inst.h"
#include "jobs-view.h"
#include "queue.h"
#include "state.h"
#include "xmalloc.h"

/* ---- pgconn.c ---- */

/* Built without libpq: no answer ever comes (no query is sent). */
int
pgres_ntuples(const struct pgres *r)
{
	(void)r;
	return (0);
}

const char *
pgres_value(const struct pgres *r, int row, int col)
{
	(void)r;
	(void)row;
	(void)col;
	return (NULL);
}

int
pgres_bool(const struct pgres *r, int row, int col)
{
	(void)r;
	(void)row;
	(void)col;
	return (0);
}

long long
pgres_int(const struct pgres *r, int row, int col, long long def)
{
	(void)r;
	(void)row;
	(void)col;
	return (def);
}

/* ---- cluster-state.c ---- */

/* Built without libpq: vigil.conf refuses a cluster section. */
/* Built without libpq: vigil.conf refuses a cluster section. */

int
cluster_enabled(void)
{
	return (0);
}

int
cluster_job_check(const struct job_spec *spec, char **cause)
{
	if (!spec->cluster)
		return (0);
	*cause = xstrdup("cluster = true, but this vigild was built without "
	                 "PostgreSQL support (./configure --with-postgresql)");
	return (-1);
}

void
cluster_env(struct inst *in, char **env, size_t n)
{
	(void)in;
	(void)env;
	(void)n;
}

void
cluster_intent(struct inst *in, int held, long uid)
{
	(void)in;
	(void)held;
	(void)uid;
}

int
cluster_view(const struct inst *in, struct cluster_view *v)
{
	(void)in;
	memset(v, 0, sizeof(*v));
	return (-1);
}

void
cluster_run_end(struct inst *in, int status, const char *what)
{
	(void)in;
	(void)status;
	(void)what;
}

int
cluster_ask(const char *sql, int n, const char *const *p, pgconn_done_fn done,
    void *arg, char **cause)
{
	(void)sql;
	(void)n;
	(void)p;
	(void)done;
	(void)arg;
	*cause = xstrdup("this vigild was built without PostgreSQL support");
	return (-1);
}

const char *
cluster_node_name(void)
{
	return (NULL);
}

const char *
cluster_reason(const struct inst *in, char *buf, size_t len)
{
	(void)buf;
	(void)len;
	return (inst_why(in));
}

int
cluster_periodic(const struct inst *in)
{
	(void)in;
	return (0);
}

int
cluster_standby(const struct inst *in)
{
	(void)in;
	return (0);
}

int
cluster_hold_pending(const struct inst *in)
{
	(void)in;
	return (0);
}

/* ---- cluster.c ---- */

/* Built without libpq: vigil.conf refuses a cluster section. */
void
cluster_shutdown(void (*done)(void))
{
	done();
}

/* ---- cluster-claim.c ---- */

void
cluster_slot_fired(struct inst *in, int64_t slot)
{
	(void)in;
	(void)slot;
}

const struct claim_ops claim_cluster = { .name = "cluster" };

/* ---- cluster-conn.c ---- */

/* Built without libpq: vigil.conf refuses a cluster section. */
int
cluster_check(char **cause)
{
	(void)cause;
	return (0);
}

int
cluster_open(char **cause)
{
	(void)cause;
	return (0);
}

void
cluster_close(void)
{
}

void
cluster_jobs_changed(void)
{
}

/* ---- cluster-ask.c ---- */

int
cluster_runs_elsewhere(const struct inst *in)
{
	(void)in;
	return (0);
}

void
cluster_wait_watch(void)
{
}

int
cluster_elsewhere(const struct inst *in)
{
	(void)in;
	return (0);
}

uint64_t
cluster_request(
    struct inst *in, const char *verb, int sig, long uid, int waited)
{
	(void)in;
	(void)verb;
	(void)sig;
	(void)uid;
	(void)waited;
	return (0);
}

int
cluster_answer(uint64_t token, int *ok, const char **reply)
{
	(void)token;
	*ok = 0;
	*reply = "cluster mode is not built in";
	return (1);
}

void
cluster_request_forget(uint64_t token)
{
	(void)token;
}

/* ---- cluster-queue.c ---- */

/* Built without libpq: vigil.conf refuses a cluster section. */
int
cluster_queue_claim(struct job *j, int nfree, cluster_claimed_fn got)
{
	(void)j;
	(void)nfree;
	(void)got;
	return (-1);
}

void
cluster_queue_bind(struct inst *in, uint64_t sent)
{
	(void)in;
	(void)sent;
}

void
cluster_queue_giveback(struct queue_msg *m)
{
	queue_msg_clear(m);
}

void
cluster_queue_shutdown(void (*done)(void))
{
	cluster_shutdown(done);
}

const struct state_ops state_cluster = { .name = "cluster" };
const struct claim_ops claim_cluster_msg = { .name = "cluster-queue" };

const struct inst_observer cluster_taken_observer = { .changed = NULL };
const struct inst_observer cluster_lease_observer = { .gone = NULL };

#endif /* !HAVE_LIBPQ */
