/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The instance layer (instance.c) and its seams: the events fed to an
 * instance's lifecycle, the hooks through which it carries the actions
 * out, what differs between kinds (kind_ops) and how an instance holds
 * its claim to run (claim_ops, claim.c).
 */

#ifndef VIGILD_INST_H
#define VIGILD_INST_H

#include <sys/types.h>

#include <stdint.h>

#include "job.h"
#include "life.h"
#include "xmalloc.h"

struct inst;
struct job;
struct job_spec;
struct lock_holder;
struct spawn_announce;

/* claim.c: what taking a claim says */
enum claim_status {
	CLAIM_TAKEN = 0, /* the claim is the instance's now */
	CLAIM_LEFTOVER,  /* held by a proven leftover of a vigild */
	CLAIM_FOREIGN,   /* held by something else */
	CLAIM_ERROR,     /* cannot be had: cause */
	CLAIM_WAIT,      /* asked for (a cluster lease): the answer comes */
};

struct claim_result {
	int fd;       /* FOREIGN: our own description of the lock, or -1 */
	pid_t holder; /* LEFTOVER: the member of its group holding it */
	int same;     /* LEFTOVER: the one already being reclaimed */
	char *cause;  /* ERROR: why */
};

/* instance.c */
/* An event for inst_feed_event(): life's facts and the effects' own. */
struct inst_event {
	struct life_input in;
	const char *cause; /* SPAWN_FAILED, LOCK_ERROR, EXEC_FAILED: why */
	int quiet;         /* EXEC_FAILED known at the reap: logged there */
	int trigger;       /* WATCHDOG: WATCHDOG=trigger, not late */
	int lock_fd;       /* LOCK_FOREIGN: our description of the lock */
	pid_t holder;      /* LOCK_LEFTOVER: the member holding it */
	pid_t mainpid;     /* REAPED: the MAINPID= that carries on */
};

/*
 * What the instance layer needs from the modules that feed its lifecycle
 * back (they call inst_feed), filled in at start (vigild.c): it carries
 * those actions out through these, so that no two files call each
 * other.  What it needs of the others (claim.c, poststart.c, alert.c,
 * joblog.c, state.c) it calls by name; who hears of its changes is an
 * observer (below).
 */
struct inst_hooks {
	/* deps.c */
	int (*held_back)(struct inst *); /* 1: held back by a dependency */
	void (*let_go)(struct inst *);
	/* run.c: the processes */
	int (*fork)(struct inst *, enum life_stage, char **, int *, char **);
	/* the stage's actions (LIFE_S_*), then its answer */
	void (*stage)(
	    struct inst *, const struct inst_event *, const struct life_step *);
	void (*ended)(struct inst *, int, uint64_t, const struct life_step *);
	void (*close_stdin)(struct inst *);
	void (*forget)(struct inst *);
	unsigned int (*nforking)(void);
	void (*signal)(struct inst *, int); /* the run's processes */
	int (*alive)(struct inst *);        /* anything of the run left? */
	/* ready.c */
	void (*session_remove)(struct inst *);
	/* prober.c: after each step, the probe the phase calls for */
	void (*probe_sync)(struct inst *);
};
extern struct inst_hooks inst_hooks;

/*
 * Who hears of an instance's changes: each module that listens (STATUS=,
 * dependencies, waiters, counters, the cluster's lease, the reload swap,
 * hooks, alerts) has one, registered at start (vigild_core_init) and
 * called in that order.  A NULL member: not that one.
 */
struct inst_observer {
	void (*changed)(struct inst *, enum job_state); /* was */
	void (*gone)(struct inst *); /* the instance is about to be freed */
};

/*
 * What differs between kinds (service, periodic, queue); NULL: nothing
 * (stdin_fd and env: the service's way).
 */
struct kind_ops {
	int (*stdin_fd)(struct inst *, int *, char **);
	void (*env)(struct inst *, char **); /* up to two "KEY=value" */
	void (*slot_arm)(struct inst *);     /* LIFE_A_ARM_SLOT */
	void (*slot_next)(struct inst *);    /* LIFE_A_NEXT_SLOT */
	void (*slot_disarm)(struct inst *);  /* LIFE_A_DISARM_SLOT */
	void (*slot_skip)(struct inst *);    /* LIFE_A_SKIP */
	int (*missed)(struct inst *);        /* catch_up: a slot passed */
	void (*kick)(struct job *);          /* LIFE_A_KICK */
	void (*msg_drop)(struct inst *);     /* LIFE_A_MSG_DROP */
	/* the run ended: status, success, its end as run_describe says */
	void (*run_end)(struct inst *, int, int, const char *);
	void (*job_free)(struct job *);
	int (*ninsts)(const struct job_spec *);         /* NULL: instances */
	uint64_t (*stop_time)(const struct job_spec *); /* NULL: stop_timeout */
	/* A start waited for (vigilctl start): settled in this state?  *ok:
	   its outcome.  -1: as a service's.  NULL: as a service's. */
	int (*start_settled)(const struct inst *, enum job_state, int *);
	int keep_tail; /* the run's last output is kept (the dead list) */
};
extern const struct kind_ops service_kind;  /* run.c */
extern const struct kind_ops periodic_kind; /* periodic.c */
extern const struct kind_ops queue_kind;    /* dispatch.c */

const struct kind_ops *inst_kind_of(const struct job_spec *);
const struct kind_ops *inst_kind(const struct inst *);
int inst_kind_ninsts(const struct job_spec *);
uint64_t inst_kind_stop_time(const struct job_spec *);
/* Replace an instance's reason (NULL: none). */
#define inst_reason(in, ...) xsetf(&(in)->reason, __VA_ARGS__)
void inst_feed(struct inst *, enum life_event);
void inst_feed_event(struct inst *, struct inst_event *);
void inst_exited(struct inst *, int, uint64_t);
void inst_exec_failed(struct inst *, const char *, int);
void inst_exec_said(struct inst *, const char *, int);
void inst_watchdog_trigger(struct inst *);
void inst_watchdog_arm(struct inst *);
void inst_check_groups(void);
void inst_start(struct inst *);
void inst_start_operator(struct inst *);
void inst_arm(struct inst *);
void inst_stop(struct inst *);
void inst_stop_operator(struct inst *);
void inst_signal(struct inst *, int);
void inst_observe(const struct inst_observer *);
void inst_init(struct inst *, struct job *, int);
void inst_clear(struct inst *);

/* claim.c */
/* The exclusivity seam: one implementation per backend. */
struct claim_ops {
	const char *name;
	enum claim_status (*acquire)(struct inst *, struct claim_result *);
	void (*renew)(struct inst *, const struct lock_holder *);
	void (*release)(struct inst *);
	void (*failed)(struct inst *); /* the next release: it failed here */
	pid_t (*holder)(struct inst *, int); /* who holds it, or 0 */
	int (*held_elsewhere)(const struct job *);
	/* may a run start on the claim held now? (NULL: yes) */
	int (*trusted)(struct inst *, char **);
	/* before a spawn on the claim: what the child tells (NULL: none) */
	void (*announce)(struct inst *, int, struct spawn_announce *);
};
extern const struct claim_ops claim_local;

enum claim_status claim_take(struct inst *, struct claim_result *);
void claim_result_clear(struct claim_result *);
void claim_record(struct inst *, const struct lock_holder *);
void claim_release(struct inst *);
void claim_failed(struct inst *);
int claim_trusted(struct inst *, char **);
void claim_announce(struct inst *, int, struct spawn_announce *);
int claim_held_elsewhere(const struct job *);
void claim_leftover_term(struct inst *, pid_t);
void claim_leftover_kill(struct inst *, pid_t);
void claim_name_holder(struct inst *, int);

#endif
