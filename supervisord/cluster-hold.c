/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Cluster mode, the operator's stops and starts cluster-wide: a stop or
 * start asked on this node written to the instance's lease row
 * (pg_lease_hold, numbered) and its answer waited for; those of other
 * nodes learnt by notice (only a hint: the rows are re-read, one re-read
 * at a time), by the list of stopped instances read when the jobs are
 * registered, or by a renew or a bid (cluster-conn.c, cluster.c), and
 * applied here.  An answer read before this node's own write that is on
 * its way never undoes it (docs/cluster.md).
 */

#include "config.h"

#ifdef HAVE_LIBPQ

#include <sys/types.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster-int.h"
#include "cluster.h"
#include "jobs-view.h"
#include "jobs.h"
#include "log.h"
#include "pgstate.h"
#include "state.h"
#include "xmalloc.h"

/*
 * The operator stopped (held) or started the instance on some node: it
 * is so here too.  by: who and where, for the reason.
 */
void
cluster_hold_apply(struct inst *in, int held, const char *by)
{
	long uid = -1;

	if (held && in->life.intent != LIFE_INTENT_DOWN) {
		log_info("%s: stopped cluster-wide%s%s", in->label,
		    by != NULL ? " by " : "", by != NULL ? by : "");
		if (by == NULL || sscanf(by, "uid %ld", &uid) != 1)
			uid = -1;
		/* This node's own record of the stop, as if asked here. */
		state_intent(in, 1, 0, uid);
		inst_stop_operator(in);
		inst_reason(in, "stopped cluster-wide%s%s",
		    by != NULL ? " by " : "", by != NULL ? by : "");
	} else if (!held && in->life.intent == LIFE_INTENT_DOWN) {
		log_info("%s: started cluster-wide%s%s", in->label,
		    by != NULL ? " by " : "", by != NULL ? by : "");
		/*
		 * A periodic job's "run it now" is the asking node's alone
		 * (one run, not one per node); here its slots resume.
		 */
		if (in->job->spec->kind == CONF_KIND_PERIODIC &&
		    in->job->next_spec == NULL)
			inst_arm(in); /* which forgets the stop */
		else
			inst_start(in);
	}
}

/*
 * Is the operator's stop or start of in on its way to the database, on a
 * connection that is up?  Its answer waits for it: a stop on one node
 * then a start on another must reach the database in that order (a
 * notice of the stop must not come after the start and undo it).  With
 * the connection down, the answer does not wait for its return.
 */
int
cluster_hold_pending(const struct inst *in)
{
	const struct lease_slot *s = in->lease;

	return (s != NULL && s->hold_pending > 0 &&
	    pgconn_is_ready(cluster_st.lease));
}

/*
 * The instances of j the operator stopped cluster-wide ("{0,2}", or NULL
 * for none): held here too; the others are not, whatever this node's own
 * record said.  But for an instance this node's own stop or start is on
 * its way for: the list was read before it (on the same connection), and
 * its answer settles the instance.
 */
void
cluster_holds_apply(struct job *j, const char *list)
{
	char *held = xcalloc((size_t)j->ninsts + 1, 1);
	const char *p = list;
	long v;
	char *end;
	int i;

	while (p != NULL && *p != '\0') {
		if (*p == '{' || *p == ',' || *p == '}') {
			p++;
			continue;
		}
		v = strtol(p, &end, 10);
		if (end == p)
			break;
		if (v >= 0 && v < j->ninsts)
			held[v] = 1;
		p = end;
	}
	for (i = 0; i < j->ninsts; i++) {
		if (j->insts[i]->lease != NULL &&
		    j->insts[i]->lease->hold_pending > 0)
			continue;
		if (held[i])
			cluster_hold_apply(j->insts[i], 1, NULL);
		else if (j->insts[i]->life.intent == LIFE_INTENT_DOWN &&
		    j->spec->autostart)
			cluster_hold_apply(j->insts[i], 0, NULL);
	}
	free(held);
}

/* What a stop or start of an instance was, for its answer. */
struct hold_arg {
	char *job;
	int instance;
};

static void
cluster_held_done(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct hold_arg *a = arg;
	struct job *j = job_find(a->job);
	struct lease_slot *s = NULL;
	int64_t seq;

	if (--cluster_st.holds == 0 && cluster_st.holds_settled != NULL)
		cluster_st.holds_settled();
	if (j != NULL && a->instance < j->ninsts)
		s = j->insts[a->instance]->lease;
	if (s != NULL && --s->hold_pending == 0 && res != NULL &&
	    (seq = pgres_int(res, 0, 0, 0)) > s->hold_seq)
		s->hold_seq = seq;
	if (res == NULL)
		log_warnx("%s@%d: the cluster-wide stop or start was not "
		          "recorded (%s): it holds on this node only",
		    a->job, a->instance, err);
	/* The operator's stop or start waited for this (waiters.c). */
	if (s != NULL && s->hold_pending == 0 && cluster_waiters != NULL)
		cluster_waiters(s->in);
	free(a->job);
	free(a);
}

/*
 * The operator stopped (held) or started an instance of a cluster job
 * here: so it is on every node (they are told by NOTIFY; a node that
 * missed it finds out at its next renew or bid).
 */
void
cluster_intent(struct inst *in, int held, long uid)
{
	const char *p[4];
	char id[32], idx[16], *by;
	struct hold_arg *a;

	if (cluster_st.cf == NULL || !in->job->spec->cluster)
		return;
	if (in->job->cluster_id == 0) {
		log_warnx("%s: %s on this node only: the database has not been "
		          "reached yet",
		    in->label, held ? "stopped" : "started");
		return;
	}
	a = xcalloc(1, sizeof(*a));
	a->job = xstrdup(in->job->name);
	a->instance = in->index;
	cluster_slot(in)->hold_pending++;
	cluster_st.holds++;
	snprintf(id, sizeof(id), "%" PRId64, in->job->cluster_id);
	snprintf(idx, sizeof(idx), "%d", in->index);
	xasprintf(&by, "uid %ld on %s", uid, cluster_st.cf->node_name);
	p[0] = id;
	p[1] = idx;
	p[2] = held ? "true" : "false";
	p[3] = by;
	pgconn_query(
	    cluster_st.lease, 0, pg_lease_hold, 4, p, cluster_held_done, a);
	free(by);
}

/* What a re-read of the operator's stops and starts asked for. */
static void
cluster_hold_read(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct inst *in;
	struct lease_slot *s;
	const char *held;
	int64_t seq;
	int row;

	(void)arg;
	(void)sent;
	cluster_st.hold_reading = 0;
	if (res == NULL) {
		/* Hints that came meanwhile wait for the connection's return. */
		log_debug("cluster: re-reading stops and starts: %s", err);
		return;
	}
	for (row = 0; row < pgres_ntuples(res); row++) {
		in = cluster_inst_find(
		    pgres_int(res, row, 0, 0), (int)pgres_int(res, row, 1, -1));
		held = pgres_value(res, row, 2);
		seq = pgres_int(res, row, 3, 0);
		if (in == NULL || held == NULL)
			continue;
		s = cluster_slot(in);
		/* Older than what this node knows, or than its own: not news. */
		if (s->hold_pending || seq <= s->hold_seq)
			continue;
		s->hold_seq = seq;
		cluster_hold_apply(
		    in, strcmp(held, "t") == 0, pgres_value(res, row, 4));
	}
	cluster_hold_reread();
}

/*
 * A notice said the operator stopped or started (job id, instance)
 * somewhere.  Anyone may send a notice: it is only a hint to re-read the
 * row, which only vigil's role writes.  Hints for instances unknown here
 * are dropped; the others mark their slot, and one re-read at a time
 * takes every slot marked (a flood of hints is one query at a time).
 */
void
cluster_hold_hint(int64_t job_id, int instance)
{
	struct inst *in;

	if (job_id <= 0 || (in = cluster_inst_find(job_id, instance)) == NULL)
		return;
	cluster_slot(in)->hold_hint = 1;
	cluster_hold_reread();
}

/* Re-read the rows of the slots hinted at, unless a re-read is on. */
void
cluster_hold_reread(void)
{
	struct lease_slot *s;
	int64_t *ids = NULL, *idx = NULL;
	size_t n = 0, cap = 0;
	char *pa[2];

	if (cluster_st.hold_reading || !pgconn_is_ready(cluster_st.lease))
		return;
	LIST_FOREACH(s, &cluster_st.slots, entry) {
		if (!s->hold_hint)
			continue;
		s->hold_hint = 0;
		if (n == cap) {
			cap = cap == 0 ? 16 : 2 * cap;
			ids = xreallocarray(ids, cap, sizeof(*ids));
			idx = xreallocarray(idx, cap, sizeof(*idx));
		}
		ids[n] = s->in->job->cluster_id;
		idx[n++] = s->in->index;
	}
	if (n == 0)
		return;
	pa[0] = pg_array_int(ids, n);
	pa[1] = pg_array_int(idx, n);
	cluster_st.hold_reading = 1;
	pgconn_query(cluster_st.lease, 0, pg_lease_held, 2,
	    (const char *const *)pa, cluster_hold_read, NULL);
	free(pa[0]);
	free(pa[1]);
	free(ids);
	free(idx);
}

#endif /* HAVE_LIBPQ */
