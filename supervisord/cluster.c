/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Cluster mode: exactly one copy of each instance of a cluster = true job
 * across every vigild of a cluster, through a lease row per instance in
 * PostgreSQL (lib/pgstate.c has the SQL, lib/lease.c the arithmetic,
 * docs/cluster.md the design and its failure timelines).
 *
 * The seam is claim_cluster, a struct claim_ops: the lease is taken
 * first, then the local OFD lock as for any job (claim_local).  Taking a
 * lease is a round trip: taking the claim answers CLAIM_WAIT, the instance
 * waits in STARTING (LIFE_LEASE) and is fed RECHECK once the lease is
 * had.  Every lease of the node is renewed by one statement per
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
 */

#include "config.h"

#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "duration.h"
#include "lease.h"
#include "timefmt.h"
#include "log.h"
#include "pgstate.h"
#include "proc.h"
#include "vigild.h"
#include "xmalloc.h"

#ifdef HAVE_LIBPQ

enum lease_st {
	LEASE_NONE = 0,  /* not held, not asked for */
	LEASE_ACQUIRING, /* an acquire is on its way */
	LEASE_HELD,      /* ours, trusted until trust */
	LEASE_EXPIRED,   /* was ours: trust passed; given back once gone */
};

/* The lease of one instance of a cluster job. */
struct lease_slot {
	struct inst *in;
	enum lease_st st;
	int want;       /* asked for (the claim taken), not released since */
	int64_t epoch;  /* HELD, EXPIRED: the fencing token */
	uint64_t trust; /* HELD: CLOCK_BOOTTIME usec */
	char *holder;   /* not ours: who held it at the last answer */
	int64_t ms_left;
	uint64_t holder_until; /* not ours: when its lease could expire */
	int64_t slot;          /* periodic: the slot won, bidding for it */
	int64_t catch_up;      /* periodic: a slot to try once connected */
	int64_t hold_seq;      /* the last cluster-wide stop/start known */
	int hold_pending;      /* ours is on its way: notices wait */
	char run_id[17];       /* the run on record in vigil.run */
	int64_t run_row;       /* its row, 0: not known (yet) */
	uint64_t key;          /* its record in the keeper */
	pid_t pgid; /* the run's group while it runs, for the keeper */
	sd_event_source *stop;  /* trust - stop time: the fence stops it */
	sd_event_source *kill;  /* trust: SIGKILL */
	sd_event_source *retry; /* a standby's next bid */
	LIST_ENTRY(lease_slot) entry;
};

/* A lease to give back (its run is gone), until the database says so. */
struct release {
	int64_t job_id;
	int instance;
	int64_t epoch;
	int sent;
	TAILQ_ENTRY(release) entry;
};

static struct {
	const struct conf_cluster *cf;
	struct lease_timing t;
	struct pgconn *lease; /* leases, the node row, LISTEN */
	struct pgconn *work;  /* status writes and reads */
	int schema_done;      /* migrated once by this vigild */
	sd_event_source *renew;
	int renewing;
	unsigned int renew_fails; /* in a row */
	int seeding, seed_again;
	char boot_id[64];
	long long incarnation;
	char ttl_ms[32];
	LIST_HEAD(, lease_slot) slots;
	TAILQ_HEAD(, release) releases;
	void (*shutdown_done)(void);
	sd_event_source *shutdown_timer;
	uint64_t next_key;
} cl;

static void cluster_acquire(struct lease_slot *);
static void cluster_slot_run(struct lease_slot *);
static void cluster_slot_skipped(struct lease_slot *, const char *);
static void cluster_seed(void);
static void cluster_releases_send(void);

/* Wakes the clients waiting on an instance (vigild.c: waiters.c's). */
void (*cluster_waiters)(struct inst *);

int
cluster_enabled(void)
{
	return (cl.cf != NULL);
}

/* The slot of a cluster instance, made on first use. */
static struct lease_slot *
cluster_slot(struct inst *in)
{
	struct lease_slot *s = in->lease;

	if (s != NULL)
		return (s);
	s = xcalloc(1, sizeof(*s));
	s->in = in;
	s->ms_left = -1;
	s->key = ++cl.next_key;
	LIST_INSERT_HEAD(&cl.slots, s, entry);
	in->lease = s;
	return (s);
}

/* The slot of (job id, instance), or NULL. */
static struct lease_slot *
cluster_find(int64_t job_id, int instance)
{
	struct lease_slot *s;

	LIST_FOREACH(s, &cl.slots, entry)
		if (s->in->job->cluster_id == job_id &&
		    s->in->index == instance)
			return (s);
	return (NULL);
}

/* The instance of (job id, instance) here, slot or not, or NULL. */
static struct inst *
cluster_inst_find(int64_t job_id, int instance)
{
	struct job *j;

	RB_FOREACH(j, job_tree, &vigild.jobs)
		if (j->cluster_id == job_id && j->spec->cluster &&
		    instance >= 0 && instance < j->ninsts && !j->retiring)
			return (j->insts[instance]);
	return (NULL);
}

/*
 * The operator stopped (held) or started the instance on some node: it
 * is so here too.  by: who and where, for the reason.
 */
static void
cluster_hold_apply(struct inst *in, int held, const char *by)
{
	long uid = -1;

	if (held && !in->held) {
		log_info("%s: stopped cluster-wide%s%s", in->label,
		    by != NULL ? " by " : "", by != NULL ? by : "");
		if (by == NULL || sscanf(by, "uid %ld", &uid) != 1)
			uid = -1;
		/* This node's own record of the stop, as if asked here. */
		state_intent(in, 1, 0, uid);
		in->held = 1;
		in->by_hand = 0;
		inst_stop(in);
		inst_reason(in, "stopped cluster-wide%s%s",
		    by != NULL ? " by " : "", by != NULL ? by : "");
	} else if (!held && in->held) {
		log_info("%s: started cluster-wide%s%s", in->label,
		    by != NULL ? " by " : "", by != NULL ? by : "");
		inst_start(in);
	}
}

/* Kill whatever is left of the instance's run, now. */
static void
cluster_kill_run(struct inst *in)
{
	pid_t pgid = in->run.pgid != 0 ? in->run.pgid : in->run.pid;

	if (in->cg_fd != -1)
		track_signal(in, SIGKILL);
	if (pgid > 1)
		(void)proc_group_signal(pgid, SIGKILL);
	if (in->run.pid > 1)
		(void)kill(in->run.pid, SIGKILL);
}

/* Is a run of the instance there? */
static int
cluster_has_run(const struct inst *in)
{
	return (in->run.pid != 0 || in->life.run != LIFE_RUN_NONE);
}

static void
cluster_timers_off(struct lease_slot *s)
{
	if (s->stop != NULL)
		(void)sd_event_source_set_enabled(s->stop, SD_EVENT_OFF);
	if (s->kill != NULL)
		(void)sd_event_source_set_enabled(s->kill, SD_EVENT_OFF);
}

/*
 * The keeper's record of the run: killed at trust unless renewed (with
 * the run's cgroup at its spawn: cluster_keeper_spawned).
 */
static void
cluster_keeper_record(struct lease_slot *s, int cg_fd)
{
	uint64_t deadline;

	if (s->pgid <= 1)
		return;
	deadline = cl.cf->on_db_loss == CONF_DB_LOSS_KEEP ? 0 : s->trust;
	if (s->st != LEASE_HELD)
		deadline = 1; /* not ours any more: now */
	keeper_set(s->key, s->pgid, deadline, cg_fd);
}

static void
cluster_keeper_update(struct lease_slot *s)
{
	cluster_keeper_record(s, -1);
}

/* A new keeper: every run's record again. */
static void
cluster_keeper_resend(void)
{
	struct lease_slot *s;

	LIST_FOREACH(s, &cl.slots, entry)
		cluster_keeper_record(s, s->in->cg_fd);
}

/* Is the lease s held and trusted for a whole stop time of its run? */
static int
cluster_trusted(const struct lease_slot *s)
{
	uint64_t stop;

	if (s == NULL || s->st != LEASE_HELD)
		return (0);
	if (cl.cf->on_db_loss == CONF_DB_LOSS_KEEP)
		return (1);
	stop = inst_kind_stop_time(s->in->job->spec);
	return (pgconn_now() < lease_stop_at(s->trust, stop));
}

/* ---- the fence ---- */

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

static void
cluster_timer_at(sd_event_source **src, uint64_t at, sd_event_time_handler_t fn,
    struct lease_slot *s)
{
	int r;

	if (*src != NULL) {
		(void)sd_event_source_set_time(*src, at);
		(void)sd_event_source_set_enabled(*src, SD_EVENT_ONESHOT);
		return;
	}
	r = sd_event_add_time(
	    vigild.event, src, CLOCK_BOOTTIME, at, 1000, fn, s);
	if (r < 0)
		fatalx("%s: sd_event_add_time: %s", __func__, strerror(-r));
}

/* A lease answered (acquired or renewed) at sent: trusted anew. */
static void
cluster_trust(struct lease_slot *s, uint64_t sent)
{
	uint64_t stop = inst_kind_stop_time(s->in->job->spec);

	s->trust = lease_trust(&cl.t, sent);
	if (cl.cf->on_db_loss == CONF_DB_LOSS_KEEP)
		cluster_timers_off(s);
	else {
		cluster_timer_at(&s->stop, lease_stop_at(s->trust, stop),
		    cluster_fence_stop, s);
		cluster_timer_at(&s->kill, s->trust, cluster_fence_kill, s);
	}
	cluster_keeper_update(s);
}

/* Someone else holds the lease now: the run goes at once. */
static void
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

/* ---- acquire ---- */

/* Why a standby waits, in its reason. */
static void
cluster_waiting(struct lease_slot *s, const char *why)
{
	char buf[32];

	if (why != NULL)
		inst_reason(s->in, "waiting for cluster lease: %s", why);
	else if (s->holder != NULL && s->ms_left >= 0)
		inst_reason(s->in,
		    "waiting for cluster lease (held by %s, %s left)",
		    s->holder,
		    duration_format(
		        (uint64_t)s->ms_left * 1000, buf, sizeof(buf)));
	else if (s->holder != NULL)
		inst_reason(
		    s->in, "waiting for cluster lease (held by %s)", s->holder);
	else
		inst_reason(s->in, "waiting for cluster lease");
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
	cluster_timer_at(&s->retry, pgconn_now() + usec, cluster_retry_cb, s);
}

/* ---- periodic jobs: one run per slot cluster-wide ---- */

/* The slot is over for this node: the next one is armed. */
static void
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
	s->want = 0;
	inst_feed(in, LIFE_EV_SLOT);
	/* Not launched (stopped meanwhile): the lease goes back. */
	if (!s->want)
		claim_cluster.release(in);
	else if (in->per.src == NULL)
		cluster_slot_next(s);
}

/* The slot is ours but the last run still holds the lease somewhere. */
static void
cluster_slot_skipped(struct lease_slot *s, const char *holder)
{
	struct inst *in = s->in;
	char when[64], id[32], idx[16];
	const char *p[2];

	log_info("%s: slot of %s skipped: the last run is still going on %s",
	    in->label, timefmt_wall(s->slot, when, sizeof(when)),
	    holder != NULL ? holder : "another node");
	joblog_mark(in, "slot skipped: still running on %s",
	    holder != NULL ? holder : "another node");
	state_run_skipped(in, s->slot);
	in->per.skipped++;
	snprintf(id, sizeof(id), "%" PRId64, in->job->cluster_id);
	snprintf(idx, sizeof(idx), "%d", in->index);
	p[0] = id;
	p[1] = idx;
	pgconn_query(cl.work, 0, pg_periodic_skipped, 2, p, NULL, NULL);
	cluster_slot_next(s);
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
	if (!pgconn_is_ready(cl.lease) || in->job->cluster_id == 0) {
		if (!vigild.started) {
			/* catch_up at start-up: once connected */
			s->catch_up = slot;
			return;
		}
		log_warnx("%s: slot not fired: %s", in->label,
		    pgconn_why(cl.lease) != NULL ? pgconn_why(cl.lease) :
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
	snprintf(
	    tol, sizeof(tol), "%llu", (unsigned long long)(cl.t.margin / 1000));
	p[0] = id;
	p[1] = idx;
	p[2] = at;
	p[3] = cl.cf->node_name;
	p[4] = tol;
	a = xcalloc(1, sizeof(*a));
	a->job = xstrdup(in->job->name);
	a->instance = in->index;
	a->slot = slot;
	pgconn_query(cl.lease, 0, pg_periodic_fire, 5, p, cluster_fired, a);
}

/*
 * A statement for a command (vigilctl cluster) on the work connection:
 * 0, or -1 with cause when cluster mode is off or the database is out of
 * reach.
 */
int
cluster_ask(const char *sql, pgconn_done_fn done, void *arg, char **cause)
{
	if (cl.cf == NULL) {
		*cause = xstrdup("cluster mode is off (no cluster section in "
		                 "vigil.conf)");
		return (-1);
	}
	if (!pgconn_is_ready(cl.work)) {
		xasprintf(cause, "the database is out of reach: %s",
		    pgconn_why(cl.work) != NULL ? pgconn_why(cl.work) :
		                                  "connecting");
		return (-1);
	}
	pgconn_query(cl.work, 0, sql, 0, NULL, done, arg);
	return (0);
}

/* This node's name, or NULL. */
const char *
cluster_node_name(void)
{
	return (cl.cf != NULL ? cl.cf->node_name : NULL);
}

/*
 * Is in a cluster instance that stands by: it waits for a lease another
 * node holds and runs (a start of it is settled)?
 */
int
cluster_standby(const struct inst *in)
{
	const struct lease_slot *s = in->lease;

	return (s != NULL && s->want && s->st == LEASE_NONE &&
	    s->holder != NULL && in->life.phase == LIFE_LEASE);
}

/* Is in a periodic job whose slots the cluster decides? */
int
cluster_periodic(const struct inst *in)
{
	return (cl.cf != NULL && in->job->spec->cluster &&
	    in->job->spec->kind == CONF_KIND_PERIODIC);
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
	TAILQ_INSERT_TAIL(&cl.releases, r, entry);
	cluster_releases_send();
}

/* The bid won (acquired at sent, epoch): the run may start. */
static void
cluster_won(struct lease_slot *s, int64_t epoch, uint64_t sent)
{
	s->st = LEASE_HELD;
	s->epoch = epoch;
	free(s->holder);
	s->holder = NULL;
	s->ms_left = -1;
	cluster_trust(s, sent);
	log_info("%s: cluster lease acquired: epoch %" PRId64, s->in->label,
	    s->epoch);
	if (s->slot != 0)
		cluster_slot_run(s);
	else if (s->in->life.phase == LIFE_LEASE)
		inst_feed(s->in, LIFE_EV_RECHECK);
}

/* The bid lost (the answer's row res): wait, or stop if held. */
static void
cluster_lost_bid(struct lease_slot *s, const struct pgres *res)
{
	const char *holder = pgres_value(res, 0, 1);
	int held = pgres_value(res, 0, 4) != NULL &&
	    strcmp(pgres_value(res, 0, 4), "t") == 0;

	if (s->slot != 0) {
		cluster_slot_skipped(s, holder);
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
	cluster_retry_in(s,
	    lease_retry_in(s->ms_left, pgres_int(res, 0, 3, -1), cl.t.renew));
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
static void
cluster_acquire(struct lease_slot *s)
{
	struct inst *in = s->in;
	struct acquire_arg *a;
	const char *p[4];
	char id[32], idx[16];

	if (s->st != LEASE_NONE && s->st != LEASE_EXPIRED)
		return;
	if (!pgconn_is_ready(cl.lease)) {
		cluster_waiting(s,
		    pgconn_why(cl.lease) != NULL ?
		        pgconn_why(cl.lease) :
		        "connecting to the database");
		return;
	}
	if (in->job->cluster_id == 0) {
		cluster_waiting(s, "job not yet registered in the database");
		cluster_seed();
		return;
	}
	if (s->retry != NULL)
		(void)sd_event_source_set_enabled(s->retry, SD_EVENT_OFF);
	snprintf(id, sizeof(id), "%" PRId64, in->job->cluster_id);
	snprintf(idx, sizeof(idx), "%d", in->index);
	p[0] = id;
	p[1] = idx;
	p[2] = cl.cf->node_name;
	p[3] = cl.ttl_ms;
	a = xcalloc(1, sizeof(*a));
	a->job = xstrdup(in->job->name);
	a->instance = in->index;
	a->job_id = in->job->cluster_id;
	s->st = LEASE_ACQUIRING;
	log_debug("%s: bidding for the cluster lease", in->label);
	if (in->reason == NULL)
		cluster_waiting(s, NULL);
	pgconn_query(cl.lease, 0, pg_lease_acquire, 4, p, cluster_acquired, a);
}

/* Bid for every lease a start waits for (no run of it is left). */
static void
cluster_acquire_all(void)
{
	struct lease_slot *s;

	LIST_FOREACH(s, &cl.slots, entry)
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

	if (res == NULL) {
		r->sent = 0; /* again once the connection is back */
		return;
	}
	TAILQ_REMOVE(&cl.releases, r, entry);
	free(r);
	if (TAILQ_EMPTY(&cl.releases) && cl.shutdown_done != NULL &&
	    !cl.renewing)
		cluster_shutdown(cl.shutdown_done);
}

static void
cluster_releases_send(void)
{
	struct release *r;
	const char *p[4];
	char id[32], idx[16], ep[32];

	if (cl.lease == NULL || !pgconn_is_ready(cl.lease))
		return;
	TAILQ_FOREACH(r, &cl.releases, entry) {
		if (r->sent)
			continue;
		snprintf(id, sizeof(id), "%" PRId64, r->job_id);
		snprintf(idx, sizeof(idx), "%d", r->instance);
		snprintf(ep, sizeof(ep), "%" PRId64, r->epoch);
		p[0] = id;
		p[1] = idx;
		p[2] = cl.cf->node_name;
		p[3] = ep;
		r->sent = 1;
		pgconn_query(
		    cl.lease, 0, pg_lease_release, 4, p, cluster_released, r);
	}
}

/* ---- renew ---- */

/* What a renew sent, to read its answer against. */
struct renew_arg {
	size_t n;
	int64_t *job_ids;
	int64_t *insts;
	int64_t *epochs;
	int64_t *pids;
};

static void
cluster_renewed(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct renew_arg *a = arg;
	struct lease_slot *s;
	char *seen = NULL, buf[32];
	const char *kind;
	int row, nrows;
	size_t i;

	cl.renewing = 0;
	if (res == NULL) {
		if (cl.renew_fails++ == 0)
			log_warnx("cluster: renew failed: %s; leases are "
			          "trusted for %s more at most",
			    err,
			    duration_format(
			        cl.t.ttl - cl.t.margin, buf, sizeof(buf)));
		goto out;
	}
	if (cl.renew_fails > 0)
		log_info(
		    "cluster: renewed again after %u failures", cl.renew_fails);
	cl.renew_fails = 0;
	log_debug("cluster: renewed %zu leases in %" PRIu64 " us", a->n,
	    pgconn_now() - sent);
	seen = xcalloc(a->n + 1, 1);
	nrows = pgres_ntuples(res);
	for (row = 0; row < nrows; row++) {
		kind = pgres_value(res, row, 0);
		if (kind == NULL)
			continue;
		if (strcmp(kind, "n") == 0) {
			if (pgres_int(res, row, 1, 0) == 0)
				log_warnx("cluster: the node row of %s is "
				          "gone",
				    cl.cf->node_name);
			continue;
		}
		for (i = 0; i < a->n; i++)
			if (a->job_ids[i] == pgres_int(res, row, 1, -1) &&
			    a->insts[i] == pgres_int(res, row, 2, -1))
				seen[i] = pgres_value(res, row, 3) != NULL &&
				        strcmp(pgres_value(res, row, 3), "t") ==
				            0 ?
				    2 :
				    1;
	}
	for (i = 0; i < a->n; i++) {
		s = cluster_find(a->job_ids[i], (int)a->insts[i]);
		if (s == NULL || s->st != LEASE_HELD ||
		    s->epoch != a->epochs[i])
			continue;
		if (!seen[i]) {
			cluster_lost(s);
			continue;
		}
		cluster_trust(s, sent);
		if (seen[i] == 2 && !s->hold_pending) /* notice missed */
			cluster_hold_apply(s->in, 1, NULL);
	}
out:
	free(seen);
	free(a->job_ids);
	free(a->insts);
	free(a->epochs);
	free(a->pids);
	free(a);
	if (cl.shutdown_done != NULL && TAILQ_EMPTY(&cl.releases))
		cluster_shutdown(cl.shutdown_done);
}

/* Renew the node row and every lease held, in one statement. */
static void
cluster_renew_now(void)
{
	struct renew_arg *a;
	struct lease_slot *s;
	char *arr[4];
	const char *p[6];
	size_t n = 0, i;

	if (cl.renewing || !pgconn_is_ready(cl.lease))
		return;
	LIST_FOREACH(s, &cl.slots, entry)
		n += s->st == LEASE_HELD;
	a = xcalloc(1, sizeof(*a));
	a->job_ids = xcalloc(n + 1, sizeof(int64_t));
	a->insts = xcalloc(n + 1, sizeof(int64_t));
	a->epochs = xcalloc(n + 1, sizeof(int64_t));
	a->pids = xcalloc(n + 1, sizeof(int64_t));
	LIST_FOREACH(s, &cl.slots, entry) {
		if (s->st != LEASE_HELD)
			continue;
		a->job_ids[a->n] = s->in->job->cluster_id;
		a->insts[a->n] = s->in->index;
		a->pids[a->n] = s->in->run.pid > 0 ? s->in->run.pid : 0;
		a->epochs[a->n++] = s->epoch;
	}
	arr[0] = pg_array_int(a->job_ids, a->n);
	arr[1] = pg_array_int(a->insts, a->n);
	arr[2] = pg_array_int(a->epochs, a->n);
	arr[3] = pg_array_int(a->pids, a->n);
	p[0] = cl.cf->node_name;
	p[1] = arr[0];
	p[2] = arr[1];
	p[3] = arr[2];
	p[4] = arr[3];
	p[5] = cl.ttl_ms;
	cl.renewing = 1;
	pgconn_query(
	    cl.lease, PGQ_FRONT, pg_lease_renew_all, 6, p, cluster_renewed, a);
	for (i = 0; i < 4; i++)
		free(arr[i]);
}

static int
cluster_renew_tick(sd_event_source *src, uint64_t usec, void *arg)
{
	uint64_t next = usec + cl.t.renew, now = pgconn_now();

	/* After a pause (SIGSTOP, a suspend): on from now, no burst. */
	if (next <= now)
		next = now + cl.t.renew;
	(void)sd_event_source_set_time(src, next);
	(void)sd_event_source_set_enabled(src, SD_EVENT_ON);
	cluster_renew_now();
	return (0);
}

/* ---- jobs ---- */

/* A short hash of a job file, to see drift between nodes. */
static void
cluster_spec_hash(const struct job_spec *spec, char *buf, size_t len)
{
	uint64_t h = 14695981039346656037ULL;
	unsigned char b[4096];
	ssize_t n, k;
	int fd;

	if ((fd = open(spec->path, O_RDONLY | O_CLOEXEC)) != -1) {
		while ((n = read(fd, b, sizeof(b))) > 0)
			for (k = 0; k < n; k++) {
				h ^= b[k];
				h *= 1099511628211ULL;
			}
		close(fd);
	}
	snprintf(buf, len, "%016" PRIx64, h);
}

static const char *
cluster_kind_name(enum conf_kind k)
{
	return (k == CONF_KIND_PERIODIC ? "periodic" :
	        k == CONF_KIND_QUEUE    ? "queue" :
	                                  "service");
}

/*
 * The instances of j the operator stopped cluster-wide ("{0,2}", or NULL
 * for none): held here too; the others are not, whatever this node's own
 * record said.
 */
static void
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
		if (held[i])
			cluster_hold_apply(j->insts[i], 1, NULL);
		else if (j->insts[i]->held && j->spec->autostart)
			cluster_hold_apply(j->insts[i], 0, NULL);
	}
	free(held);
}

/* Slots missed while this node was down, now that it is connected. */
static void
cluster_catch_up(void)
{
	struct lease_slot *s;
	int64_t slot;

	LIST_FOREACH(s, &cl.slots, entry) {
		if (s->catch_up == 0 || s->in->job->cluster_id == 0)
			continue;
		slot = s->catch_up;
		s->catch_up = 0;
		if (s->in->life.want)
			cluster_slot_fired(s->in, slot);
	}
}

static void
cluster_seeded(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct job *j;
	const char *name;
	int row, nrows;

	(void)arg;
	cl.seeding = 0;
	if (res == NULL) {
		log_warnx("cluster: registering the jobs: %s", err);
		return; /* again at the next connection or bid */
	}
	nrows = pgres_ntuples(res);
	for (row = 0; row < nrows; row++) {
		if ((name = pgres_value(res, row, 1)) == NULL ||
		    (j = job_find(name)) == NULL || !j->spec->cluster)
			continue;
		j->cluster_id = pgres_int(res, row, 0, 0);
		cluster_holds_apply(j, pgres_value(res, row, 2));
	}
	if (cl.seed_again) {
		cl.seed_again = 0;
		cluster_seed();
	}
	cluster_acquire_all();
	cluster_catch_up();
}

static void
cluster_seed_done(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	if (res == NULL) {
		log_warnx("cluster: registering the jobs: %s", err);
		cl.seeding = 0;
	}
}

/*
 * Register the node's cluster jobs: the rows of the job names (no setup
 * step: INSERT ... ON CONFLICT DO NOTHING), the node's files with their
 * hashes, and the ids.
 */
static void
cluster_seed(void)
{
	struct job *j;
	const char **names, **kinds, **hashes, *p[3];
	char(*hbuf)[24];
	char *an, *ak, *ah;
	size_t n = 0, i = 0;

	if (cl.seeding) {
		cl.seed_again = 1;
		return;
	}
	if (cl.lease == NULL || !pgconn_is_ready(cl.lease))
		return;
	RB_FOREACH(j, job_tree, &vigild.jobs)
		n += j->spec->cluster != 0;
	names = xcalloc(n + 1, sizeof(*names));
	kinds = xcalloc(n + 1, sizeof(*kinds));
	hashes = xcalloc(n + 1, sizeof(*hashes));
	hbuf = xcalloc(n + 1, sizeof(*hbuf));
	RB_FOREACH(j, job_tree, &vigild.jobs) {
		if (!j->spec->cluster)
			continue;
		names[i] = j->name;
		kinds[i] = cluster_kind_name(j->spec->kind);
		cluster_spec_hash(j->spec, hbuf[i], sizeof(hbuf[i]));
		hashes[i] = hbuf[i];
		i++;
	}
	an = pg_array_text(names, n);
	ak = pg_array_text(kinds, n);
	ah = pg_array_text(hashes, n);
	p[0] = an;
	p[1] = ak;
	pgconn_query(cl.lease, 0, pg_job_seed, 2, p, cluster_seed_done, NULL);
	p[0] = cl.cf->node_name;
	p[1] = an;
	p[2] = ah;
	pgconn_query(cl.lease, 0, pg_node_jobs, 3, p, cluster_seeded, NULL);
	cl.seeding = 1;
	free(an);
	free(ak);
	free(ah);
	free(names);
	free(kinds);
	free(hashes);
	free(hbuf);
}

/* Jobs came or went (a reload): register them. */
void
cluster_jobs_changed(void)
{
	if (cl.cf != NULL)
		cluster_seed();
}

/* ---- the connections ---- */

/* A set-up step failed: the connection goes, and is made again later. */
static void
cluster_setup_failed(struct pgconn *c, const char *what, const char *err)
{
	char *m;

	xasprintf(&m, "%s: %s", what, err);
	pgconn_drop(c, m);
	free(m);
}

static void
cluster_session_done(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct pgconn *c = arg;

	if (res == NULL)
		cluster_setup_failed(c, "session set-up", err);
	else if (c == cl.work)
		pgconn_set_ready(c);
}

static void
cluster_schema_done(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	long long v;

	if (res == NULL) {
		cluster_setup_failed(cl.lease, "creating schema vigil", err);
		return;
	}
	v = pgres_int(res, 0, 0, 0);
	if (v > PG_SCHEMA_VERSION)
		log_warnx("cluster: schema vigil is at version %lld, newer "
		          "than this vigild's %d",
		    v, PG_SCHEMA_VERSION);
	cl.schema_done = 1;
}

static void
cluster_registered(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	char *m;

	if (res == NULL) {
		cluster_setup_failed(cl.lease, "registering the node", err);
		return;
	}
	if (pgres_ntuples(res) == 0) {
		xasprintf(&m,
		    "node_name \"%s\" is in use by a live vigild on another "
		    "host",
		    cl.cf->node_name);
		cluster_setup_failed(cl.lease, "registering the node", m);
		free(m);
	}
}

static void
cluster_guarded(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	char buf[32];

	if (res == NULL) {
		cluster_setup_failed(cl.lease, "timeline check", err);
		return;
	}
	if (pgres_ntuples(res) > 0 && pgres_int(res, 0, 1, 0) > 0)
		log_warnx("cluster: the database is on a new timeline (%lld): "
		          "a failover; no lease changes hands for %s",
		    pgres_int(res, 0, 0, 0),
		    duration_format((uint64_t)pgres_int(res, 0, 1, 0) * 1000,
		        buf, sizeof(buf)));
}

/* The last step of the lease connection's set-up: ready. */
static void
cluster_listening(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct release *r;

	if (res == NULL) {
		cluster_setup_failed(cl.lease, "LISTEN", err);
		return;
	}
	pgconn_set_ready(cl.lease);
	TAILQ_FOREACH(r, &cl.releases, entry)
		r->sent = 0;
	cluster_renew_now();
	cluster_releases_send();
	cluster_seed();
	cluster_acquire_all();
}

/* The session's settings, then (lease) the schema, the node, LISTEN. */
static void
cluster_connected(void *arg)
{
	struct pgconn *c = arg;
	char *sql, boot[80], pid[16], inc[32];
	const char *p[6];
	unsigned long long ms = cl.t.query_timeout / 1000;

	sql = pg_session_sql(ms);
	pgconn_query(
	    c, PGQ_SETUP | PGQ_SIMPLE, sql, 0, NULL, cluster_session_done, c);
	free(sql);
	if (c != cl.lease)
		return;
	if (!cl.schema_done)
		pgconn_query(c, PGQ_SETUP | PGQ_SIMPLE, pg_schema, 0, NULL,
		    cluster_schema_done, NULL);
	snprintf(boot, sizeof(boot), "%s", cl.boot_id);
	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	snprintf(inc, sizeof(inc), "%lld", cl.incarnation);
	p[0] = cl.cf->node_name;
	p[1] = inc;
	p[2] = boot;
	p[3] = pid;
	p[4] = PACKAGE_VERSION;
	p[5] = cl.ttl_ms;
	pgconn_query(
	    c, PGQ_SETUP, pg_node_register, 6, p, cluster_registered, NULL);
	p[0] = cl.ttl_ms;
	pgconn_query(
	    c, PGQ_SETUP, pg_failover_guard, 1, p, cluster_guarded, NULL);
	pgconn_query(c, PGQ_SETUP | PGQ_SIMPLE, pg_listen, 0, NULL,
	    cluster_listening, NULL);
}

/* A notification: a lease given back ("lease JOB_ID INSTANCE"). */
static void
cluster_notify(void *arg, const char *channel, const char *payload)
{
	struct lease_slot *s;
	long long job_id;
	int instance;

	struct inst *in;
	long long seq;
	int held, off = 0;

	if (sscanf(payload, "lease %lld %d", &job_id, &instance) == 2) {
		s = cluster_find(job_id, instance);
		if (s != NULL && s->want && s->st == LEASE_NONE &&
		    s->in->life.phase == LIFE_LEASE)
			cluster_acquire(s);
	} else if (sscanf(payload, "held %lld %d %d %lld %n", &job_id,
	               &instance, &held, &seq, &off) == 4 &&
	    off > 0 && (in = cluster_inst_find(job_id, instance)) != NULL) {
		s = cluster_slot(in);
		/* Older than what this node knows, or than its own: not news. */
		if (s->hold_pending || seq <= s->hold_seq)
			return;
		s->hold_seq = seq;
		cluster_hold_apply(in, held, payload + off);
	}
}

/* The lease connection is down: bids wait; held leases stay trusted. */
static void
cluster_down(void *arg, const char *why)
{
	struct lease_slot *s;

	cl.seeding = 0;
	LIST_FOREACH(s, &cl.slots, entry)
		if (s->want && s->st == LEASE_NONE &&
		    s->in->life.phase == LIFE_LEASE)
			cluster_waiting(s, why);
}

/* The cluster's timings and the node's identity. */
static void
cluster_identity(void)
{
	int fd;
	ssize_t n;
	uint64_t r;

	memset(cl.boot_id, 0, sizeof(cl.boot_id));
	if ((fd = open("/proc/sys/kernel/random/boot_id",
	         O_RDONLY | O_CLOEXEC)) != -1) {
		n = read(fd, cl.boot_id, sizeof(cl.boot_id) - 1);
		if (n > 0 && cl.boot_id[n - 1] == '\n')
			cl.boot_id[n - 1] = '\0';
		close(fd);
	}
	if (cl.boot_id[0] == '\0')
		strlcpy(cl.boot_id, "unknown", sizeof(cl.boot_id));
	arc4random_buf(&r, sizeof(r));
	cl.incarnation = (long long)(r >> 1);
}

/*
 * At start-up, before the jobs start: libpq, the keeper, the two
 * connections (they connect in the background; cluster jobs wait for
 * their leases, local jobs start at once).  0, or -1 with cause.
 */
int
cluster_open(char **cause)
{
	struct pgconn_cfg cfg;
	const struct conf_cluster *cf = &vigild.conf->cluster;

	if (!cf->enabled)
		return (0);
	if (pgconn_load(cause) == -1 || pgconn_check(cf->conninfo, cause) == -1)
		return (-1);
	cl.cf = cf;
	cl.t.ttl = cf->lease_ttl;
	cl.t.renew = cf->renew_interval;
	cl.t.query_timeout = cf->query_timeout;
	cl.t.margin = cf->fence_margin;
	snprintf(cl.ttl_ms, sizeof(cl.ttl_ms), "%llu",
	    (unsigned long long)(cf->lease_ttl / 1000));
	LIST_INIT(&cl.slots);
	TAILQ_INIT(&cl.releases);
	cluster_identity();
	if (keeper_start(cluster_keeper_resend) == -1) {
		xasprintf(cause, "cluster: cannot start the fence keeper: %s",
		    strerror(errno));
		return (-1);
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.conninfo = cf->conninfo;
	cfg.connect_timeout = cf->connect_timeout;
	cfg.query_timeout = cf->query_timeout;
	cfg.retry_max = cf->renew_interval;
	cfg.connected = cluster_connected;
	cfg.notify = cluster_notify;
	cfg.down = cluster_down;
	cl.lease = pgconn_new("lease", &cfg);
	cfg.notify = NULL;
	cfg.down = NULL;
	cl.work = pgconn_new("work", &cfg);
	/* pgconn_new connects at once; the callbacks know which one. */
	if (sd_event_add_time_relative(vigild.event, &cl.renew, CLOCK_BOOTTIME,
	        cl.t.renew, 1000, cluster_renew_tick, NULL) < 0)
		fatalx("%s: sd_event_add_time_relative", __func__);
	(void)sd_event_source_set_enabled(cl.renew, SD_EVENT_ON);
	log_info("cluster: node %s, lease_ttl %llums, renew every %llums",
	    cf->node_name, (unsigned long long)(cf->lease_ttl / 1000),
	    (unsigned long long)(cf->renew_interval / 1000));
	return (0);
}

static int
cluster_shutdown_timeout(sd_event_source *src, uint64_t usec, void *arg)
{
	void (*done)(void) = cl.shutdown_done;

	log_warnx("cluster: %zu lease%s not given back in time (they expire "
	          "by themselves)",
	    pgconn_pending(cl.lease), pgconn_pending(cl.lease) == 1 ? "" : "s");
	cl.shutdown_done = NULL;
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
	if (cl.cf == NULL || (TAILQ_EMPTY(&cl.releases) && !cl.renewing) ||
	    !pgconn_is_ready(cl.lease)) {
		cl.shutdown_done = NULL;
		cl.shutdown_timer =
		    sd_event_source_disable_unref(cl.shutdown_timer);
		done();
		return;
	}
	cl.shutdown_done = done;
	if (cl.shutdown_timer == NULL &&
	    sd_event_add_time_relative(vigild.event, &cl.shutdown_timer,
	        CLOCK_BOOTTIME, cl.t.query_timeout, 1000,
	        cluster_shutdown_timeout, NULL) < 0)
		fatalx("%s: sd_event_add_time_relative", __func__);
	cluster_releases_send();
}

void
cluster_close(void)
{
	struct release *r;

	if (cl.cf == NULL)
		return;
	keeper_stop();
	cl.renew = sd_event_source_disable_unref(cl.renew);
	cl.shutdown_timer = sd_event_source_disable_unref(cl.shutdown_timer);
	pgconn_free(cl.lease);
	pgconn_free(cl.work);
	cl.lease = cl.work = NULL;
	while ((r = TAILQ_FIRST(&cl.releases)) != NULL) {
		TAILQ_REMOVE(&cl.releases, r, entry);
		free(r);
	}
	pgconn_unload();
	cl.cf = NULL;
}

/* An instance goes away: its slot with it (its lease was given back). */
void
cluster_inst_free(struct inst *in)
{
	struct lease_slot *s = in->lease;

	if (s == NULL)
		return;
	if (s->st == LEASE_HELD || s->st == LEASE_EXPIRED)
		claim_cluster.release(in);
	LIST_REMOVE(s, entry);
	s->stop = sd_event_source_disable_unref(s->stop);
	s->kill = sd_event_source_disable_unref(s->kill);
	s->retry = sd_event_source_disable_unref(s->retry);
	free(s->holder);
	free(s);
	in->lease = NULL;
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

	if (j != NULL && a->instance < j->ninsts)
		s = j->insts[a->instance]->lease;
	if (s != NULL && --s->hold_pending == 0 && res != NULL &&
	    (seq = pgres_int(res, 0, 0, 0)) > s->hold_seq)
		s->hold_seq = seq;
	if (res == NULL)
		log_warnx("%s@%d: the cluster-wide stop or start was not "
		          "recorded (%s): it holds on this node only",
		    a->job, a->instance, err);
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

	if (cl.cf == NULL || !in->job->spec->cluster)
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
	snprintf(id, sizeof(id), "%" PRId64, in->job->cluster_id);
	snprintf(idx, sizeof(idx), "%d", in->index);
	xasprintf(&by, "uid %ld on %s", uid, cl.cf->node_name);
	p[0] = id;
	p[1] = idx;
	p[2] = held ? "true" : "false";
	p[3] = by;
	pgconn_query(cl.lease, 0, pg_lease_hold, 4, p, cluster_held_done, a);
	free(by);
}

/*
 * What status shows of a cluster instance: the node that runs it (this
 * one, or the holder at the last bid), the fencing token when it is this
 * node's, how long the lease is trusted (ours) or could last (theirs).
 * 0, or -1 for an instance that is not a cluster one.
 */
int
cluster_view(const struct inst *in, struct cluster_view *v)
{
	const struct lease_slot *s = in->lease;
	uint64_t now = pgconn_now();

	memset(v, 0, sizeof(*v));
	v->expires_ms = -1;
	if (cl.cf == NULL || !in->job->spec->cluster)
		return (-1);
	if (s == NULL)
		return (0);
	if (s->st == LEASE_HELD) {
		v->node = cl.cf->node_name;
		v->epoch = s->epoch;
		v->expires_ms =
		    s->trust > now ? (int64_t)(s->trust - now) / 1000 : 0;
	} else if (s->holder != NULL && s->want) {
		v->node = s->holder;
		if (s->holder_until > now)
			v->expires_ms = (int64_t)(s->holder_until - now) / 1000;
	}
	return (0);
}

/* The child's environment: its fencing token and the node's name. */
void
cluster_env(struct inst *in, char **env, size_t n)
{
	size_t i;

	if (in->lease == NULL || in->lease->st != LEASE_HELD)
		return;
	for (i = 0; i + 2 < n && env[i] != NULL; i++)
		;
	if (i + 2 >= n)
		return;
	xasprintf(&env[i], "VIGIL_FENCING_TOKEN=%" PRId64, in->lease->epoch);
	xasprintf(&env[i + 1], "VIGIL_NODE=%s", cl.cf->node_name);
}

/*
 * A cluster job with a stop time the lease cannot cover (the rule of
 * lease_check), or without a cluster section: 0, or -1 with cause.
 */
int
cluster_job_check(const struct job_spec *spec, char **cause)
{
	const struct conf_cluster *cf = &vigild.conf->cluster;
	struct lease_timing t;

	if (!spec->cluster)
		return (0);
	if (!cf->enabled) {
		*cause = xstrdup("cluster = true, but vigil.conf has no "
		                 "cluster section");
		return (-1);
	}
	if (spec->kind == CONF_KIND_QUEUE) {
		*cause = xstrdup("cluster = true: queue jobs are not cluster "
		                 "jobs yet (services and periodic jobs are)");
		return (-1);
	}
	t.ttl = cf->lease_ttl;
	t.renew = cf->renew_interval;
	t.query_timeout = cf->query_timeout;
	t.margin = cf->fence_margin;
	return (lease_check(&t, inst_kind_stop_time(spec), cause));
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

/* What a run's row in vigil.run is for, until its id comes. */
struct run_arg {
	char *job;
	int instance;
	char run_id[17];
};

static void
cluster_run_begun(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct run_arg *a = arg;
	struct job *j = job_find(a->job);
	struct lease_slot *s;

	if (res != NULL && j != NULL && a->instance < j->ninsts &&
	    (s = j->insts[a->instance]->lease) != NULL &&
	    strcmp(s->run_id, a->run_id) == 0)
		s->run_row = pgres_int(res, 0, 0, 0);
	free(a->job);
	free(a);
}

/* A new run of a cluster instance: on record cluster-wide. */
static void
cluster_run_begin(struct lease_slot *s, pid_t pid)
{
	struct inst *in = s->in;
	struct run_arg *a;
	const char *p[6];
	char id[32], idx[16], ep[32], ps[16], keep[16];

	if (strcmp(s->run_id, in->run.id) == 0)
		return; /* the same run (a MAINPID= move) */
	strlcpy(s->run_id, in->run.id, sizeof(s->run_id));
	s->run_row = 0;
	if (!pgconn_is_ready(cl.work))
		return;
	snprintf(id, sizeof(id), "%" PRId64, in->job->cluster_id);
	snprintf(idx, sizeof(idx), "%d", in->index);
	snprintf(ep, sizeof(ep), "%" PRId64, s->epoch);
	snprintf(ps, sizeof(ps), "%ld", (long)pid);
	snprintf(keep, sizeof(keep), "%d", vigild.conf->history_keep);
	p[0] = id;
	p[1] = idx;
	p[2] = cl.cf->node_name;
	p[3] = ep;
	p[4] = ps;
	p[5] = keep;
	a = xcalloc(1, sizeof(*a));
	a->job = xstrdup(in->job->name);
	a->instance = in->index;
	strlcpy(a->run_id, in->run.id, sizeof(a->run_id));
	pgconn_query(cl.work, 0, pg_run_begin, 6, p, cluster_run_begun, a);
}

/* A cluster run ended (its wait status, and how it ended in words): on record. */
void
cluster_run_end(struct inst *in, int status, const char *what)
{
	struct lease_slot *s = in->lease;
	const char *p[4];
	char id[32], code[16], sig[16];

	if (s == NULL || s->run_row == 0 || !pgconn_is_ready(cl.work))
		return;
	snprintf(id, sizeof(id), "%" PRId64, s->run_row);
	snprintf(code, sizeof(code), "%d",
	    WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	snprintf(
	    sig, sizeof(sig), "%d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	p[0] = id;
	p[1] = WIFEXITED(status) ? code : NULL;
	p[2] = WIFSIGNALED(status) ? sig : NULL;
	p[3] = what;
	s->run_row = 0;
	pgconn_query(cl.work, 0, pg_run_end, 4, p, NULL, NULL);
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
	cluster_keeper_record(s, in->cg_fd);
	cluster_run_begin(s, h->pid);
	if (cl.work == NULL || !pgconn_is_ready(cl.work))
		return;
	snprintf(id, sizeof(id), "%" PRId64, in->job->cluster_id);
	snprintf(idx, sizeof(idx), "%d", in->index);
	snprintf(ep, sizeof(ep), "%" PRId64, s->epoch);
	snprintf(pid, sizeof(pid), "%ld", (long)h->pid);
	p[0] = id;
	p[1] = idx;
	p[2] = cl.cf->node_name;
	p[3] = ep;
	p[4] = pid;
	p[5] = "RUNNING";
	pgconn_query(cl.work, 0, pg_lease_state, 6, p, NULL, NULL);
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
	else
		log_info("%s: cluster lease given back: epoch %" PRId64,
		    in->label, s->epoch);
	s->st = LEASE_NONE;
	r = xcalloc(1, sizeof(*r));
	r->job_id = in->job->cluster_id;
	r->instance = in->index;
	r->epoch = s->epoch;
	TAILQ_INSERT_TAIL(&cl.releases, r, entry);
	cluster_releases_send();
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

const struct claim_ops claim_cluster = {
	.name = "cluster",
	.acquire = claim_cluster_acquire,
	.renew = claim_cluster_renew,
	.release = claim_cluster_release,
	.holder = claim_cluster_holder,
	.held_elsewhere = claim_cluster_held_elsewhere,
	.trusted = claim_cluster_trusted,
};

#else /* !HAVE_LIBPQ */

/* Built without libpq: vigil.conf refuses a cluster section. */

int
cluster_enabled(void)
{
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
cluster_shutdown(void (*done)(void))
{
	done();
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
cluster_jobs_changed(void)
{
}

void
cluster_env(struct inst *in, char **env, size_t n)
{
	(void)in;
	(void)env;
	(void)n;
}

void
cluster_inst_free(struct inst *in)
{
	(void)in;
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
cluster_slot_fired(struct inst *in, int64_t slot)
{
	(void)in;
	(void)slot;
}

void
cluster_run_end(struct inst *in, int status, const char *what)
{
	(void)in;
	(void)status;
	(void)what;
}

int
cluster_ask(const char *sql, pgconn_done_fn done, void *arg, char **cause)
{
	(void)sql;
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

const struct claim_ops claim_cluster = { .name = "cluster" };

#endif /* HAVE_LIBPQ */

/*
 * The cluster jobs of a loaded jobs.d that this vigild cannot run as such
 * are errors, named by file (status shows them BROKEN; a reload with one
 * changes nothing); they are taken out of jobs.
 */
void
cluster_jobs_check(struct conf_jobs *jobs, struct conf_errors *errs)
{
	char *cause = NULL;
	size_t i, k = 0;

	for (i = 0; i < jobs->n; i++) {
		if (cluster_job_check(jobs->specs[i], &cause) == 0) {
			jobs->specs[k++] = jobs->specs[i];
			continue;
		}
		conf_errors_add(
		    errs, "%s: cluster: %s", jobs->specs[i]->path, cause);
		free(cause);
		cause = NULL;
		job_spec_free(jobs->specs[i]);
	}
	jobs->n = k;
}
