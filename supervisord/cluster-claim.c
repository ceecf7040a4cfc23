/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Cluster mode's claims (cluster-int.h): the seam, claim_cluster, and a
 * periodic cluster job's slot.
 *
 * claim_cluster is a struct claim_ops: the lease is taken first, then the
 * local OFD lock as for any job (claim_local).  Taking a lease is a round
 * trip: taking the claim answers CLAIM_WAIT and bids (cluster.c), the
 * instance waits in STARTING (LIFE_LEASE) and is fed RECHECK once the
 * lease is had.  A run that holds the claim tells the keeper its group
 * and starts its row in vigil.run; a run that failed here makes the
 * release that follows a handover; the release gives the local lock up
 * and the lease back once the run's group is gone (cluster.c sends it).
 *
 * A slot of a periodic cluster job is run by whoever commits it first
 * (pg_periodic_fire): the winner bids for the lease and says which slots
 * before it ran on no node.  What the lease's answer does with the slot
 * (run, skipped as busy, the next one armed) is cluster.c's.
 *
 * Of the cluster's files it calls cluster.c and cluster-state.c;
 * cluster.c comes here only through the table (claim_cluster.release, a
 * slot not launched).
 */

#include "config.h"

#include <sys/types.h>
#include <sys/wait.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cluster-int.h"
#include "effects.h"
#include "job.h"
#include "log.h"
#include "pgstate.h"
#include "slot.h"
#include "timefmt.h"
#include "vigild.h"
#include "xmalloc.h"

#ifdef HAVE_LIBPQ

/* ---- periodic jobs: a slot fired ---- */

/* Slots that no node fired are counted up to this many. */
#define CLUSTER_MISSED_MAX 10000

/*
 * This node won slot; the one fired before it was prev (0: none): the
 * slots in between ran on no node (every node down, drained, not placed
 * or cut off from the database).  Said once, by the winner.
 */
static void
cluster_slots_missed(struct inst *in, int64_t prev, int64_t slot)
{
	char a[64], b[64], why[256];
	const struct job_spec *spec = in->job->spec;
	int64_t first,
	    n = slot_between(spec->every, &spec->cron, prev, slot,
	        CLUSTER_MISSED_MAX, &first);

	if (n <= 0)
		return;
	timefmt_wall(prev, a, sizeof(a));
	timefmt_wall(slot, b, sizeof(b));
	snprintf(why, sizeof(why),
	    "skipped: %s%" PRId64 " slot%s between %s and %s ran on no node "
	    "(none was up and connected to the database)",
	    n >= CLUSTER_MISSED_MAX ? "at least " : "", n, n == 1 ? "" : "s", a,
	    b);
	log_warnx("%s: %s", in->label, why);
	joblog_mark(in, "%s", why);
	cluster_slots_skipped(in, first, n, why);
}

/* What a slot's compare-and-set was about. */
struct fire_arg {
	char *job;
	int instance;
	int64_t slot;
};

static void
cluster_fired(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct fire_arg *a = arg;
	struct job *j = job_find(a->job);
	struct lease_slot *s;

	if (j == NULL || a->instance >= j->ninsts ||
	    (s = j->insts[a->instance]->lease) == NULL || s->slot != a->slot)
		goto out;
	if (res == NULL)
		log_warnx("%s: slot not fired: %s", s->in->label, err);
	/* Won (a row): the run's lease, then the run; else the next slot. */
	if (res != NULL && pgres_ntuples(res) > 0)
		cluster_slots_missed(s->in, pgres_int(res, 0, 1, 0), a->slot);
	if (res != NULL && pgres_ntuples(res) > 0 && s->in->life.want)
		cluster_acquire(s);
	else
		cluster_slot_next(s);
out:
	free(a->job);
	free(a);
}

/*
 * A periodic cluster job's slot came here (at wall clock usec slot):
 * whoever commits it first runs it, once its lease is had; a lease still
 * held by the last run makes the slot skipped.
 */
void
cluster_slot_fired(struct inst *in, int64_t slot)
{
	struct lease_slot *s = cluster_slot(in);
	struct fire_arg *a;
	const char *p[5];
	char id[32], idx[16], at[32], tol[32];

	if (s->slot != 0 || s->st != LEASE_NONE)
		return; /* a slot on its way, or the last run's lease */
	if (cluster_st.drained || !cluster_placed(in->job->spec)) {
		/* the other nodes fire it */
		inst_reason(in,
		    cluster_st.drained ?
		        "slot left to the other nodes: this node is drained" :
		        "slot left to the other nodes: not placed on this "
		        "node (cluster_nodes)");
		s->slot = slot;
		cluster_slot_next(s);
		return;
	}
	if (!pgconn_is_ready(cluster_st.lease) || in->job->cluster_id == 0) {
		if (!vigild.started) {
			/* catch_up at start-up: once connected */
			s->catch_up = slot;
			return;
		}
		log_warnx("%s: slot not fired: %s", in->label,
		    pgconn_why(cluster_st.lease) != NULL ?
		        pgconn_why(cluster_st.lease) :
		        "not connected");
		inst_reason(in, "slot not fired: the database is unreachable");
		s->slot = slot;
		cluster_slot_next(s);
		return;
	}
	s->slot = slot;
	snprintf(id, sizeof(id), "%" PRId64, in->job->cluster_id);
	snprintf(idx, sizeof(idx), "%d", in->index);
	snprintf(at, sizeof(at), "%" PRId64, slot);
	snprintf(tol, sizeof(tol), "%llu",
	    (unsigned long long)(cluster_st.t.margin / 1000));
	p[0] = id;
	p[1] = idx;
	p[2] = at;
	p[3] = cluster_st.cf->node_name;
	p[4] = tol;
	a = xcalloc(1, sizeof(*a));
	a->job = xstrdup(in->job->name);
	a->instance = in->index;
	a->slot = slot;
	pgconn_query(
	    cluster_st.lease, 0, pg_periodic_fire, 5, p, cluster_fired, a);
}

/* ---- the seam ---- */

/*
 * The lease first, then the local lock.  A lease held but about to be
 * fenced is no lease to start a run on.
 */
static enum claim_status
claim_cluster_acquire(struct inst *in, struct claim_result *r)
{
	struct lease_slot *s = cluster_slot(in);

	s->want = 1;
	if (cluster_trusted(s))
		return (claim_local.acquire(in, r));
	if (s->st == LEASE_NONE || s->st == LEASE_EXPIRED)
		cluster_acquire(s);
	return (CLAIM_WAIT);
}

/* A run holds the claim now: the keeper knows its group. */
static void
claim_cluster_renew(struct inst *in, const struct lock_holder *h)
{
	struct lease_slot *s = in->lease;
	char id[32], idx[16], ep[32], pid[16];
	const char *p[6];

	claim_local.renew(in, h);
	if (s == NULL || s->st != LEASE_HELD)
		return;
	s->pgid = h->pgid > 1 ? h->pgid : h->pid;
	cluster_keeper_update(s); /* the cgroup came with the announcement */
	cluster_run_begin(s, h->pid);
	if (cluster_st.work == NULL || !pgconn_is_ready(cluster_st.work))
		return;
	snprintf(id, sizeof(id), "%" PRId64, in->job->cluster_id);
	snprintf(idx, sizeof(idx), "%d", in->index);
	snprintf(ep, sizeof(ep), "%" PRId64, s->epoch);
	snprintf(pid, sizeof(pid), "%ld", (long)h->pid);
	p[0] = id;
	p[1] = idx;
	p[2] = cluster_st.cf->node_name;
	p[3] = ep;
	p[4] = pid;
	p[5] = "RUNNING";
	pgconn_query(cluster_st.work, 0, pg_lease_state, 6, p, NULL, NULL);
}

/* Give the claim up: the local lock, then the lease (once the run is gone). */
static void
claim_cluster_release(struct inst *in)
{
	struct lease_slot *s = in->lease;
	struct release *r;

	claim_local.release(in);
	if (s == NULL)
		return;
	s->want = 0;
	cluster_timers_off(s);
	if (s->retry != NULL)
		(void)sd_event_source_set_enabled(s->retry, SD_EVENT_OFF);
	if (s->pgid > 1)
		keeper_del(s->key);
	s->pgid = 0;
	if (s->st != LEASE_HELD && s->st != LEASE_EXPIRED)
		return;
	if (s->st == LEASE_EXPIRED)
		log_info("%s: cluster lease of epoch %" PRId64
		         " let go (it was "
		         "no longer trusted)",
		    in->label, s->epoch);
	else if (s->failed != NULL)
		log_warnx("%s: failing here (%s): cluster lease of epoch "
		          "%" PRId64 " handed over to another node",
		    in->label, s->failed, s->epoch);
	else
		log_info("%s: cluster lease given back: epoch %" PRId64,
		    in->label, s->epoch);
	s->st = LEASE_NONE;
	r = xcalloc(1, sizeof(*r));
	r->job_id = in->job->cluster_id;
	r->instance = in->index;
	r->epoch = s->epoch;
	if (s->failed != NULL) {
		r->failed = s->failed;
		s->failed = NULL;
		r->delay = in->job->spec->restart_delay;
		r->delay_max = in->job->spec->restart_delay_max;
	}
	TAILQ_INSERT_TAIL(&cluster_st.releases, r, entry);
	cluster_releases_send();
}

/* The run failed here: the release that follows hands the lease over. */
static void
claim_cluster_failed(struct inst *in)
{
	struct lease_slot *s = in->lease;
	int st = in->last.status;
	char buf[64];

	if (s == NULL || (s->st != LEASE_HELD && s->st != LEASE_EXPIRED))
		return;
	free(s->failed);
	if (in->last.known)
		s->failed = xstrdup(
		    job_exit_format(WIFEXITED(st) ? WEXITSTATUS(st) : -1,
		        WIFSIGNALED(st) ? WTERMSIG(st) : 0,
		        WIFSIGNALED(st) && WCOREDUMP(st), buf, sizeof(buf)));
	else
		s->failed =
		    xstrdup(in->reason != NULL ? in->reason : "did not start");
}

/*
 * A run may start only on a lease still trusted for a whole stop time: a
 * restart (the lock kept) after vigild could not run for a while comes
 * before the fence's timers in the loop.
 */
static int
claim_cluster_trusted(struct inst *in, char **cause)
{
	if (cluster_trusted(in->lease))
		return (1);
	*cause = xstrdup("the cluster lease is no longer trusted");
	return (0);
}

static pid_t
claim_cluster_holder(struct inst *in, int fd)
{
	return (claim_local.holder(in, fd));
}

static int
claim_cluster_held_elsewhere(const struct job *j)
{
	return (claim_local.held_elsewhere(j));
}

/* A run is about to be spawned: its child tells the keeper first. */
static void
claim_cluster_announce(struct inst *in, int cg_fd, struct spawn_announce *a)
{
	if (in->lease != NULL && in->lease->st == LEASE_HELD)
		cluster_keeper_announce(in->lease, cg_fd, a);
}

const struct claim_ops claim_cluster = {
	.name = "cluster",
	.acquire = claim_cluster_acquire,
	.renew = claim_cluster_renew,
	.release = claim_cluster_release,
	.failed = claim_cluster_failed,
	.holder = claim_cluster_holder,
	.held_elsewhere = claim_cluster_held_elsewhere,
	.trusted = claim_cluster_trusted,
	.announce = claim_cluster_announce,
};

#endif /* HAVE_LIBPQ */
