/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Cluster mode: exactly one copy of each instance of a cluster = true job
 * across every vigild of a cluster, through a lease row per instance in
 * PostgreSQL (lib/pgstate.c has the SQL, lib/lease.c the arithmetic,
 * docs/cluster.md the design and its failure timelines).
 *
 * A start's claim (claim_cluster, cluster-claim.c) or a periodic slot
 * won bids here for the lease: a round trip, and the instance waits in
 * STARTING (LIFE_LEASE) until the answer; a bid won feeds it RECHECK, a
 * bid lost leaves a standby that bids again when the holder's lease could
 * expire.  Every lease of the node is renewed by one statement per
 * renew_interval on the lease connection; the node trusts a lease until
 * the send time of its last answered renew + lease_ttl - fence_margin
 * (CLOCK_BOOTTIME), and the fence never waits for the database: at trust
 * - stop_timeout the run is stopped (LIFE_EV_FENCE), at trust it is
 * killed, and the keeper process (keeper.c) does the same if vigild
 * cannot.  A dropped connection is not a lost lease: only a renew that
 * does not return the lease (someone else has it) or the trust deadline
 * stops the run.  The lease is given back once the run's group is gone,
 * and standbys are woken by NOTIFY.
 *
 * Two connections: the lease connection (migrations, the node row, the
 * jobs, leases, LISTEN) and the work connection (what may be slow: the
 * state of leases for status), so that nothing queues before a renew.
 *
 * This file has the leases (bid and answer, the standbys' looks, fence,
 * give back, a periodic slot's lease: run or skipped) and the forgetting
 * of jobs; cluster-claim.c the seam and a slot's fire; cluster-conn.c the
 * connections, the renew and the jobs' rows; cluster-state.c the state
 * and what other modules ask (cluster-int.h says who calls whom).
 */

#include "config.h"

#include <sys/types.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster-int.h"
#include "duration.h"
#include "effects.h"
#include "evloop.h"
#include "lease.h"
#include "log.h"
#include "pgstate.h"
#include "state.h"
#include "timefmt.h"
#include "vigild.h"
#include "xmalloc.h"

#ifdef HAVE_LIBPQ

static void cluster_slot_run(struct lease_slot *);
static void cluster_slot_skipped(struct lease_slot *, const char *);
static int cluster_fence_kill(sd_event_source *, uint64_t, void *);

static int
cluster_fence_stop(sd_event_source *src, uint64_t usec, void *arg)
{
	struct lease_slot *s = arg;
	struct inst *in = s->in;
	uint64_t now = pgconn_now();
	char buf[32];

	if (s->st != LEASE_HELD)
		return (0);
	if (now >= s->trust) /* vigild could not run: the kill is due */
		return (cluster_fence_kill(src, usec, arg));
	log_warnx("%s: cluster lease not renewed in time (trusted %s more): "
	          "fencing: stopping it before anyone else may take over",
	    in->label, duration_format(s->trust - now, buf, sizeof(buf)));
	inst_reason(in, "fenced: cluster lease not renewed");
	inst_feed(in, LIFE_EV_FENCE);
	return (0);
}

static int
cluster_fence_kill(sd_event_source *src, uint64_t usec, void *arg)
{
	struct lease_slot *s = arg;
	struct inst *in = s->in;

	if (s->st != LEASE_HELD)
		return (0);
	s->st = LEASE_EXPIRED;
	if (cluster_has_run(in))
		log_warnx("%s: cluster lease trust deadline passed: sending "
		          "KILL",
		    in->label);
	cluster_kill_run(in);
	cluster_keeper_update(s);
	inst_reason(in, "fenced: cluster lease not renewed");
	inst_feed(in, LIFE_EV_FENCE);
	/* A start that found the lease untrusted waits for a new one. */
	if (s->want && in->life.phase == LIFE_LEASE)
		cluster_acquire(s);
	return (0);
}

/* A lease answered (acquired or renewed) at sent: trusted anew. */
void
cluster_trust(struct lease_slot *s, uint64_t sent)
{
	uint64_t stop = inst_kind_stop_time(s->in->job->spec);

	s->trust = lease_trust(&cluster_st.t, sent);
	if (cluster_st.cf->on_db_loss == CONF_DB_LOSS_KEEP)
		cluster_timers_off(s);
	else {
		evloop_timer_at(&s->stop, CLOCK_BOOTTIME,
		    lease_stop_at(s->trust, stop), 1000, cluster_fence_stop, s);
		evloop_timer_at(&s->kill, CLOCK_BOOTTIME, s->trust, 1000,
		    cluster_fence_kill, s);
	}
	cluster_keeper_update(s);
}

/* Someone else holds the lease now: the run goes at once. */
void
cluster_lost(struct lease_slot *s)
{
	struct inst *in = s->in;

	log_warnx("%s: cluster lease lost: epoch %" PRId64
	          " is no longer ours%s",
	    in->label, s->epoch, cluster_has_run(in) ? "; sending KILL" : "");
	s->st = LEASE_NONE;
	cluster_timers_off(s);
	cluster_kill_run(in);
	cluster_keeper_update(s);
	inst_reason(in, "fenced: cluster lease taken over");
	inst_feed(in, LIFE_EV_FENCE);
}

static int
cluster_retry_cb(sd_event_source *src, uint64_t usec, void *arg)
{
	struct lease_slot *s = arg;

	if (s->want && s->st == LEASE_NONE && s->in->life.phase == LIFE_LEASE)
		cluster_acquire(s);
	return (0);
}

/* A standby bids again after usec, or at a NOTIFY. */
static void
cluster_retry_in(struct lease_slot *s, uint64_t usec)
{
	evloop_timer_at(&s->retry, CLOCK_BOOTTIME, pgconn_now() + usec, 1000,
	    cluster_retry_cb, s);
}

/* ---- periodic jobs: a slot's lease (fired in cluster-claim.c) ---- */

/* The slot is over for this node: the next one is armed. */
void
cluster_slot_next(struct lease_slot *s)
{
	struct inst *in = s->in;
	const struct kind_ops *k = inst_kind(in);

	s->slot = 0;
	if (in->life.want && !vigild.shutting_down && in->per.src == NULL &&
	    k->slot_next != NULL)
		k->slot_next(in);
}

/* The slot and its lease are ours: the run starts (LIFE_EV_SLOT). */
static void
cluster_slot_run(struct lease_slot *s)
{
	struct inst *in = s->in;

	s->slot = 0;
	if (in->life.phase == LIFE_LEASE) {
		/*
		 * A start waits for this very lease: its run is the slot's.
		 * (As a slot it would be skipped as busy, and the lease given
		 * back, at every slot while the start waits for ever.)
		 */
		inst_feed(in, LIFE_EV_RECHECK);
		if (in->per.src == NULL)
			cluster_slot_next(s);
		return;
	}
	s->want = 0;
	inst_feed(in, LIFE_EV_SLOT);
	/* Not launched (stopped meanwhile): the lease goes back. */
	if (!s->want)
		claim_cluster.release(in);
	else if (in->per.src == NULL)
		cluster_slot_next(s);
}

/*
 * n slots of in that did not run, the first at usec at, and why: counted
 * in vigil.periodic and a row of the cluster's run history.
 */
void
cluster_slots_skipped(struct inst *in, int64_t at, int64_t n, const char *why)
{
	char id[32], idx[16], first[32], count[32];
	const char *p[6];

	in->per.skipped += (unsigned int)n;
	if (cluster_st.work == NULL)
		return;
	snprintf(id, sizeof(id), "%" PRId64, in->job->cluster_id);
	snprintf(idx, sizeof(idx), "%d", in->index);
	snprintf(first, sizeof(first), "%" PRId64, at);
	snprintf(count, sizeof(count), "%" PRId64, n);
	p[0] = id;
	p[1] = idx;
	p[2] = cluster_st.cf->node_name;
	p[3] = first;
	p[4] = why;
	p[5] = count;
	pgconn_query(cluster_st.work, 0, pg_periodic_skipped, 6, p, NULL, NULL);
}

/* The slot is ours but the last run still holds the lease somewhere. */
static void
cluster_slot_skipped(struct lease_slot *s, const char *holder)
{
	struct inst *in = s->in;
	char when[64], why[128];

	log_info("%s: slot of %s skipped: the last run is still going on %s",
	    in->label, timefmt_wall(s->slot, when, sizeof(when)),
	    holder != NULL ? holder : "another node");
	joblog_mark(in, "slot skipped: still running on %s",
	    holder != NULL ? holder : "another node");
	state_run_skipped(in, s->slot);
	snprintf(why, sizeof(why),
	    "skipped: the last run was still going on %s",
	    holder != NULL ? holder : "another node");
	cluster_slots_skipped(in, s->slot, 1, why);
	cluster_slot_next(s);
}

/* The arguments of an acquire, for its answer. */
struct acquire_arg {
	char *job;
	int instance;
	int64_t job_id;
};

/* A lease won for an instance that went, or stopped asking: back. */
static void
cluster_give_back(int64_t job_id, int instance, int64_t epoch)
{
	struct release *r = xcalloc(1, sizeof(*r));

	r->job_id = job_id;
	r->instance = instance;
	r->epoch = epoch;
	TAILQ_INSERT_TAIL(&cluster_st.releases, r, entry);
	cluster_releases_send();
}

/* What an answer to a bid says of the streak of failed starts. */
static void
cluster_streak(struct lease_slot *s, const struct pgres *res)
{
	const char *f = pgres_value(res, 0, 6);

	free(s->failures);
	s->failures = f != NULL ? xstrdup(f) : NULL;
	s->streak = f != NULL || pgres_int(res, 0, 7, 0) > 0;
	s->wait_ms = pgres_int(res, 0, 5, 0);
	s->placeable = pgres_int(res, 0, 8, -1);
}

/* The bid won (acquired at sent, epoch): the run may start. */
static void
cluster_won(struct lease_slot *s, int64_t epoch, uint64_t sent)
{
	s->st = LEASE_HELD;
	s->epoch = epoch;
	s->runs = 0;
	s->token = 0;
	free(s->holder);
	s->holder = NULL;
	s->ms_left = -1;
	s->wait_ms = 0;
	cluster_trust(s, sent);
	log_info("%s: cluster lease acquired: epoch %" PRId64, s->in->label,
	    s->epoch);
	/* Requests the last holder left open, a start no node ran yet. */
	if (s->msg == 0 && s->slot == 0)
		cluster_requests_take();
	if (s->slot != 0)
		cluster_slot_run(s);
	else if (s->in->life.phase == LIFE_LEASE)
		inst_feed(s->in, LIFE_EV_RECHECK);
}

static void
cluster_gc_done(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	char buf[32];
	int row;

	(void)arg;
	(void)sent;
	cluster_st.gc_on = 0;
	if (res == NULL) {
		log_debug("cluster: forgetting jobs: %s", err);
		return;
	}
	for (row = 0; row < pgres_ntuples(res); row++)
		log_info("cluster: forgot job %s: no live node has had it for "
		         "%s (forget_after)",
		    pgres_value(res, row, 0),
		    duration_format(
		        cluster_st.cf->forget_after, buf, sizeof(buf)));
}

/*
 * Forget the jobs that no live node has had for forget_after (their rows,
 * leases and history), looking every forget_after / 2, at most every
 * minute, at least every renew_interval.
 */
void
cluster_jobs_gc(void)
{
	uint64_t now = pgconn_now(), every = cluster_st.cf->forget_after / 2;
	char ms[32];
	const char *p[1];

	if (every > 60 * DURATION_USEC_PER_SEC)
		every = 60 * DURATION_USEC_PER_SEC;
	/* Not before the schema is there (another node may be making it). */
	if (!cluster_st.schema_done || cluster_st.gc_on ||
	    now < cluster_st.gc_at + every || !pgconn_is_ready(cluster_st.work))
		return;
	cluster_st.gc_at = now;
	cluster_st.gc_on = 1;
	snprintf(ms, sizeof(ms), "%llu",
	    (unsigned long long)(cluster_st.cf->forget_after / 1000));
	p[0] = ms;
	pgconn_query(
	    cluster_st.work, 0, pg_job_gc, 1, p, cluster_gc_done, NULL);
}

/* How close in time the standbys' looks are taken together. */
#define CLUSTER_WATCH_BATCH (50 * 1000)

static void cluster_watch_arm(void);

/* Is s a start waiting for the lease as a standby? */
static int
cluster_is_standby(const struct lease_slot *s)
{
	return (s->want && s->st == LEASE_NONE && s->slot == 0 &&
	    s->in->life.phase == LIFE_LEASE);
}

/* The look at the leases of the standbys due (pg_lease_peek's rows). */
static void
cluster_watched(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct lease_slot *s;
	const char *holder;
	uint64_t now = pgconn_now();
	int64_t ms;
	int row;

	(void)arg;
	(void)sent;
	cluster_st.watching = 0;
	if (res == NULL) {
		log_debug("cluster: looking at the standbys' leases: %s", err);
		LIST_FOREACH(s, &cluster_st.slots, entry)
			if (s->due != 0 && s->due <= now + CLUSTER_WATCH_BATCH)
				s->due = now + cluster_st.t.renew;
	}
	for (row = 0; res != NULL && row < pgres_ntuples(res); row++) {
		s = cluster_find(
		    pgres_int(res, row, 0, 0), (int)pgres_int(res, row, 1, -1));
		if (s == NULL || s->due == 0 || !cluster_is_standby(s))
			continue;
		holder = pgres_value(res, row, 2);
		ms = pgres_int(res, row, 3, -1);
		if (holder == NULL || ms < 0 || pgres_bool(res, row, 4)) {
			s->due = 0; /* free, or stopped: the bid says */
			cluster_acquire(s);
			continue;
		}
		s->ms_left = ms;
		s->holder_until = now + (uint64_t)ms * 1000;
		s->due = now + lease_retry_in(ms, 0, cluster_st.t.renew);
		if (s->holder == NULL || strcmp(s->holder, holder) != 0) {
			free(s->holder);
			s->holder = xstrdup(holder);
			cluster_waiting(s, NULL);
		}
	}
	cluster_watch_arm();
}

/*
 * The standbys' looks are due: one statement for every standby whose
 * holder's lease could expire now (those of one holder come due
 * together), not a bid each.
 */
static int
cluster_watch_cb(sd_event_source *src, uint64_t usec, void *arg)
{
	struct lease_slot *s;
	int64_t *ids = NULL, *idx = NULL;
	uint64_t now = pgconn_now();
	size_t n = 0;
	char *pa[2];

	(void)src;
	(void)usec;
	(void)arg;
	if (cluster_st.watching)
		return (0);
	LIST_FOREACH(s, &cluster_st.slots, entry) {
		if (s->due == 0 || s->due > now + CLUSTER_WATCH_BATCH)
			continue;
		if (!cluster_is_standby(s) ||
		    !pgconn_is_ready(cluster_st.lease)) {
			s->due = 0; /* a bid or the reconnect's bids look */
			continue;
		}
		ids = xreallocarray(ids, n + 1, sizeof(*ids));
		idx = xreallocarray(idx, n + 1, sizeof(*idx));
		ids[n] = s->in->job->cluster_id;
		idx[n++] = s->in->index;
	}
	if (n == 0) {
		cluster_watch_arm();
		return (0);
	}
	pa[0] = pg_array_int(ids, n);
	pa[1] = pg_array_int(idx, n);
	cluster_st.watching = 1;
	log_debug("cluster: looking at %zu standbys' leases", n);
	pgconn_query(cluster_st.lease, 0, pg_lease_peek, 2,
	    (const char *const *)pa, cluster_watched, NULL);
	free(pa[0]);
	free(pa[1]);
	free(ids);
	free(idx);
	return (0);
}

/* The standbys' timer at the first of their looks, or off. */
static void
cluster_watch_arm(void)
{
	struct lease_slot *s;
	uint64_t at = 0;

	if (cluster_st.watching)
		return; /* armed at the answer */
	LIST_FOREACH(s, &cluster_st.slots, entry)
		if (s->due != 0 && (at == 0 || s->due < at))
			at = s->due;
	if (at == 0) {
		if (cluster_st.watch != NULL)
			(void)sd_event_source_set_enabled(
			    cluster_st.watch, SD_EVENT_OFF);
		return;
	}
	evloop_timer_at(&cluster_st.watch, CLOCK_BOOTTIME, at, 1000,
	    cluster_watch_cb, NULL);
}

/* The bid lost (the answer's row res): wait, or stop if held. */
static void
cluster_lost_bid(struct lease_slot *s, const struct pgres *res)
{
	const char *holder = pgres_value(res, 0, 1);
	int held = pgres_bool(res, 0, 4);
	uint64_t retry;

	if (s->slot != 0) {
		cluster_slot_skipped(s, holder);
		/* A start waiting for the lease bids again, as a standby. */
		if (!s->want || s->in->life.phase != LIFE_LEASE)
			return;
	}
	free(s->holder);
	s->holder = holder != NULL ? xstrdup(holder) : NULL;
	s->ms_left = pgres_int(res, 0, 2, -1);
	s->holder_until =
	    s->ms_left >= 0 ? pgconn_now() + (uint64_t)s->ms_left * 1000 : 0;
	if (held && !s->hold_pending) {
		cluster_hold_apply(s->in, 1, NULL);
		return; /* a start clears it and notifies */
	}
	if (pgres_int(res, 0, 3, 0) > 0 && holder == NULL)
		cluster_waiting(s,
		    "database failover: no lease changes hands "
		    "during the quarantine");
	else
		cluster_waiting(s, NULL);
	/* A start waited for is settled: another node runs it. */
	if (holder != NULL && cluster_waiters != NULL)
		cluster_waiters(s->in);
	/* Not placed here: it looks again when the lease could change. */
	retry =
	    lease_retry_in(s->ms_left > s->wait_ms ? s->ms_left : s->wait_ms,
	        pgres_int(res, 0, 3, -1),
	        cluster_placed(s->in->job->spec) ? cluster_st.t.renew :
	                                           cluster_st.t.ttl);
	/*
	 * A standby of a live holder is watched with the others: one look
	 * at all the leases that come due together, then a bid for those
	 * that are free (a lease given back wakes it at once by notice).
	 */
	if (holder != NULL && s->ms_left >= 0 && s->ms_left >= s->wait_ms &&
	    pgres_int(res, 0, 3, 0) <= 0 && s->slot == 0 &&
	    cluster_placed(s->in->job->spec)) {
		s->due = pgconn_now() + retry;
		cluster_watch_arm();
		return;
	}
	cluster_retry_in(s, retry);
}

/* The answer to a bid: won, lost, or not answered. */
static void
cluster_acquired(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct acquire_arg *a = arg;
	struct job *j = job_find(a->job);
	struct lease_slot *s = NULL;
	int64_t epoch = res != NULL ? pgres_int(res, 0, 0, 0) : 0;

	if (j != NULL && a->instance < j->ninsts &&
	    j->insts[a->instance]->lease != NULL && j->cluster_id == a->job_id)
		s = j->insts[a->instance]->lease;
	if (s != NULL && res != NULL && s->st == LEASE_ACQUIRING)
		cluster_streak(s, res);
	if (s == NULL || s->st != LEASE_ACQUIRING) {
		if (epoch > 0) /* the instance went meanwhile */
			cluster_give_back(a->job_id, a->instance, epoch);
	} else if (res == NULL) {
		s->st = LEASE_NONE;
		cluster_waiting(s, err); /* again once connected */
	} else if (epoch > 0 && !s->want && s->slot == 0) {
		s->st = LEASE_NONE; /* stopped meanwhile: back at once */
		cluster_give_back(a->job_id, a->instance, epoch);
	} else if (epoch > 0)
		cluster_won(s, epoch, sent);
	else {
		s->st = LEASE_NONE;
		cluster_lost_bid(s, res);
	}
	free(a->job);
	free(a);
}

/* Bid for the lease of s (its job seeded, the connection ready). */
void
cluster_acquire(struct lease_slot *s)
{
	struct inst *in = s->in;
	struct acquire_arg *a;
	const char *p[4];
	char id[32], idx[16];

	if (s->st != LEASE_NONE && s->st != LEASE_EXPIRED)
		return;
	if (cluster_st.drained) {
		cluster_waiting(s, NULL); /* undrained, every start bids */
		return;
	}
	if (!pgconn_is_ready(cluster_st.lease)) {
		cluster_waiting(s,
		    pgconn_why(cluster_st.lease) != NULL ?
		        pgconn_why(cluster_st.lease) :
		        "connecting to the database");
		return;
	}
	if (in->job->cluster_id == 0) {
		/* Registered once connected, or after the reload that added
		 * it: then every start waiting bids. */
		cluster_waiting(s, "job not yet registered in the database");
		return;
	}
	if (s->retry != NULL)
		(void)sd_event_source_set_enabled(s->retry, SD_EVENT_OFF);
	s->due = 0;
	snprintf(id, sizeof(id), "%" PRId64, in->job->cluster_id);
	snprintf(idx, sizeof(idx), "%d", in->index);
	p[0] = id;
	p[1] = idx;
	p[2] = cluster_st.cf->node_name;
	p[3] = cluster_st.ttl_ms;
	a = xcalloc(1, sizeof(*a));
	a->job = xstrdup(in->job->name);
	a->instance = in->index;
	a->job_id = in->job->cluster_id;
	s->st = LEASE_ACQUIRING;
	log_debug("%s: bidding for the cluster lease", in->label);
	if (in->reason == NULL)
		cluster_waiting(s, NULL);
	pgconn_query(
	    cluster_st.lease, 0, pg_lease_acquire, 4, p, cluster_acquired, a);
}

/* Bid for every lease a start waits for (no run of it is left). */
void
cluster_acquire_all(void)
{
	struct lease_slot *s;

	LIST_FOREACH(s, &cluster_st.slots, entry)
		if (s->want && s->in->life.phase == LIFE_LEASE &&
		    (s->st == LEASE_NONE || s->st == LEASE_EXPIRED))
			cluster_acquire(s);
}

/* ---- release ---- */

static void
cluster_released(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct release *r = arg;
	struct inst *in;
	char buf[32];

	if (res == NULL) {
		r->sent = 0; /* again once the connection is back */
		return;
	}
	if (r->failed != NULL && pgres_ntuples(res) > 0 &&
	    pgres_bool(res, 0, 1) &&
	    (in = cluster_inst_find(r->job_id, r->instance)) != NULL)
		log_warnx("%s: failed on every node: tried again cluster-wide "
		          "in %s",
		    in->label,
		    duration_format((uint64_t)pgres_int(res, 0, 2, 0) * 1000,
		        buf, sizeof(buf)));
	TAILQ_REMOVE(&cluster_st.releases, r, entry);
	free(r->failed);
	free(r);
	if (TAILQ_EMPTY(&cluster_st.releases) &&
	    cluster_st.shutdown_done != NULL && !cluster_st.renewing)
		cluster_shutdown(cluster_st.shutdown_done);
}

void
cluster_releases_send(void)
{
	struct release *r;
	const char *p[7];
	char id[32], idx[16], ep[32], d[32], dm[32];

	if (cluster_st.lease == NULL || !pgconn_is_ready(cluster_st.lease))
		return;
	TAILQ_FOREACH(r, &cluster_st.releases, entry) {
		if (r->sent)
			continue;
		snprintf(id, sizeof(id), "%" PRId64, r->job_id);
		snprintf(idx, sizeof(idx), "%d", r->instance);
		snprintf(ep, sizeof(ep), "%" PRId64, r->epoch);
		p[0] = id;
		p[1] = idx;
		p[2] = cluster_st.cf->node_name;
		p[3] = ep;
		r->sent = 1;
		if (r->failed != NULL) {
			/* The cluster's backoff: at least a renew interval. */
			snprintf(d, sizeof(d), "%llu",
			    (unsigned long long)(r->delay > cluster_st.t.renew ?
			            r->delay :
			            cluster_st.t.renew) /
			        1000);
			snprintf(dm, sizeof(dm), "%llu",
			    (unsigned long long)(r->delay_max > r->delay ?
			            r->delay_max :
			            r->delay) /
			        1000);
			p[4] = r->failed;
			p[5] = d;
			p[6] = dm;
			pgconn_query(cluster_st.lease, 0, pg_lease_fail, 7, p,
			    cluster_released, r);
			continue;
		}
		pgconn_query(cluster_st.lease, 0, pg_lease_release, 4, p,
		    cluster_released, r);
	}
}

static int
cluster_shutdown_timeout(sd_event_source *src, uint64_t usec, void *arg)
{
	void (*done)(void) = cluster_st.shutdown_done;

	log_warnx("cluster: %zu lease%s not given back in time (they expire "
	          "by themselves)",
	    pgconn_pending(cluster_st.lease),
	    pgconn_pending(cluster_st.lease) == 1 ? "" : "s");
	cluster_st.shutdown_done = NULL;
	if (done != NULL)
		done();
	return (0);
}

/*
 * At the end of the shutdown (every run gone): give the leases back, for
 * at most one query timeout, then call done.
 */
void
cluster_shutdown(void (*done)(void))
{
	if (cluster_st.cf == NULL ||
	    (TAILQ_EMPTY(&cluster_st.releases) && !cluster_st.renewing) ||
	    !pgconn_is_ready(cluster_st.lease)) {
		cluster_st.shutdown_done = NULL;
		cluster_st.shutdown_timer =
		    sd_event_source_disable_unref(cluster_st.shutdown_timer);
		done();
		return;
	}
	cluster_st.shutdown_done = done;
	if (cluster_st.shutdown_timer == NULL)
		evloop_timer_in(&cluster_st.shutdown_timer, CLOCK_BOOTTIME,
		    cluster_st.t.query_timeout, 1000, cluster_shutdown_timeout,
		    NULL);
	cluster_releases_send();
}

#endif /* HAVE_LIBPQ */
