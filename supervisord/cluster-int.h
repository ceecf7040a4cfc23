/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Cluster mode's own structures, shared by its files (and by no other):
 * cluster-state.c (the state, the leases' slots, what other modules ask
 * of cluster mode, the operator's holds, run history), cluster.c (leases:
 * bid, release, the fence, a periodic slot's lease, forgetting jobs),
 * cluster-claim.c (the claim seam, a periodic slot's fire),
 * cluster-conn.c (the two connections, their set-up, the renew, the
 * jobs' rows, notifications, start and end), cluster-ask.c and
 * cluster-queue.c.  Calls go from cluster-conn.c and cluster-claim.c to
 * cluster.c to cluster-state.c, never back.
 */

#ifndef CLUSTER_INT_H
#define CLUSTER_INT_H

#ifdef HAVE_LIBPQ

#include <sys/types.h>

#include <stdint.h>

#include "cluster.h"
#include "inst.h"
#include "jobs-view.h"
#include "jobs.h"
#include "lease.h"

enum lease_st {
	LEASE_NONE = 0,  /* not held, not asked for */
	LEASE_ACQUIRING, /* an acquire is on its way */
	LEASE_HELD,      /* ours, trusted until trust */
	LEASE_EXPIRED,   /* was ours: trust passed; given back once gone */
};

/* A request of another node that this one answers (cluster-ask.c). */
struct taken {
	int64_t id; /* its row in vigil.request */
	char verb;  /* 'r' restart, 's' start, 'S' stop, 'k' signal */
	TAILQ_ENTRY(taken) entry;
};

/* The lease of one instance of a cluster job. */
struct lease_slot {
	struct inst *in;
	enum lease_st st;
	int want;       /* asked for (the claim taken), not released since */
	int64_t epoch;  /* HELD, EXPIRED: the lease's, its first token */
	int64_t runs;   /* HELD: runs started on it (token: epoch + runs) */
	int64_t token;  /* the fencing token of the run now, or 0 */
	uint64_t trust; /* HELD: CLOCK_BOOTTIME usec */
	char *holder;   /* not ours: who held it at the last answer */
	long elsewhere; /* not ours: the pid of the holder's run, read for a
	                   wait (cluster_wait_watch), or 0 */
	int64_t ms_left;
	uint64_t holder_until; /* not ours: when its lease could expire */
	uint64_t due;          /* a standby watched: when to look again */
	int64_t wait_ms;       /* not ours: ms before this node may bid */
	int64_t placeable;     /* live nodes that may run it, -1: unknown */
	char *failures;        /* the streak of failed starts, or NULL */
	int streak;            /* ours: failures on record; a run that lasts
	                          min_uptime ends them (the renew says) */
	char *failed;          /* why the run failed here: the release that
	                          follows hands over, or NULL */
	int64_t slot;          /* periodic: the slot won, bidding for it */
	int64_t catch_up;      /* periodic: a slot to try once connected */
	int64_t msg;           /* queue: the message held (epoch: attempt) */
	int64_t hold_seq;      /* the last cluster-wide stop/start known */
	int hold_pending;      /* ours is on its way: notices wait */
	int hold_hint;         /* a notice came: re-read its row */
	char run_id[17];       /* the run on record in vigil.run */
	int64_t run_row;       /* its row, 0: not known (yet) */
	uint64_t key;          /* its record in the keeper */
	pid_t pgid; /* the run's group while it runs, for the keeper */
	sd_event_source *stop;     /* trust - stop time: the fence stops it */
	sd_event_source *kill;     /* trust: SIGKILL */
	sd_event_source *retry;    /* a standby's next bid */
	TAILQ_HEAD(, taken) taken; /* requests this node answers */
	sd_event_source *taken_timer; /* ... at the run's min_uptime */
	LIST_ENTRY(lease_slot) entry;
};

/* A lease to give back (its run is gone), until the database says so. */
struct release {
	int64_t job_id;
	int instance;
	int64_t epoch;
	char *failed;              /* a handover: why, or NULL */
	uint64_t delay, delay_max; /* ... the job's backoff, usec */
	int sent;
	TAILQ_ENTRY(release) entry;
};

/* A message's outcome to report, until the database has it. */
struct outcome {
	int64_t id;
	int attempts; /* with id, the claim's token */
	char op;      /* 'd' done, 'f' failed, 'r' given back */
	int wake;     /* done: wake the other nodes (a cluster-wide cap) */
	int64_t delay_ms;
	int max_attempts;
	int code, sig; /* -1: none */
	char *error;
	char *tail; /* the output's end, as a bytea's text */
	int sent;
	TAILQ_ENTRY(outcome) entry;
};

struct cluster_state {
	const struct conf_cluster *cf;
	struct lease_timing t;
	struct pgconn *lease; /* leases, the node row, LISTEN */
	struct pgconn *work;  /* status writes and reads */
	int schema_done;      /* migrated once by this vigild */
	int drained;          /* the node row says so: no cluster work */
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
	/* the queue (cluster-queue.c) */
	TAILQ_HEAD(, outcome) outbox;
	int flushing;
	int claims; /* on their way */
	int holds;  /* the operator's stops and starts on their way */
	void (*holds_settled)(void); /* called when holds comes to 0 */
	int hold_reading;            /* a re-read of hinted rows is on */
	sd_event_source *watch;      /* the standbys' next look */
	uint64_t gc_at;              /* the last look for jobs to forget */
	int gc_on;                   /* ... is on its way */
	int watching;                /* ... is on its way */
	sd_event_source *wait_look;  /* the holders' runs, for waits */
	int wait_looking;            /* ... a look is on its way */
	unsigned int outbox_fails;
	int rescuing;
	void (*queue_shutdown)(void);
	sd_event_source *queue_shutdown_timer;
};

extern struct cluster_state cluster_st;

const char *cluster_kind_name(enum conf_kind);
int cluster_placed(const struct job_spec *);
int cluster_has_run(const struct inst *);
int cluster_trusted(const struct lease_slot *);
struct inst *cluster_inst_find(int64_t, int);
struct lease_slot *cluster_find(int64_t, int);
struct lease_slot *cluster_slot(struct inst *);
void cluster_acquire(struct lease_slot *);
void cluster_answers_check(void);
void cluster_requests_take(void);
void cluster_requests_close(void);
void cluster_acquire_all(void);
void cluster_jobs_gc(void);
void cluster_drained(int);
void cluster_hold_apply(struct inst *, int, const char *);
void cluster_hold_hint(int64_t, int);
void cluster_hold_reread(void);
void cluster_holds_apply(struct job *, const char *);
void cluster_keeper_record(struct lease_slot *, int);
void cluster_keeper_announce(struct lease_slot *, int, struct spawn_announce *);
void cluster_keeper_resend(void);
void cluster_keeper_update(struct lease_slot *);
void cluster_kill_run(struct inst *);
void cluster_lost(struct lease_slot *);
void cluster_releases_send(void);
void cluster_run_begin(struct lease_slot *, pid_t);
void cluster_slot_next(struct lease_slot *);
void cluster_slots_skipped(struct inst *, int64_t, int64_t, const char *);
void cluster_spec_hash(const struct job_spec *, char *, size_t);
void cluster_timers_off(struct lease_slot *);
void cluster_trust(struct lease_slot *, uint64_t);
void cluster_waiting(struct lease_slot *, const char *);
void cluster_queue_renewed(
    const int64_t *, const int64_t *, const char *, size_t, uint64_t);
void cluster_queue_tick(void);
void cluster_queue_kick(int64_t);
void cluster_queue_ready(void);
void cluster_queue_flush(void);
void cluster_queue_close(void);

#endif /* HAVE_LIBPQ */

#endif
