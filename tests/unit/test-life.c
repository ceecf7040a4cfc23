/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Tests of life_step(), the lifecycle of an instance: every (phase, event)
 * pair of its table for each kind of job, the scenarios users rely on, and
 * random event sequences from a small simulated world that only sends
 * what can really happen, with the invariants checked after every step.
 * VIGIL_LIFE_SEEDS=N runs the random part over N seeds (default 150);
 * VIGIL_LIFE_SEED=S starts at seed S (to replay a failure).
 */

#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "job.h"
#include "life.h"
#include "test.h"

#define MS 1000ULL
#define SEC 1000000ULL
#define MID 0x80000000U /* no jitter */
#define NOW (100 * SEC)

#define EXITED(n) (((n)&0xff) << 8)
#define KILLED(s) ((s)&0x7f)

#define ANSWERS (LIFE_A_DEPS | LIFE_A_LOCK | LIFE_A_SPAWN)

static char spec_name[] = "t";
static struct job_spec spec;
static struct life_params par;

/* The job of the table and the scenarios: small numbers, every option. */
static void
spec_make(enum conf_kind kind, enum conf_ready ready)
{
	memset(&spec, 0, sizeof(spec));
	spec.name = spec_name;
	spec.kind = kind;
	spec.instances = 1;
	spec.restart = CONF_RESTART_ALWAYS;
	spec.success[0] = 1; /* exit 0 */
	spec.min_uptime = 1 * SEC;
	spec.restart_delay = 100 * MS;
	spec.restart_delay_max = 1 * SEC;
	spec.max_restarts = 3;
	spec.ready = ready;
	spec.ready_timeout = 2 * SEC;
	spec.stop_timeout = 3 * SEC;
	spec.drain_timeout = 4 * SEC;
	spec.timeout = kind == CONF_KIND_SERVICE ? 0 : 5 * SEC;
	spec.watchdog = ready == CONF_READY_NOTIFY ? 10 * SEC : 0;
	memset(&par, 0, sizeof(par));
	par.spec = &spec;
	par.quick_retry = 10 * MS;
	par.quick_max = 3;
	par.recheck_min = 100 * MS;
	par.recheck_max = 2 * SEC;
}

/* ---- the table: every (phase, event) pair for each kind ---- */

/* The kinds of job the table is checked for. */
enum variant {
	V_SVC,
	V_NOTIFY,
	V_PER,
	V_QUE,
	V_COUNT
};
static const char *const variant_names[V_COUNT] = { "service", "service-notify",
	"periodic", "queue" };

#define KS (1U << V_SVC)
#define KN (1U << V_NOTIFY)
#define KP (1U << V_PER)
#define KQ (1U << V_QUE)
#define KALL (KS | KN | KP | KQ)

#define PH(p) (1U << LIFE_##p)
#define EV(e) (1ULL << LIFE_EV_##e)
#define PHALL ((1U << LIFE_PHASE_COUNT) - 1)
#define EVALL ((1ULL << LIFE_EV_COUNT) - 1)
#define IDLE3 (PH(STOPPED) | PH(EXITED) | PH(FATAL))
#define BLOCK3 (PH(RECLAIM) | PH(RECLAIM_KILL) | PH(FOREIGN))
#define HELD (PH(DEPS) | PH(LOCKWAIT) | PH(LEASE) | BLOCK3)
#define RUN2 (PH(SPAWNED) | PH(RUNNING))
#define STOPPING (PH(DRAIN) | PH(TERM) | PH(KILL))
/* Not wanted in the table's set-up; the others are. */
#define UNWANTED (IDLE3 | STOPPING)
#define WANTED (PHALL & ~UNWANTED)

#define SAME (-1) /* the phase does not change */
#define IGN (-2)  /* ignored: nothing changes at all */
#define NA (-3)   /* this kind never is in this phase */

#define X_ANY 0            /* the timer: anything */
#define X_KEEP 1           /* untouched */
#define X_SET(t) (2 + (t)) /* set to t (LIFE_TIMER_NONE: cancelled) */
#define TH(t) (1 + (t))    /* then must be t */
#define ST(s) (1 + (s))    /* the stage must be s after */
/* A row of expects[]: the fields not given are 0. */
#define E(...) E_(__VA_ARGS__, 0, 0, 0, 0, 0, 0, 0, 0)
#define E_(ph, ev, k, next, act, nact, timer, cause, then, sact, stage, ...)   \
	{                                                                      \
		ph, ev, k, next, act, nact, timer, cause, then, sact, stage    \
	}

struct expect {
	unsigned int phases;       /* PH() */
	unsigned long long events; /* EV() */
	unsigned int kinds;        /* K* */
	int next;                  /* a phase, SAME, IGN or NA */
	unsigned int act;  /* there (LIFE_A_DEPS/_LOCK/_SPAWN: exactly) */
	unsigned int nact; /* not there */
	int timer;         /* X_* */
	int cause;         /* 0 or the cause */
	int then;          /* 0 or TH(then) */
	unsigned int sact; /* the stage's actions: exactly */
	int stage;         /* 0 or ST(stage) */
};

/*
 * Each (phase, event, kind) is in exactly one row.  The table's set-up of
 * each phase is expect_setup(): a run that is LIVE in SPAWNED, RUNNING,
 * DRAIN and TERM, a GROUP left in KILL; the lock held where a run is and
 * in a queue's WAITING and BACKOFF; wanted except in STOPPED, EXITED,
 * FATAL and the stopping phases; a LIVE run's stage is the command; the
 * event's facts are those of expect_input() (a long run that exited 1, no
 * group left, nothing seen before).  The stages with their steps are
 * checked by stage_expects[] below.
 */
static const struct expect expects[] = {
	/* Phases a kind never reaches. */
	E(PH(WAITING), EVALL, KS | KN, NA),
	E(PH(DRAIN), EVALL, KS | KN | KP, NA),
	E(PH(BACKOFF), EVALL, KP, NA),

	/* START, and ARM (autostart) of a service or queue. */
	E(IDLE3, EV(START) | EV(ARM), KS | KN | KQ, SAME,
	    LIFE_A_REASON_CLEAR | LIFE_A_DEPS, 0, X_KEEP),
	E(IDLE3 | PH(WAITING), EV(START), KP, SAME,
	    LIFE_A_ARM_SLOT | LIFE_A_REASON_CLEAR | LIFE_A_DEPS, 0, X_KEEP),
	E(PH(WAITING), EV(START) | EV(ARM), KQ, SAME, LIFE_A_KICK, 0, X_KEEP),
	E(HELD | RUN2, EV(START) | EV(ARM), KS | KN | KQ, SAME, 0,
	    LIFE_A_REASON_CLEAR, X_KEEP),
	E(HELD | RUN2, EV(START), KP, SAME, LIFE_A_ARM_SLOT, 0, X_KEEP),
	E(PH(BACKOFF), EV(START) | EV(ARM), KS | KN, SAME, LIFE_A_SPAWN, 0,
	    X_SET(LIFE_TIMER_NONE)),
	E(PH(BACKOFF), EV(START) | EV(ARM), KQ, SAME, 0, 0, X_KEEP),
	E(STOPPING, EV(START) | EV(ARM), KS | KN | KQ, SAME, 0, 0, X_KEEP, 0,
	    TH(LIFE_THEN_START)),
	E(STOPPING, EV(START), KP, SAME, LIFE_A_ARM_SLOT, 0, X_KEEP, 0,
	    TH(LIFE_THEN_START)),
	/* ARM of a periodic job: wait for the slot. */
	E(IDLE3 | PH(WAITING), EV(ARM), KP, LIFE_WAITING,
	    LIFE_A_ARM_SLOT | LIFE_A_REASON_CLEAR, 0, X_KEEP),
	E(HELD | RUN2, EV(ARM), KP, SAME, LIFE_A_ARM_SLOT, 0, X_KEEP),
	E(STOPPING, EV(ARM), KP, SAME, LIFE_A_ARM_SLOT, 0, X_KEEP, 0,
	    TH(LIFE_THEN_STOP)),

	/* STOP */
	E(IDLE3, EV(STOP), KALL, SAME,
	    LIFE_A_DISARM_SLOT | LIFE_A_CANCEL_DEADLINE, 0, X_KEEP),
	E(PH(WAITING), EV(STOP), KP | KQ, LIFE_STOPPED,
	    LIFE_A_DISARM_SLOT | LIFE_A_RELEASE | LIFE_A_REASON_CLEAR, 0,
	    X_KEEP),
	E(PH(DEPS) | PH(LOCKWAIT), EV(STOP), KALL, LIFE_STOPPED,
	    LIFE_A_MSG_DROP | LIFE_A_DEPS_UNWAIT | LIFE_A_RELEASE,
	    LIFE_A_REASON_STOPPED, X_SET(LIFE_TIMER_NONE)),
	E(PH(BACKOFF) | BLOCK3 | PH(LEASE), EV(STOP), KALL, LIFE_STOPPED,
	    LIFE_A_REASON_STOPPED | LIFE_A_RELEASE | LIFE_A_DEPS_UNWAIT, 0,
	    X_SET(LIFE_TIMER_NONE)),
	E(RUN2, EV(STOP), KS | KN | KP, LIFE_TERM, LIFE_A_TERM, LIFE_A_DRAIN,
	    X_SET(LIFE_TIMER_STOP), LIFE_CAUSE_STOP, TH(LIFE_THEN_STOP)),
	E(RUN2, EV(STOP), KQ, LIFE_DRAIN, LIFE_A_DRAIN, LIFE_A_TERM,
	    X_SET(LIFE_TIMER_DRAIN), LIFE_CAUSE_STOP, TH(LIFE_THEN_STOP)),
	E(STOPPING, EV(STOP), KALL, SAME, 0, LIFE_A_TERM | LIFE_A_KILL, X_KEEP,
	    0, TH(LIFE_THEN_STOP)),

	/* The answers: every row takes them. */
	E(PHALL, EV(DEPS_WAIT), KALL, LIFE_DEPS, 0, 0, X_SET(LIFE_TIMER_NONE)),
	E(IDLE3 | HELD, EV(DEPS_OK), KALL, SAME,
	    LIFE_A_DEPS_UNWAIT | LIFE_A_LOCK, 0, X_KEEP),
	E(PH(WAITING), EV(DEPS_OK), KP, SAME, LIFE_A_DEPS_UNWAIT | LIFE_A_LOCK,
	    0, X_KEEP),
	E(PH(WAITING) | PH(BACKOFF), EV(DEPS_OK), KQ, LIFE_WAITING,
	    LIFE_A_DEPS_UNWAIT | LIFE_A_KICK, 0, X_SET(LIFE_TIMER_NONE)),
	E(RUN2 | STOPPING, EV(DEPS_OK), KALL, SAME,
	    LIFE_A_DEPS_UNWAIT | LIFE_A_SPAWN, 0, X_SET(LIFE_TIMER_NONE)),
	E(PH(BACKOFF), EV(DEPS_OK), KS | KN, SAME,
	    LIFE_A_DEPS_UNWAIT | LIFE_A_SPAWN, 0, X_SET(LIFE_TIMER_NONE)),
	E(PHALL & ~(RUN2 | STOPPING), EV(LOCK_OK), KQ, LIFE_WAITING,
	    LIFE_A_KICK | LIFE_A_REASON_CLEAR, 0, X_SET(LIFE_TIMER_NONE)),
	E(RUN2 | STOPPING, EV(LOCK_OK), KQ, SAME, LIFE_A_SPAWN, 0,
	    X_SET(LIFE_TIMER_NONE)),
	E(PHALL, EV(LOCK_OK), KS | KN | KP, SAME, LIFE_A_SPAWN, 0,
	    X_SET(LIFE_TIMER_NONE)),
	E(PHALL, EV(LOCK_LEFTOVER), KALL, LIFE_RECLAIM, LIFE_A_LEFTOVER_TERM,
	    LIFE_A_LEFTOVER_KILL, X_SET(LIFE_TIMER_RECHECK)),
	E(PHALL, EV(LOCK_WAIT), KALL, LIFE_LEASE, 0, ~0U,
	    X_SET(LIFE_TIMER_NONE)),
	E(PHALL & ~PH(FOREIGN), EV(LOCK_FOREIGN), KALL, LIFE_FOREIGN,
	    LIFE_A_NAME_HOLDER, 0, X_SET(LIFE_TIMER_RECHECK)),
	E(PH(FOREIGN), EV(LOCK_FOREIGN), KALL, LIFE_FOREIGN, 0,
	    LIFE_A_NAME_HOLDER, X_SET(LIFE_TIMER_RECHECK)),
	E(UNWANTED, EV(LOCK_ERROR) | EV(SPAWN_FAILED), KALL, LIFE_STOPPED,
	    LIFE_A_START_FAILED | LIFE_A_RELEASE, 0, X_KEEP),
	E(WANTED, EV(LOCK_ERROR), KS | KN, LIFE_BACKOFF,
	    LIFE_A_START_FAILED | LIFE_A_RELEASE, 0, X_SET(LIFE_TIMER_BACKOFF)),
	E(WANTED, EV(SPAWN_FAILED), KS | KN, LIFE_BACKOFF, LIFE_A_START_FAILED,
	    LIFE_A_RELEASE, X_SET(LIFE_TIMER_BACKOFF)),
	E(WANTED, EV(LOCK_ERROR) | EV(SPAWN_FAILED), KP, LIFE_WAITING,
	    LIFE_A_START_FAILED | LIFE_A_RELEASE, 0, X_KEEP),
	E(WANTED, EV(LOCK_ERROR), KQ, LIFE_BACKOFF,
	    LIFE_A_START_FAILED | LIFE_A_MSG_DROP | LIFE_A_RELEASE, 0,
	    X_SET(LIFE_TIMER_BACKOFF)),
	E(WANTED, EV(SPAWN_FAILED), KQ, LIFE_BACKOFF,
	    LIFE_A_START_FAILED | LIFE_A_MSG_DROP, LIFE_A_RELEASE,
	    X_SET(LIFE_TIMER_BACKOFF)),
	E(PHALL, EV(SPAWNED), KS, LIFE_SPAWNED, 0, LIFE_A_ARM_DEADLINE,
	    X_SET(LIFE_TIMER_NONE)),
	E(PHALL, EV(SPAWNED), KN, LIFE_SPAWNED, 0, LIFE_A_ARM_DEADLINE,
	    X_SET(LIFE_TIMER_READY)),
	E(PHALL, EV(SPAWNED), KP | KQ, LIFE_SPAWNED, LIFE_A_ARM_DEADLINE, 0,
	    X_SET(LIFE_TIMER_NONE)),

	/* MSG: a free queue slot's message. */
	E(PH(WAITING), EV(MSG), KP | KQ, SAME,
	    LIFE_A_REASON_CLEAR | LIFE_A_DEPS, 0, X_KEEP),
	E(PHALL & ~PH(WAITING), EV(MSG), KALL, IGN),

	/* What the child says. */
	E(PH(SPAWNED), EV(EXEC_OK), KS | KP | KQ, LIFE_RUNNING,
	    LIFE_A_REASON_CLEAR | LIFE_A_RECORD_READY, 0, X_KEEP),
	E(PH(SPAWNED), EV(EXEC_OK), KN, SAME, 0, ~0U, X_KEEP),
	E(PHALL & ~PH(SPAWNED), EV(EXEC_OK), KALL, IGN),
	/* MAINPID: only a forking service has one (forking_starter). */
	E(PHALL, EV(MAINPID), KALL, IGN),
	E(RUN2 | STOPPING, EV(EXEC_FAILED), KALL, SAME, LIFE_A_EXEC_FAILED, 0,
	    X_KEEP),
	E(PHALL & ~(RUN2 | STOPPING), EV(EXEC_FAILED), KALL, IGN),
	E(PH(SPAWNED), EV(READY), KN, LIFE_RUNNING,
	    LIFE_A_REASON_CLEAR | LIFE_A_RECORD_READY | LIFE_A_ARM_WATCHDOG, 0,
	    X_SET(LIFE_TIMER_NONE)),
	E(PH(SPAWNED), EV(READY), KS | KP | KQ, IGN),
	E(PHALL & ~PH(SPAWNED), EV(READY), KALL, IGN),

	/* EXIT (of a long run, exit 1, its group gone with it) */
	E(RUN2, EV(EXIT), KS, SAME,
	    LIFE_A_CANCEL_WATCHDOG | LIFE_A_RECORD_END | LIFE_A_GROUP_DONE |
	        LIFE_A_CANCEL_DEADLINE | LIFE_A_SPAWN,
	    LIFE_A_RELEASE, X_SET(LIFE_TIMER_NONE)),
	E(PH(RUNNING), EV(EXIT), KN, SAME,
	    LIFE_A_RECORD_END | LIFE_A_GROUP_DONE | LIFE_A_SPAWN,
	    LIFE_A_RELEASE, X_SET(LIFE_TIMER_NONE)),
	E(PH(SPAWNED), EV(EXIT), KN, LIFE_BACKOFF, /* never ready */
	    LIFE_A_RECORD_END | LIFE_A_GROUP_DONE, LIFE_A_RELEASE,
	    X_SET(LIFE_TIMER_BACKOFF)),
	E(RUN2, EV(EXIT), KP, LIFE_WAITING,
	    LIFE_A_RECORD_END | LIFE_A_GROUP_DONE | LIFE_A_RELEASE, 0,
	    X_SET(LIFE_TIMER_NONE)),
	E(RUN2, EV(EXIT), KQ, LIFE_WAITING,
	    LIFE_A_RECORD_END | LIFE_A_GROUP_DONE | LIFE_A_KICK, LIFE_A_RELEASE,
	    X_SET(LIFE_TIMER_NONE)),
	E(STOPPING, EV(EXIT), KALL, LIFE_STOPPED,
	    LIFE_A_RECORD_END | LIFE_A_GROUP_DONE | LIFE_A_RELEASE, 0,
	    X_SET(LIFE_TIMER_NONE)),
	E(PHALL & ~(RUN2 | STOPPING), EV(EXIT), KALL, IGN),
	E(PH(KILL), EV(GROUP_GONE), KALL, LIFE_STOPPED,
	    LIFE_A_GROUP_DONE | LIFE_A_RELEASE, 0, X_SET(LIFE_TIMER_NONE)),
	E(PHALL & ~PH(KILL), EV(GROUP_GONE), KALL, IGN),

	/* The command's stage (life-run.c): its end, the daemon's wait. */
	E(RUN2 | PH(DRAIN) | PH(TERM), EV(REAPED), KALL, SAME, 0, ~0U, X_KEEP,
	    0, 0, LIFE_S_MAIN_OVER | LIFE_S_END, ST(LIFE_STAGE_NONE)),
	E(RUN2, EV(STEP_FAILED), KALL, SAME, 0, ~0U, X_KEEP, 0, 0,
	    LIFE_S_MAIN_OVER | LIFE_S_FAILED | LIFE_S_END, ST(LIFE_STAGE_NONE)),
	E(PH(DRAIN) | PH(TERM), EV(STEP_FAILED), KALL, SAME, 0, ~0U, X_KEEP, 0,
	    0, LIFE_S_MAIN_OVER | LIFE_S_END, ST(LIFE_STAGE_NONE)),
	E(RUN2 | PH(DRAIN) | PH(TERM), EV(NO_DAEMON), KALL, SAME, 0, ~0U,
	    X_KEEP, 0, 0, 0, ST(LIFE_STAGE_PIDWAIT)),
	E(PHALL & ~(RUN2 | PH(DRAIN) | PH(TERM)),
	    EV(REAPED) | EV(STEP_FAILED) | EV(NO_DAEMON), KALL, IGN),
	E(PHALL, EV(STEP_TIMEOUT) | EV(PIDWAIT), KALL, IGN),

	/* Timers. */
	E(PH(BACKOFF), EV(BACKOFF_DONE), KS | KN, SAME, LIFE_A_SPAWN, 0,
	    X_SET(LIFE_TIMER_NONE)),
	E(PH(BACKOFF), EV(BACKOFF_DONE), KQ, SAME, LIFE_A_DEPS, 0,
	    X_SET(LIFE_TIMER_NONE)),
	E(PHALL & ~PH(BACKOFF), EV(BACKOFF_DONE), KALL, IGN),
	E(PH(SPAWNED), EV(READY_TIMEOUT), KALL, LIFE_TERM, LIFE_A_TERM, 0,
	    X_SET(LIFE_TIMER_STOP), LIFE_CAUSE_READY_TIMEOUT),
	E(PHALL & ~PH(SPAWNED), EV(READY_TIMEOUT), KALL, IGN),
	E(PH(TERM), EV(STOP_TIMEOUT), KALL, LIFE_KILL, LIFE_A_KILL, 0,
	    X_SET(LIFE_TIMER_KILL)),
	E(PHALL & ~PH(TERM), EV(STOP_TIMEOUT), KALL, IGN),
	E(PH(KILL), EV(KILL_POLL), KALL, LIFE_STOPPED,
	    LIFE_A_GROUP_DONE | LIFE_A_RELEASE, LIFE_A_KILL,
	    X_SET(LIFE_TIMER_NONE)),
	E(PHALL & ~PH(KILL), EV(KILL_POLL), KALL, IGN),
	E(PH(DRAIN), EV(DRAIN_TIMEOUT), KQ, LIFE_TERM, LIFE_A_TERM, 0,
	    X_SET(LIFE_TIMER_STOP), LIFE_CAUSE_DRAIN),
	E(PHALL & ~PH(DRAIN), EV(DRAIN_TIMEOUT), KALL, IGN),
	E(HELD, EV(RECHECK), KALL, SAME, LIFE_A_DEPS, 0,
	    X_SET(LIFE_TIMER_NONE)),
	E(PHALL & ~HELD, EV(RECHECK), KALL, IGN),
	E(PH(RUNNING), EV(WATCHDOG), KALL, LIFE_TERM, LIFE_A_TERM, 0,
	    X_SET(LIFE_TIMER_STOP), LIFE_CAUSE_WATCHDOG),
	E(PHALL & ~PH(RUNNING), EV(WATCHDOG), KALL, IGN),
	E(PH(RUNNING), EV(UNHEALTHY), KALL, LIFE_TERM, LIFE_A_TERM, 0,
	    X_SET(LIFE_TIMER_STOP), LIFE_CAUSE_UNHEALTHY),
	E(PHALL & ~PH(RUNNING), EV(UNHEALTHY), KALL, IGN),
	E(RUN2, EV(TIMEOUT), KALL, LIFE_TERM, LIFE_A_TERM, 0,
	    X_SET(LIFE_TIMER_STOP), LIFE_CAUSE_TIMEOUT),
	E(PHALL & ~RUN2, EV(TIMEOUT), KALL, IGN),

	/* FENCE: the cluster lease is not to be trusted any more. */
	E(RUN2, EV(FENCE), KS | KN, LIFE_TERM, LIFE_A_TERM, 0,
	    X_SET(LIFE_TIMER_STOP), LIFE_CAUSE_FENCE, TH(LIFE_THEN_START)),
	/* a message drains first: the fence's stop time has room for it */
	E(RUN2, EV(FENCE), KQ, LIFE_DRAIN, LIFE_A_DRAIN, LIFE_A_TERM,
	    X_SET(LIFE_TIMER_DRAIN), LIFE_CAUSE_FENCE, TH(LIFE_THEN_START)),
	E(RUN2, EV(FENCE), KP, LIFE_TERM, LIFE_A_TERM, 0,
	    X_SET(LIFE_TIMER_STOP), LIFE_CAUSE_FENCE, TH(LIFE_THEN_POLICY)),
	E(STOPPING, EV(FENCE), KALL, SAME, 0, ~0U, X_KEEP),
	E(PH(BACKOFF) | BLOCK3, EV(FENCE), KALL, SAME, LIFE_A_RELEASE,
	    ~LIFE_A_RELEASE, X_KEEP),
	E(IDLE3 | PH(WAITING) | PH(DEPS) | PH(LOCKWAIT) | PH(LEASE), EV(FENCE),
	    KALL, IGN),

	/* SLOT: a periodic slot, whatever the kind. */
	E(UNWANTED, EV(SLOT), KALL, IGN),
	E(PH(WAITING), EV(SLOT), KP | KQ, SAME,
	    LIFE_A_NEXT_SLOT | LIFE_A_REASON_CLEAR | LIFE_A_DEPS, LIFE_A_SKIP,
	    X_KEEP),
	E(HELD | RUN2 | PH(BACKOFF), EV(SLOT), KALL, SAME,
	    LIFE_A_SKIP | LIFE_A_NEXT_SLOT, 0, X_KEEP),
};

#define NEXPECTS (sizeof(expects) / sizeof(expects[0]))

/* The spec of a variant. */
static void
variant_spec(enum variant v)
{
	static const enum conf_kind kinds[V_COUNT] = { CONF_KIND_SERVICE,
		CONF_KIND_SERVICE, CONF_KIND_PERIODIC, CONF_KIND_QUEUE };

	spec_make(
	    kinds[v], v == V_NOTIFY ? CONF_READY_NOTIFY : CONF_READY_EXEC);
}

/* struct life as it is in phase ph (see the comment of expects[]). */
static void
expect_setup(struct life *l, enum life_phase ph, enum variant v)
{
	static const struct life base[LIFE_PHASE_COUNT] = {
		[LIFE_FATAL] = { .failures = 4 },
		[LIFE_WAITING] = { .want = 1 },
		[LIFE_DEPS] = { .want = 1 },
		[LIFE_LOCKWAIT] = { .want = 1,
		    .quick = 1,
		    .timer = LIFE_TIMER_RECHECK },
		[LIFE_SPAWNED] = { .want = 1, .lock = 1, .run = LIFE_RUN_LIVE },
		[LIFE_RUNNING] = { .want = 1,
		    .lock = 1,
		    .ready = 1,
		    .run = LIFE_RUN_LIVE },
		[LIFE_BACKOFF] = { .want = 1,
		    .lock = 1,
		    .failures = 1,
		    .delay = 100 * MS,
		    .timer = LIFE_TIMER_BACKOFF },
		[LIFE_DRAIN] = { .lock = 1,
		    .ready = 1,
		    .run = LIFE_RUN_LIVE,
		    .then = LIFE_THEN_STOP,
		    .cause = LIFE_CAUSE_STOP,
		    .timer = LIFE_TIMER_DRAIN },
		[LIFE_TERM] = { .lock = 1,
		    .ready = 1,
		    .run = LIFE_RUN_LIVE,
		    .then = LIFE_THEN_STOP,
		    .cause = LIFE_CAUSE_STOP,
		    .timer = LIFE_TIMER_STOP },
		[LIFE_KILL] = { .lock = 1,
		    .ready = 1,
		    .run = LIFE_RUN_GROUP,
		    .then = LIFE_THEN_STOP,
		    .cause = LIFE_CAUSE_STOP,
		    .timer = LIFE_TIMER_KILL,
		    .pending = { .state = JOB_STOPPED } },
		[LIFE_RECLAIM] = { .want = 1,
		    .recheck = 100 * MS,
		    .kill_at = NOW + 3 * SEC,
		    .timer = LIFE_TIMER_RECHECK },
		[LIFE_RECLAIM_KILL] = { .want = 1,
		    .recheck = 400 * MS,
		    .kill_at = NOW - 1 * SEC,
		    .timer = LIFE_TIMER_RECHECK },
		[LIFE_FOREIGN] = { .want = 1,
		    .recheck = 100 * MS,
		    .timer = LIFE_TIMER_RECHECK },
		[LIFE_LEASE] = { .want = 1 },
	};

	*l = base[ph];
	l->phase = ph;
	if (l->run == LIFE_RUN_LIVE)
		l->stage = LIFE_STAGE_MAIN;
	if (v == V_QUE) {
		/* A free slot holds its lock; a run has its message. */
		l->lock |= ph == LIFE_WAITING;
		l->msg = l->run != LIFE_RUN_NONE;
		if (ph == LIFE_BACKOFF) {
			l->failures = 0;
			l->delay = par.recheck_max;
		}
	}
	if (v == V_NOTIFY && ph == LIFE_SPAWNED)
		l->timer = LIFE_TIMER_READY;
}

/* The facts every event of the table brings. */
static void
expect_input(struct life_input *in, enum life_event ev)
{
	memset(in, 0, sizeof(*in));
	in->ev = ev;
	in->now = NOW;
	in->rnd = MID;
	in->status = EXITED(1);
	in->uptime = 10 * SEC;
}

/*
 * The row of (ph, ev, v), or NULL; *n: how many rows have it (an NA row
 * stands alone: the phase does not exist for that kind).
 */
static const struct expect *
expect_find(enum life_phase ph, enum life_event ev, enum variant v, int *n)
{
	const struct expect *e = NULL;
	size_t i;

	*n = 0;
	for (i = 0; i < NEXPECTS; i++) {
		if ((expects[i].phases & (1U << ph)) &&
		    (expects[i].events & (1ULL << ev)) &&
		    (expects[i].kinds & (1U << v))) {
			if (expects[i].next == NA) {
				*n = 1; /* the other rows do not apply */
				return (&expects[i]);
			}
			e = &expects[i];
			(*n)++;
		}
	}
	return (e);
}

static int
expect_fail(enum life_phase ph, enum life_event ev, enum variant v,
    const char *what, long long got, long long want)
{
	fprintf(stderr,
	    "  (%s, %s, %s): %s: got %lld (%#llx), want %lld "
	    "(%#llx)\n",
	    life_phase_name(ph), life_event_name(ev), variant_names[v], what,
	    got, got, want, want);
	return (1);
}

/* The same lifecycle, field by field. */
static int
life_equal(const struct life *a, const struct life *b)
{
	return (a->phase == b->phase && a->run == b->run &&
	    a->then == b->then && a->cause == b->cause &&
	    a->timer == b->timer && a->want == b->want && a->lock == b->lock &&
	    a->msg == b->msg && a->ready == b->ready &&
	    a->exec_failed == b->exec_failed && a->failures == b->failures &&
	    a->restarts == b->restarts && a->quick == b->quick &&
	    a->recheck == b->recheck && a->kill_at == b->kill_at &&
	    a->delay == b->delay && a->pending.state == b->pending.state &&
	    a->pending.failures == b->pending.failures &&
	    a->pending.delay == b->pending.delay &&
	    a->pending.success == b->pending.success &&
	    a->pending.failed_start == b->pending.failed_start &&
	    a->stage == b->stage && a->stage_timer == b->stage_timer &&
	    a->step_failed == b->step_failed &&
	    a->pidwait_step == b->pidwait_step &&
	    a->pidwait_until == b->pidwait_until && a->intent == b->intent);
}

/* An ignored event changes nothing and asks for nothing. */
static int
expect_ignored(enum life_phase ph, enum life_event ev, enum variant v,
    const struct life *before, const struct life *l, const struct life_step *o)
{
	if (!o->ignored)
		return (expect_fail(ph, ev, v, "ignored", 0, 1));
	if (o->actions != 0 || o->timer_set || o->sactions != 0 ||
	    o->stage_timer_set)
		return (expect_fail(ph, ev, v, "actions", o->actions, 0));
	if (!life_equal(before, l))
		return (expect_fail(ph, ev, v, "struct life changed", 1, 0));
	return (0);
}

static int
expect_timer(enum life_phase ph, enum life_event ev, enum variant v,
    const struct expect *e, const struct life *l, const struct life_step *o)
{
	if (e->timer == X_KEEP && o->timer_set)
		return (expect_fail(ph, ev, v, "timer set", o->timer, -1));
	if (e->timer >= X_SET(0) &&
	    (!o->timer_set || (int)o->timer != e->timer - X_SET(0)))
		return (expect_fail(ph, ev, v, "timer",
		    o->timer_set ? (long long)o->timer : -1,
		    e->timer - X_SET(0)));
	if (o->timer_set && l->timer != o->timer)
		return (expect_fail(ph, ev, v, "l->timer", l->timer, o->timer));
	return (0);
}

/* Check one step against its row. */
static int
expect_check(enum life_phase ph, enum life_event ev, enum variant v,
    const struct expect *e, const struct life *before, const struct life *l,
    const struct life_step *o)
{
	int next = e->next == SAME ? (int)ph : e->next;

	if (e->next == IGN)
		return (expect_ignored(ph, ev, v, before, l, o));
	if (o->ignored)
		return (expect_fail(ph, ev, v, "ignored", 1, 0));
	if ((int)l->phase != next)
		return (expect_fail(ph, ev, v, "phase", l->phase, next));
	if ((o->actions & e->act) != e->act)
		return (expect_fail(ph, ev, v, "actions", o->actions, e->act));
	if ((o->actions & e->nact) != 0)
		return (expect_fail(
		    ph, ev, v, "actions not wanted", o->actions, e->nact));
	if ((o->actions & ANSWERS) != (e->act & ANSWERS))
		return (expect_fail(ph, ev, v, "answer asked",
		    o->actions & ANSWERS, e->act & ANSWERS));
	if (e->cause != 0 && (int)l->cause != e->cause)
		return (expect_fail(ph, ev, v, "cause", l->cause, e->cause));
	if (e->then != 0 && (int)l->then != e->then - 1)
		return (expect_fail(ph, ev, v, "then", l->then, e->then - 1));
	if (o->from != ph)
		return (expect_fail(ph, ev, v, "from", o->from, ph));
	if (o->sactions != e->sact)
		return (expect_fail(
		    ph, ev, v, "stage actions", o->sactions, e->sact));
	if (e->stage != 0 && (int)l->stage != e->stage - 1)
		return (
		    expect_fail(ph, ev, v, "stage", l->stage, e->stage - 1));
	return (expect_timer(ph, ev, v, e, l, o));
}

/* The operator's word after ev (operator: asked by the operator). */
static enum life_intent
intent_after(enum life_intent was, enum life_event ev, int operator)
{
	if (ev == LIFE_EV_START || ev == LIFE_EV_ARM)
		return (operator                ? LIFE_INTENT_UP :
		        was == LIFE_INTENT_DOWN ? LIFE_INTENT_NONE :
		                                  was);
	return (ev == LIFE_EV_STOP && operator? LIFE_INTENT_DOWN : was);
}

/*
 * The cell again with each word of the operator before it, from the
 * operator or not: the intent is as intent_after() says, and nothing
 * else differs from the step *want took (the word changes no decision).
 */
static int
expect_intent(enum life_phase ph, enum life_event ev, enum variant v,
    const struct life *want_l, const struct life_step *want)
{
	struct life l, after;
	struct life_input in;
	struct life_step o;
	enum life_intent was, then;
	int op;

	for (was = LIFE_INTENT_NONE; was <= LIFE_INTENT_UP; was++) {
		for (op = 0; op < 2; op++) {
			expect_setup(&l, ph, v);
			l.intent = was;
			expect_input(&in, ev);
			in.operator= op;
			life_step(&l, &par, &in, &o);
			then = o.ignored ? was : intent_after(was, ev, op);
			if (l.intent != then)
				return (expect_fail(
				    ph, ev, v, "intent", l.intent, then));
			after = l;
			after.intent = want_l->intent;
			if (!life_equal(&after, want_l) ||
			    o.actions != want->actions ||
			    o.sactions != want->sactions ||
			    o.timer_set != want->timer_set ||
			    o.timer != want->timer ||
			    o.ignored != want->ignored)
				return (expect_fail(ph, ev, v,
				    "the operator's word changed a decision",
				    o.actions, want->actions));
		}
	}
	return (0);
}

/* One (phase, event, kind): 0 checked, 1 failed, -1 not applicable. */
static int
expect_one(enum life_phase ph, enum life_event ev, enum variant v)
{
	const struct expect *e;
	struct life l, before;
	struct life_input in;
	struct life_step o;
	int n;

	e = expect_find(ph, ev, v, &n);
	if (n != 1) {
		fprintf(stderr, "  (%s, %s, %s): in %d rows of the table\n",
		    life_phase_name(ph), life_event_name(ev), variant_names[v],
		    n);
		return (1);
	}
	if (e->next == NA)
		return (-1);
	variant_spec(v);
	expect_setup(&l, ph, v);
	before = l;
	expect_input(&in, ev);
	life_step(&l, &par, &in, &o);
	if (expect_check(ph, ev, v, e, &before, &l, &o))
		return (1);
	return (expect_intent(ph, ev, v, &l, &o));
}

TEST(every_phase_event_kind)
{
	int ph, ev, v, r, checked = 0, failed = 0;

	/* The masks must hold every phase and event. */
	ASSERT_OK(LIFE_PHASE_COUNT <= 32 && LIFE_EV_COUNT <= 64);
	for (ph = 0; ph < LIFE_PHASE_COUNT; ph++) {
		for (ev = 0; ev < LIFE_EV_COUNT; ev++) {
			for (v = 0; v < V_COUNT; v++) {
				r = expect_one((enum life_phase)ph,
				    (enum life_event)ev, (enum variant)v);
				checked += r == 0;
				failed += r == 1;
			}
		}
	}
	printf("# %d (phase, event, kind) cases checked\n", checked);
	ASSERT_EQ(failed, 0);
	ASSERT_OK(checked > LIFE_PHASE_COUNT * LIFE_EV_COUNT * 3);
	return (0);
}

/*
 * ---- the stages: every (stage, phase, input) for each kind of run ----
 *
 * A run with exec_start_pre or not, exec_stop_post or not, type =
 * "forking" or not, a step failure said before or not; in each stage, in
 * each phase a run has (KILL with its leader alive too), every input a
 * stage can get.  What must happen is said by stage_want(), from the
 * rules as the manual states them.
 */

static char *step_argv[] = { spec_name, NULL };

/* The inputs of the stage table: an event with its facts. */
enum stage_input {
	SI_REAPED_0,       /* the stage's leader exited 0 */
	SI_REAPED_1,       /* ... exited 1 */
	SI_REAPED_MAIN,    /* ... exited 0, a MAINPID= carries on */
	SI_EXEC_OK,        /* its exec report: exec'd */
	SI_EXEC_FAILED,    /* ... failed before exec */
	SI_STEP_TIMEOUT,   /* the stage's timer */
	SI_PIDWAIT,        /* ... */
	SI_NO_DAEMON,      /* not found, within the wait */
	SI_NO_DAEMON_LATE, /* not found, the wait is over */
	SI_STEP_FAILED,    /* the next step's fork failed */
	SI_MAINPID,        /* the daemon is found */
	SI_COUNT
};

/* What one (stage, phase, input, job) must do. */
struct stage_want {
	int ignored;
	unsigned int sact;
	enum life_stage stage; /* after */
	int timer;             /* X_KEEP or X_SET(t): the stage's timer */
	int step_failed;       /* after */
	int exec_failed;       /* after */
	enum life_phase phase; /* after */
};

struct stage_case {
	enum life_stage stage;
	enum life_phase phase;
	enum stage_input input;
	int post, forking, failed;
};

/* The end of the run: exec_stop_post first, if the job has one. */
static void
stage_want_over(const struct stage_case *k, struct stage_want *w,
    unsigned int before, int failed)
{
	int stopping = k->phase == LIFE_TERM || k->phase == LIFE_KILL;

	w->sact = before | LIFE_S_MAIN_OVER;
	if (k->post) {
		w->sact |= LIFE_S_POST;
		w->stage = LIFE_STAGE_POST;
		w->timer = X_SET(LIFE_TIMER_STEP);
		w->step_failed = failed;
		return;
	}
	w->stage = LIFE_STAGE_NONE;
	w->timer =
	    k->stage == LIFE_STAGE_MAIN ? X_KEEP : X_SET(LIFE_TIMER_NONE);
	w->sact |= LIFE_S_END | (failed && !stopping ? LIFE_S_FAILED : 0);
	w->exec_failed |= failed && !stopping;
	w->step_failed = 0;
}

static void
stage_want_pre(const struct stage_case *k, struct stage_want *w)
{
	int stopping = k->phase == LIFE_TERM || k->phase == LIFE_KILL;

	switch (k->input) {
	case SI_REAPED_0:
	case SI_REAPED_MAIN:
	case SI_REAPED_1:
		w->timer = X_SET(LIFE_TIMER_NONE);
		if (k->input != SI_REAPED_1 && !k->failed && !stopping) {
			w->sact = LIFE_S_COMMAND;
			w->stage = LIFE_STAGE_MAIN;
			return;
		}
		stage_want_over(k, w, LIFE_S_PRE_FAILED, 1);
		if (!k->post)
			w->timer = X_SET(LIFE_TIMER_NONE);
		break;
	case SI_EXEC_FAILED:
		w->sact = LIFE_S_CAUSE;
		w->step_failed = 1;
		break;
	case SI_STEP_TIMEOUT:
		w->sact = LIFE_S_KILL;
		w->step_failed = 1;
		w->timer = X_SET(LIFE_TIMER_NONE);
		break;
	default:
		w->ignored = 1;
		break;
	}
}

static void
stage_want_main(const struct stage_case *k, struct stage_want *w)
{
	switch (k->input) {
	case SI_REAPED_MAIN:
		w->sact = LIFE_S_MAINPID;
		break;
	case SI_REAPED_0:
		if (k->forking && k->phase == LIFE_SPAWNED) {
			w->sact = LIFE_S_FIND;
			break;
		}
		/* FALLTHROUGH */
	case SI_REAPED_1:
		stage_want_over(k, w, 0, k->failed);
		break;
	case SI_STEP_FAILED:
		stage_want_over(k, w, 0, 1);
		break;
	case SI_EXEC_OK:
		if (k->phase != LIFE_SPAWNED)
			w->ignored = 1;
		else if (!k->forking)
			w->phase = LIFE_RUNNING;
		break;
	case SI_EXEC_FAILED:
		w->exec_failed = 1;
		break;
	case SI_NO_DAEMON:
	case SI_NO_DAEMON_LATE:
		w->stage = LIFE_STAGE_PIDWAIT;
		w->timer = X_SET(LIFE_TIMER_PIDWAIT);
		break;
	case SI_MAINPID:
		if (k->forking && k->phase == LIFE_SPAWNED)
			w->phase = LIFE_RUNNING;
		else
			w->ignored = 1;
		break;
	default:
		w->ignored = 1;
		break;
	}
}

static void
stage_want_pidwait(const struct stage_case *k, struct stage_want *w)
{
	switch (k->input) {
	case SI_PIDWAIT:
		if (k->phase == LIFE_SPAWNED) {
			w->sact = LIFE_S_FIND;
			w->timer = X_SET(LIFE_TIMER_NONE);
		} else
			stage_want_over(k, w, 0, k->failed);
		break;
	case SI_NO_DAEMON:
		w->timer = X_SET(LIFE_TIMER_PIDWAIT);
		break;
	case SI_NO_DAEMON_LATE:
		w->exec_failed = 1;
		stage_want_over(k, w, LIFE_S_NO_DAEMON, k->failed);
		break;
	case SI_EXEC_FAILED:
		w->exec_failed = 1;
		break;
	case SI_MAINPID:
		if (k->forking && k->phase == LIFE_SPAWNED) {
			w->phase = LIFE_RUNNING;
			w->stage = LIFE_STAGE_MAIN;
			w->timer = X_SET(LIFE_TIMER_NONE);
		} else
			w->ignored = 1;
		break;
	default:
		w->ignored = 1;
		break;
	}
}

static void
stage_want_post(const struct stage_case *k, struct stage_want *w)
{
	int stopping = k->phase == LIFE_TERM || k->phase == LIFE_KILL;

	switch (k->input) {
	case SI_REAPED_0:
	case SI_REAPED_1:
	case SI_REAPED_MAIN:
	case SI_STEP_FAILED:
		w->sact = (k->input == SI_STEP_FAILED ? 0 : LIFE_S_POST_ENDED) |
		    LIFE_S_END | (k->failed && !stopping ? LIFE_S_FAILED : 0);
		w->exec_failed = k->failed && !stopping;
		w->step_failed = 0;
		w->stage = LIFE_STAGE_NONE;
		w->timer = X_SET(LIFE_TIMER_NONE);
		break;
	case SI_EXEC_FAILED:
		w->sact = LIFE_S_CAUSE;
		w->step_failed = 1;
		break;
	case SI_STEP_TIMEOUT:
		w->sact = LIFE_S_KILL;
		w->timer = X_SET(LIFE_TIMER_NONE);
		break;
	default:
		w->ignored = 1;
		break;
	}
}

/* What the rules say for k. */
static void
stage_want(const struct stage_case *k, struct stage_want *w)
{
	static void (*const by[])(
	    const struct stage_case *, struct stage_want *) = {
		[LIFE_STAGE_PRE] = stage_want_pre,
		[LIFE_STAGE_MAIN] = stage_want_main,
		[LIFE_STAGE_PIDWAIT] = stage_want_pidwait,
		[LIFE_STAGE_POST] = stage_want_post,
	};

	memset(w, 0, sizeof(*w));
	w->stage = k->stage;
	w->timer = X_KEEP;
	w->step_failed = k->failed;
	w->phase = k->phase;
	by[k->stage](k, w);
}

/* The lifecycle and the event of k. */
static void
stage_setup(const struct stage_case *k, struct life *lf, struct life_input *in)
{
	static const enum life_event evs[SI_COUNT] = { LIFE_EV_REAPED,
		LIFE_EV_REAPED, LIFE_EV_REAPED, LIFE_EV_EXEC_OK,
		LIFE_EV_EXEC_FAILED, LIFE_EV_STEP_TIMEOUT, LIFE_EV_PIDWAIT,
		LIFE_EV_NO_DAEMON, LIFE_EV_NO_DAEMON, LIFE_EV_STEP_FAILED,
		LIFE_EV_MAINPID };

	spec_make(CONF_KIND_SERVICE, CONF_READY_EXEC);
	spec.pre_argv = step_argv;
	spec.stop_post_argv = k->post ? step_argv : NULL;
	spec.forking = k->forking;
	memset(lf, 0, sizeof(*lf));
	lf->phase = k->phase;
	lf->run = LIFE_RUN_LIVE;
	lf->lock = 1;
	lf->want = k->phase == LIFE_SPAWNED || k->phase == LIFE_RUNNING;
	lf->ready = k->phase != LIFE_SPAWNED;
	lf->timer = k->phase == LIFE_TERM ? LIFE_TIMER_STOP :
	    k->phase == LIFE_KILL         ? LIFE_TIMER_KILL :
	    k->phase == LIFE_SPAWNED      ? LIFE_TIMER_READY :
	                                    LIFE_TIMER_NONE;
	lf->stage = k->stage;
	lf->step_failed = k->failed;
	lf->stage_timer =
	    k->stage == LIFE_STAGE_PRE || k->stage == LIFE_STAGE_POST ?
	    LIFE_TIMER_STEP :
	    k->stage == LIFE_STAGE_PIDWAIT ? LIFE_TIMER_PIDWAIT :
	                                     LIFE_TIMER_NONE;
	lf->pidwait_step = LIFE_PIDWAIT_FIRST;
	lf->pidwait_until = NOW + 1 * SEC;
	memset(in, 0, sizeof(*in));
	in->ev = evs[k->input];
	in->now = k->input == SI_NO_DAEMON_LATE ? NOW + 2 * SEC : NOW;
	in->rnd = MID;
	in->status = k->input == SI_REAPED_1 ? EXITED(1) : EXITED(0);
	in->uptime = 10 * SEC;
	in->mainpid = k->input == SI_REAPED_MAIN;
}

static int
stage_fail(
    const struct stage_case *k, const char *what, long long got, long long want)
{
	fprintf(stderr,
	    "  (%s, %s, input %d, post %d forking %d failed %d): %s: got "
	    "%lld (%#llx), want %lld (%#llx)\n",
	    life_stage_name(k->stage), life_phase_name(k->phase), k->input,
	    k->post, k->forking, k->failed, what, got, got, want, want);
	return (1);
}

/* One case: 0 as the rules say, 1 not. */
static int
stage_one(const struct stage_case *k)
{
	struct stage_want w;
	struct life lf, before;
	struct life_input in;
	struct life_step st;

	stage_setup(k, &lf, &in);
	before = lf;
	life_step(&lf, &par, &in, &st);
	stage_want(k, &w);
	if (w.ignored || st.ignored) {
		if (w.ignored != st.ignored)
			return (
			    stage_fail(k, "ignored", st.ignored, w.ignored));
		if (!life_equal(&before, &lf) || st.sactions != 0 ||
		    st.actions != 0)
			return (stage_fail(k, "ignored, yet changed", 1, 0));
		return (0);
	}
	if (st.sactions != w.sact)
		return (stage_fail(k, "stage actions", st.sactions, w.sact));
	if (lf.stage != w.stage)
		return (stage_fail(k, "stage", lf.stage, w.stage));
	if (w.timer == X_KEEP && st.stage_timer_set)
		return (stage_fail(k, "stage timer set", st.stage_timer, -1));
	if (w.timer != X_KEEP &&
	    (!st.stage_timer_set || (int)st.stage_timer != w.timer - X_SET(0)))
		return (stage_fail(k, "stage timer",
		    st.stage_timer_set ? (long long)st.stage_timer : -1,
		    w.timer - X_SET(0)));
	if (lf.stage_timer !=
	    (st.stage_timer_set ? st.stage_timer : before.stage_timer))
		return (stage_fail(k, "l.stage_timer", lf.stage_timer, -1));
	if (lf.step_failed != w.step_failed)
		return (stage_fail(
		    k, "step_failed", lf.step_failed, w.step_failed));
	if (lf.exec_failed != w.exec_failed)
		return (stage_fail(
		    k, "exec_failed", lf.exec_failed, w.exec_failed));
	if (lf.phase != w.phase)
		return (stage_fail(k, "phase", lf.phase, w.phase));
	/* The stage never asks for the phase's answers, nor the reverse. */
	if ((st.actions & ANSWERS) != 0)
		return (stage_fail(k, "phase answer", st.actions, 0));
	return (0);
}

TEST(every_stage_phase_input)
{
	static const enum life_phase phases[] = { LIFE_SPAWNED, LIFE_RUNNING,
		LIFE_TERM, LIFE_KILL };
	struct stage_case k;
	int s, p, i, bits, checked = 0, failed = 0;

	for (s = LIFE_STAGE_PRE; s <= LIFE_STAGE_POST; s++)
		for (p = 0; p < 4; p++)
			for (i = 0; i < SI_COUNT; i++)
				for (bits = 0; bits < 8; bits++) {
					k.stage = (enum life_stage)s;
					k.phase = phases[p];
					k.input = (enum stage_input)i;
					k.post = bits & 1;
					k.forking = (bits >> 1) & 1;
					k.failed = (bits >> 2) & 1;
					failed += stage_one(&k);
					checked++;
				}
	printf("# %d (stage, phase, input, job) cases checked\n", checked);
	ASSERT_EQ(failed, 0);
	ASSERT_EQ(checked, 4 * 4 * SI_COUNT * 8);
	return (0);
}

TEST(names)
{
	int i;

	for (i = 0; i < LIFE_PHASE_COUNT; i++)
		ASSERT_OK(strcmp(life_phase_name((enum life_phase)i), "?"));
	for (i = 0; i < LIFE_EV_COUNT; i++)
		ASSERT_OK(strcmp(life_event_name((enum life_event)i), "?"));
	ASSERT_STREQ(life_phase_name(LIFE_PHASE_COUNT), "?");
	ASSERT_STREQ(life_event_name(LIFE_EV_COUNT), "?");
	ASSERT_STREQ(life_phase_name(LIFE_RECLAIM_KILL), "reclaim-kill");
	ASSERT_STREQ(life_event_name(LIFE_EV_ARM), "arm");
	ASSERT_EQ(life_timer_event(LIFE_TIMER_BACKOFF), LIFE_EV_BACKOFF_DONE);
	ASSERT_EQ(life_timer_event(LIFE_TIMER_READY), LIFE_EV_READY_TIMEOUT);
	ASSERT_EQ(life_timer_event(LIFE_TIMER_STOP), LIFE_EV_STOP_TIMEOUT);
	ASSERT_EQ(life_timer_event(LIFE_TIMER_KILL), LIFE_EV_KILL_POLL);
	ASSERT_EQ(life_timer_event(LIFE_TIMER_DRAIN), LIFE_EV_DRAIN_TIMEOUT);
	ASSERT_EQ(life_timer_event(LIFE_TIMER_RECHECK), LIFE_EV_RECHECK);
	ASSERT_EQ(life_state(LIFE_RECLAIM_KILL), JOB_BLOCKED);
	ASSERT_EQ(life_state(LIFE_DRAIN), JOB_STOPPING);
	ASSERT_EQ(life_state(LIFE_LOCKWAIT), JOB_STARTING);
	ASSERT_EQ(life_state(LIFE_PHASE_COUNT), JOB_STOPPED);
	return (0);
}

/* ---- scenarios ---- */

static struct life l;
static struct life_step o;
static uint64_t now;

/* Apply ev with the facts of in (its ev and now are set here). */
static unsigned int
go_in(enum life_event ev, struct life_input *in)
{
	in->ev = ev;
	in->now = now;
	life_step(&l, &par, in, &o);
	return (o.actions);
}

static unsigned int
go(enum life_event ev)
{
	struct life_input in;

	memset(&in, 0, sizeof(in));
	in.rnd = MID;
	return (go_in(ev, &in));
}

/* The leader was reaped after uptime, with status, its group left or not. */
static unsigned int
go_exit(int status, uint64_t uptime, int group_left)
{
	struct life_input in;

	memset(&in, 0, sizeof(in));
	in.rnd = MID;
	in.status = status;
	in.uptime = uptime;
	in.group_left = group_left;
	return (go_in(LIFE_EV_EXIT, &in));
}

static unsigned int
go_lock(enum life_event ev, int same, int spawning)
{
	struct life_input in;

	memset(&in, 0, sizeof(in));
	in.rnd = MID;
	in.same = same;
	in.spawning = spawning;
	return (go_in(ev, &in));
}

/* START of a stopped instance up to its spawn; 0 if all went as said. */
static int
start_to_spawn(void)
{
	ASSERT_EQ(go(LIFE_EV_START) & ANSWERS, LIFE_A_DEPS);
	ASSERT_EQ(l.want, 1);
	ASSERT_EQ(go(LIFE_EV_DEPS_OK) & ANSWERS, LIFE_A_LOCK);
	ASSERT_EQ(go(LIFE_EV_LOCK_OK) & ANSWERS, LIFE_A_SPAWN);
	ASSERT_EQ(l.lock, 1);
	go(LIFE_EV_SPAWNED);
	ASSERT_EQ(l.phase, LIFE_SPAWNED);
	ASSERT_EQ(l.run, LIFE_RUN_LIVE);
	return (0);
}

/* A fresh instance of the current spec, RUNNING. */
static int
up(void)
{
	life_init(&l);
	now = NOW;
	ASSERT_EQ(start_to_spawn(), 0);
	if (spec.ready == CONF_READY_NOTIFY)
		go(LIFE_EV_READY);
	else
		go(LIFE_EV_EXEC_OK);
	ASSERT_EQ(l.phase, LIFE_RUNNING);
	return (0);
}

TEST(start_ready_exec)
{
	spec_make(CONF_KIND_SERVICE, CONF_READY_EXEC);
	life_init(&l);
	ASSERT_EQ(l.phase, LIFE_STOPPED);
	ASSERT_EQ(start_to_spawn(), 0);
	ASSERT_EQ(o.timer_set, 1);
	ASSERT_EQ(o.timer, LIFE_TIMER_NONE);
	ASSERT_EQ(
	    go(LIFE_EV_EXEC_OK), LIFE_A_REASON_CLEAR | LIFE_A_RECORD_READY);
	ASSERT_EQ(l.phase, LIFE_RUNNING);
	ASSERT_EQ(l.ready, 1);
	ASSERT_EQ(life_state(l.phase), JOB_RUNNING);
	return (0);
}

TEST(forking_starter)
{
	spec_make(CONF_KIND_SERVICE, CONF_READY_EXEC);
	spec.forking = 1;
	life_init(&l);
	ASSERT_EQ(start_to_spawn(), 0);
	/* The starter and the main pid together within ready_timeout. */
	ASSERT_EQ(o.timer, LIFE_TIMER_READY);
	ASSERT_EQ(o.usec, spec.ready_timeout);
	/* The starter's exec is not the daemon's readiness. */
	ASSERT_EQ(go(LIFE_EV_EXEC_OK), 0);
	ASSERT_EQ(l.phase, LIFE_SPAWNED);
	ASSERT_EQ(
	    go(LIFE_EV_MAINPID), LIFE_A_REASON_CLEAR | LIFE_A_RECORD_READY);
	ASSERT_EQ(l.phase, LIFE_RUNNING);
	ASSERT_EQ(l.ready, 1);
	ASSERT_EQ(o.timer_set, 1);
	ASSERT_EQ(o.timer, LIFE_TIMER_NONE);
	return (0);
}

TEST(probe_ready_and_unhealthy)
{
	spec_make(CONF_KIND_SERVICE, CONF_READY_PROBE);
	life_init(&l);
	ASSERT_EQ(start_to_spawn(), 0);
	ASSERT_EQ(o.timer, LIFE_TIMER_READY); /* the probe has ready_timeout */
	ASSERT_EQ(go(LIFE_EV_EXEC_OK), 0);
	ASSERT_EQ(l.phase, LIFE_SPAWNED); /* exec is not ready */
	go(LIFE_EV_UNHEALTHY);            /* not yet RUNNING: nothing */
	ASSERT_EQ(o.ignored, 1);
	ASSERT_OK(go(LIFE_EV_READY) & LIFE_A_RECORD_READY);
	ASSERT_EQ(l.phase, LIFE_RUNNING);
	ASSERT_EQ(o.timer, LIFE_TIMER_NONE);
	/* Unhealthy: stopped, then restarted however it exits. */
	ASSERT_OK(go(LIFE_EV_UNHEALTHY) & LIFE_A_TERM);
	ASSERT_EQ(l.cause, LIFE_CAUSE_UNHEALTHY);
	ASSERT_EQ(l.phase, LIFE_TERM);
	go_exit(EXITED(0), 10 * SEC, 0);
	ASSERT_EQ(o.decision.success, 0);
	ASSERT_EQ(o.decision.state, JOB_STARTING); /* restarted at once */
	return (0);
}

TEST(forking_ready_timeout)
{
	spec_make(CONF_KIND_SERVICE, CONF_READY_EXEC);
	spec.forking = 1;
	life_init(&l);
	ASSERT_EQ(start_to_spawn(), 0);
	go(LIFE_EV_EXEC_OK);
	/* No main pid in time: stopped, a failed start. */
	ASSERT_OK(go(LIFE_EV_READY_TIMEOUT) & LIFE_A_TERM);
	ASSERT_EQ(l.phase, LIFE_TERM);
	ASSERT_EQ(l.cause, LIFE_CAUSE_READY_TIMEOUT);
	go_exit(EXITED(0), 10 * SEC, 0);
	ASSERT_EQ(o.decision.failed_start, 1);
	ASSERT_EQ(l.phase, LIFE_BACKOFF);
	return (0);
}

/* The leader of the run's stage was reaped with status. */
static unsigned int
go_reaped(int status, int mainpid)
{
	struct life_input in;

	memset(&in, 0, sizeof(in));
	in.rnd = MID;
	in.status = status;
	in.mainpid = mainpid;
	go_in(LIFE_EV_REAPED, &in);
	return (o.sactions);
}

TEST(pre_command_post)
{
	spec_make(CONF_KIND_SERVICE, CONF_READY_EXEC);
	spec.pre_argv = step_argv;
	spec.stop_post_argv = step_argv;
	life_init(&l);
	now = NOW;
	ASSERT_EQ(start_to_spawn(), 0);
	/* exec_start_pre leads, bounded by stop_timeout. */
	ASSERT_EQ(l.stage, LIFE_STAGE_PRE);
	ASSERT_EQ(o.stage_timer_set, 1);
	ASSERT_EQ(o.stage_timer, LIFE_TIMER_STEP);
	ASSERT_EQ(o.stage_usec, spec.stop_timeout);
	go(LIFE_EV_EXEC_OK); /* its exec is not the run's readiness */
	ASSERT_EQ(o.ignored, 1);
	ASSERT_EQ(l.phase, LIFE_SPAWNED);
	/* It exited 0: the command, and the step's timer goes. */
	ASSERT_EQ(go_reaped(EXITED(0), 0), LIFE_S_COMMAND);
	ASSERT_EQ(o.stage_timer, LIFE_TIMER_NONE);
	ASSERT_EQ(l.stage, LIFE_STAGE_MAIN);
	go(LIFE_EV_EXEC_OK);
	ASSERT_EQ(l.phase, LIFE_RUNNING);
	/* The command ended: exec_stop_post, then the end. */
	ASSERT_EQ(go_reaped(EXITED(1), 0), LIFE_S_MAIN_OVER | LIFE_S_POST);
	ASSERT_EQ(l.stage, LIFE_STAGE_POST);
	ASSERT_EQ(o.stage_timer, LIFE_TIMER_STEP);
	ASSERT_EQ(l.phase, LIFE_RUNNING); /* until the run is over */
	ASSERT_EQ(go_reaped(EXITED(3), 0), LIFE_S_POST_ENDED | LIFE_S_END);
	ASSERT_EQ(l.stage, LIFE_STAGE_NONE);
	ASSERT_EQ(l.exec_failed, 0); /* its end is the command's */
	go_exit(EXITED(1), 10 * SEC, 0);
	ASSERT_EQ(o.decision.failed_start, 0);
	ASSERT_OK(o.actions & LIFE_A_SPAWN); /* restart = "always" */
	ASSERT_EQ(l.stage, LIFE_STAGE_PRE);  /* from exec_start_pre again */
	return (0);
}

TEST(pre_failure_is_a_failed_start)
{
	spec_make(CONF_KIND_SERVICE, CONF_READY_EXEC);
	spec.pre_argv = step_argv;
	life_init(&l);
	now = NOW;
	ASSERT_EQ(start_to_spawn(), 0);
	ASSERT_EQ(go_reaped(EXITED(2), 0),
	    LIFE_S_PRE_FAILED | LIFE_S_MAIN_OVER | LIFE_S_FAILED | LIFE_S_END);
	ASSERT_EQ(l.exec_failed, 1);
	go_exit(EXITED(2), 1 * MS, 0);
	ASSERT_EQ(o.decision.failed_start, 1);
	ASSERT_EQ(l.phase, LIFE_BACKOFF);
	/* Its exec failed: the same, said at its end. */
	ASSERT_EQ(go(LIFE_EV_BACKOFF_DONE) & ANSWERS, LIFE_A_SPAWN);
	go(LIFE_EV_SPAWNED);
	ASSERT_EQ(go(LIFE_EV_EXEC_FAILED), 0);
	ASSERT_EQ(o.sactions, LIFE_S_CAUSE);
	ASSERT_EQ(l.exec_failed, 0);
	ASSERT_EQ(go_reaped(EXITED(0), 0) & LIFE_S_FAILED, LIFE_S_FAILED);
	/* Too slow: killed at stop_timeout, a failed start. */
	go_exit(EXITED(0), 1 * MS, 0);
	ASSERT_EQ(go(LIFE_EV_BACKOFF_DONE) & ANSWERS, LIFE_A_SPAWN);
	go(LIFE_EV_SPAWNED);
	go(LIFE_EV_STEP_TIMEOUT);
	ASSERT_EQ(o.sactions, LIFE_S_KILL);
	ASSERT_EQ(go_reaped(KILLED(9), 0) & LIFE_S_FAILED, LIFE_S_FAILED);
	return (0);
}

TEST(pre_stopped_is_no_failure)
{
	spec_make(CONF_KIND_SERVICE, CONF_READY_EXEC);
	spec.pre_argv = step_argv;
	life_init(&l);
	now = NOW;
	ASSERT_EQ(start_to_spawn(), 0);
	ASSERT_OK(go(LIFE_EV_STOP) & LIFE_A_TERM);
	/* Even an exit 0: the command does not start during a stop. */
	ASSERT_EQ(go_reaped(EXITED(0), 0),
	    LIFE_S_PRE_FAILED | LIFE_S_MAIN_OVER | LIFE_S_END);
	ASSERT_EQ(l.exec_failed, 0);
	go_exit(EXITED(0), 1 * MS, 0);
	ASSERT_EQ(l.phase, LIFE_STOPPED);
	ASSERT_EQ(o.decision.state, JOB_STOPPED);
	return (0);
}

TEST(forking_waits_for_its_daemon)
{
	uint64_t step = LIFE_PIDWAIT_FIRST, waited = 0;
	int looks = 0;

	spec_make(CONF_KIND_SERVICE, CONF_READY_EXEC);
	spec.forking = 1;
	spec.ready_timeout = 0;
	life_init(&l);
	now = NOW;
	ASSERT_EQ(start_to_spawn(), 0);
	go(LIFE_EV_EXEC_OK);
	/* The starter exited 0: its daemon is looked for. */
	ASSERT_EQ(go_reaped(EXITED(0), 0), LIFE_S_FIND);
	go(LIFE_EV_NO_DAEMON);
	ASSERT_EQ(l.stage, LIFE_STAGE_PIDWAIT);
	ASSERT_EQ(o.stage_timer, LIFE_TIMER_PIDWAIT);
	ASSERT_EQ(o.stage_usec, LIFE_PIDWAIT_FIRST);
	/* Again and again, doubling to LIFE_PIDWAIT_STEP_MAX. */
	while (o.stage_timer_set && o.stage_timer == LIFE_TIMER_PIDWAIT) {
		ASSERT_EQ(o.stage_usec, step);
		now += o.stage_usec;
		waited += o.stage_usec;
		ASSERT_EQ(go(LIFE_EV_PIDWAIT), 0);
		ASSERT_EQ(o.sactions, LIFE_S_FIND);
		go(LIFE_EV_NO_DAEMON);
		step = step * 2 > LIFE_PIDWAIT_STEP_MAX ?
		    LIFE_PIDWAIT_STEP_MAX :
		    step * 2;
		ASSERT_OK(++looks < 100);
	}
	/* Then it is a failed start. */
	ASSERT_OK(waited >= LIFE_PIDWAIT_MAX);
	ASSERT_EQ(o.sactions, LIFE_S_NO_DAEMON | LIFE_S_MAIN_OVER | LIFE_S_END);
	ASSERT_EQ(l.exec_failed, 1);
	go_exit(EXITED(0), 10 * SEC, 0);
	ASSERT_EQ(o.decision.failed_start, 1);
	/* Found on a later look: RUNNING, the wait ends. */
	ASSERT_EQ(go(LIFE_EV_BACKOFF_DONE) & ANSWERS, LIFE_A_SPAWN);
	go(LIFE_EV_SPAWNED);
	go_reaped(EXITED(0), 0);
	go(LIFE_EV_NO_DAEMON);
	go(LIFE_EV_PIDWAIT);
	go(LIFE_EV_MAINPID);
	ASSERT_EQ(l.phase, LIFE_RUNNING);
	ASSERT_EQ(l.stage, LIFE_STAGE_MAIN);
	ASSERT_EQ(o.stage_timer_set, 1);
	ASSERT_EQ(o.stage_timer, LIFE_TIMER_NONE);
	/* The daemon ended, but a MAINPID= of its session carries on. */
	go_reaped(EXITED(0), 1);
	ASSERT_EQ(o.sactions, LIFE_S_MAINPID);
	ASSERT_EQ(l.phase, LIFE_RUNNING);
	return (0);
}

TEST(forking_stopped_while_waiting)
{
	spec_make(CONF_KIND_SERVICE, CONF_READY_EXEC);
	spec.forking = 1;
	life_init(&l);
	now = NOW;
	ASSERT_EQ(start_to_spawn(), 0);
	go_reaped(EXITED(0), 0);
	go(LIFE_EV_NO_DAEMON);
	ASSERT_OK(go(LIFE_EV_STOP) & LIFE_A_TERM);
	ASSERT_EQ(go(LIFE_EV_PIDWAIT), 0);
	ASSERT_EQ(o.sactions, LIFE_S_MAIN_OVER | LIFE_S_END);
	ASSERT_EQ(l.exec_failed, 0);
	go_exit(EXITED(0), 1 * SEC, 0);
	ASSERT_EQ(l.phase, LIFE_STOPPED);
	return (0);
}

TEST(operator_intent)
{
	struct life_input in;

	spec_make(CONF_KIND_SERVICE, CONF_READY_EXEC);
	ASSERT_EQ(up(), 0);
	ASSERT_EQ(l.intent, LIFE_INTENT_NONE);
	/* The operator stops it: it stays down. */
	memset(&in, 0, sizeof(in));
	in.operator= 1;
	ASSERT_OK(go_in(LIFE_EV_STOP, &in) & LIFE_A_TERM);
	ASSERT_EQ(l.intent, LIFE_INTENT_DOWN);
	/* The shutdown's stop or a dependent's pull is not the operator. */
	go(LIFE_EV_STOP);
	ASSERT_EQ(l.intent, LIFE_INTENT_DOWN);
	go(LIFE_EV_START); /* a start of any kind forgets the stop */
	ASSERT_EQ(l.intent, LIFE_INTENT_NONE);
	go_exit(KILLED(15), 1 * SEC, 0);
	/* The operator starts it: it stays up, whatever stops it else. */
	memset(&in, 0, sizeof(in));
	in.operator= 1;
	go_in(LIFE_EV_START, &in);
	ASSERT_EQ(l.intent, LIFE_INTENT_UP);
	go(LIFE_EV_STOP);
	go(LIFE_EV_ARM);
	ASSERT_EQ(l.intent, LIFE_INTENT_UP);
	/* What state.db or the old instance said comes back as it was. */
	life_init(&l);
	life_intent_restore(&l, LIFE_INTENT_DOWN);
	ASSERT_EQ(l.intent, LIFE_INTENT_DOWN);
	life_intent_start(&l, 0); /* a start a pending reload takes over */
	ASSERT_EQ(l.intent, LIFE_INTENT_NONE);
	life_intent_start(&l, 1);
	ASSERT_EQ(l.intent, LIFE_INTENT_UP);
	return (0);
}

TEST(ready_notify)
{
	spec_make(CONF_KIND_SERVICE, CONF_READY_NOTIFY);
	life_init(&l);
	ASSERT_EQ(start_to_spawn(), 0);
	ASSERT_EQ(o.timer, LIFE_TIMER_READY);
	ASSERT_EQ(o.usec, spec.ready_timeout);
	ASSERT_EQ(go(LIFE_EV_EXEC_OK), 0);
	ASSERT_EQ(l.phase, LIFE_SPAWNED); /* exec is not ready */
	ASSERT_OK(go(LIFE_EV_READY) & LIFE_A_ARM_WATCHDOG);
	ASSERT_EQ(l.phase, LIFE_RUNNING);
	ASSERT_EQ(o.timer_set, 1);
	ASSERT_EQ(o.timer, LIFE_TIMER_NONE);
	go(LIFE_EV_READY); /* a second READY=1 means nothing */
	ASSERT_EQ(o.ignored, 1);
	return (0);
}

TEST(ready_timeout_is_a_failed_start)
{
	spec_make(CONF_KIND_SERVICE, CONF_READY_NOTIFY);
	life_init(&l);
	ASSERT_EQ(start_to_spawn(), 0);
	go(LIFE_EV_EXEC_OK);
	ASSERT_OK(go(LIFE_EV_READY_TIMEOUT) & LIFE_A_TERM);
	ASSERT_EQ(l.phase, LIFE_TERM);
	ASSERT_EQ(l.cause, LIFE_CAUSE_READY_TIMEOUT);
	ASSERT_EQ(o.timer, LIFE_TIMER_STOP);
	ASSERT_EQ(o.usec, spec.stop_timeout);
	/* Long enough, and exit 0 on stop_signal: still a failed start. */
	go_exit(EXITED(0), 10 * SEC, 0);
	ASSERT_EQ(o.decided, 1);
	ASSERT_EQ(o.decision.failed_start, 1);
	ASSERT_EQ(o.decision.success, 0);
	ASSERT_EQ(l.phase, LIFE_BACKOFF);
	ASSERT_EQ(l.failures, 1);
	return (0);
}

TEST(crash_in_min_uptime_backs_off)
{
	static const uint32_t rnds[] = { 0, MID, 0xffffffffU };
	struct life_input in;
	size_t i;

	spec_make(CONF_KIND_SERVICE, CONF_READY_EXEC);
	for (i = 0; i < sizeof(rnds) / sizeof(rnds[0]); i++) {
		ASSERT_EQ(up(), 0);
		memset(&in, 0, sizeof(in));
		in.rnd = rnds[i];
		in.status = KILLED(11);
		in.uptime = spec.min_uptime - 1;
		go_in(LIFE_EV_EXIT, &in);
		ASSERT_EQ(l.phase, LIFE_BACKOFF);
		ASSERT_EQ(o.actions & (LIFE_A_RELEASE | ANSWERS), 0);
		ASSERT_OK(o.actions & LIFE_A_RECORD_END);
		ASSERT_EQ(o.timer, LIFE_TIMER_BACKOFF);
		ASSERT_EQ(o.usec, l.delay);
		/* restart_delay, give or take the 10% of jitter */
		ASSERT_OK(l.delay >= spec.restart_delay * 9 / 10);
		ASSERT_OK(l.delay <= spec.restart_delay_max);
		if (rnds[i] == MID)
			ASSERT_EQ(l.delay, spec.restart_delay);
		ASSERT_EQ(l.lock, 1);
		ASSERT_EQ(l.run, LIFE_RUN_NONE);
		/* The lock is kept: straight to the spawn. */
		ASSERT_EQ(go(LIFE_EV_BACKOFF_DONE) & ANSWERS, LIFE_A_SPAWN);
	}
	return (0);
}

TEST(max_restarts_gives_fatal)
{
	unsigned int i;

	spec_make(CONF_KIND_SERVICE, CONF_READY_EXEC);
	ASSERT_EQ(up(), 0);
	for (i = 1; i <= (unsigned int)spec.max_restarts; i++) {
		go_exit(EXITED(1), 0, 0);
		ASSERT_EQ(l.phase, LIFE_BACKOFF);
		ASSERT_EQ(l.failures, i);
		ASSERT_OK(l.delay <= spec.restart_delay_max);
		ASSERT_EQ(go(LIFE_EV_BACKOFF_DONE) & ANSWERS, LIFE_A_SPAWN);
		go(LIFE_EV_SPAWNED);
		go(LIFE_EV_EXEC_OK);
		ASSERT_EQ(l.phase, LIFE_RUNNING);
	}
	ASSERT_OK(go_exit(EXITED(1), 0, 0) & LIFE_A_RELEASE);
	ASSERT_EQ(l.phase, LIFE_FATAL);
	ASSERT_EQ(l.lock, 0);
	ASSERT_EQ(l.want, 0);
	/* A start begins afresh. */
	ASSERT_EQ(go(LIFE_EV_START) & ANSWERS, LIFE_A_DEPS);
	ASSERT_EQ(l.failures, 0);
	return (0);
}

TEST(start_during_stop_starts_again)
{
	spec_make(CONF_KIND_SERVICE, CONF_READY_EXEC);
	ASSERT_EQ(up(), 0);
	ASSERT_OK(go(LIFE_EV_STOP) & LIFE_A_TERM);
	ASSERT_EQ(l.phase, LIFE_TERM);
	ASSERT_EQ(go(LIFE_EV_START), 0);
	ASSERT_EQ(l.then, LIFE_THEN_START);
	ASSERT_EQ(l.phase, LIFE_TERM);
	ASSERT_EQ(go_exit(KILLED(15), 5 * SEC, 1) & ANSWERS, 0);
	ASSERT_EQ(l.phase, LIFE_TERM);
	ASSERT_EQ(l.run, LIFE_RUN_GROUP);
	ASSERT_EQ(go(LIFE_EV_GROUP_GONE) & ANSWERS, LIFE_A_DEPS);
	ASSERT_EQ(l.run, LIFE_RUN_NONE);
	ASSERT_EQ(l.then, LIFE_THEN_POLICY);
	ASSERT_EQ(go(LIFE_EV_DEPS_OK) & ANSWERS, LIFE_A_SPAWN);
	go(LIFE_EV_SPAWNED);
	ASSERT_EQ(l.phase, LIFE_SPAWNED);
	return (0);
}

TEST(stop_after_start_during_stop_stays_stopped)
{
	spec_make(CONF_KIND_SERVICE, CONF_READY_EXEC);
	ASSERT_EQ(up(), 0);
	go(LIFE_EV_STOP);
	go(LIFE_EV_START);
	ASSERT_EQ(go(LIFE_EV_STOP) & (LIFE_A_TERM | ANSWERS), 0);
	ASSERT_EQ(l.then, LIFE_THEN_STOP);
	ASSERT_EQ(l.want, 0);
	ASSERT_OK(go_exit(KILLED(15), 5 * SEC, 0) & LIFE_A_RELEASE);
	ASSERT_EQ(o.actions & ANSWERS, 0);
	ASSERT_EQ(l.phase, LIFE_STOPPED);
	ASSERT_EQ(l.lock, 0);
	return (0);
}

TEST(leader_exit_with_group_left)
{
	spec_make(CONF_KIND_SERVICE, CONF_READY_EXEC);
	ASSERT_EQ(up(), 0);
	ASSERT_OK(go_exit(EXITED(1), 5 * SEC, 1) & LIFE_A_TERM);
	ASSERT_EQ(o.decision.state, JOB_STARTING);
	ASSERT_EQ(o.actions & ANSWERS, 0);
	ASSERT_EQ(l.phase, LIFE_TERM);
	ASSERT_EQ(l.cause, LIFE_CAUSE_GROUP);
	ASSERT_EQ(l.run, LIFE_RUN_GROUP);
	ASSERT_EQ(o.timer, LIFE_TIMER_STOP);
	/* The pending decision (a restart) applies once it is gone. */
	go(LIFE_EV_GROUP_GONE);
	ASSERT_OK(o.actions & LIFE_A_GROUP_DONE);
	ASSERT_EQ(o.actions & ANSWERS, LIFE_A_SPAWN);
	ASSERT_EQ(l.restarts, 1);
	return (0);
}

TEST(stop_timeout_kills_and_polls)
{
	struct life_input in;

	spec_make(CONF_KIND_SERVICE, CONF_READY_EXEC);
	ASSERT_EQ(up(), 0);
	go(LIFE_EV_STOP);
	ASSERT_OK(go(LIFE_EV_STOP_TIMEOUT) & LIFE_A_KILL);
	ASSERT_EQ(l.phase, LIFE_KILL);
	ASSERT_EQ(o.timer, LIFE_TIMER_KILL);
	ASSERT_EQ(o.usec, par.recheck_max);
	go_exit(KILLED(9), 5 * SEC, 1);
	ASSERT_EQ(l.phase, LIFE_KILL);
	ASSERT_EQ(o.actions & LIFE_A_TERM, 0); /* SIGKILL was sent */
	memset(&in, 0, sizeof(in));
	in.group_alive = 1;
	ASSERT_OK(go_in(LIFE_EV_KILL_POLL, &in) & LIFE_A_KILL);
	ASSERT_EQ(l.phase, LIFE_KILL);
	ASSERT_EQ(o.timer, LIFE_TIMER_KILL);
	in.group_alive = 0;
	ASSERT_OK(go_in(LIFE_EV_KILL_POLL, &in) & LIFE_A_GROUP_DONE);
	ASSERT_EQ(l.phase, LIFE_STOPPED);
	ASSERT_EQ(l.run, LIFE_RUN_NONE);
	ASSERT_EQ(l.lock, 0);
	return (0);
}

/* START up to the lock's answer, from any phase without a run. */
static int
to_lock(void)
{
	ASSERT_EQ(go(LIFE_EV_RECHECK) & ANSWERS, LIFE_A_DEPS);
	ASSERT_EQ(go(LIFE_EV_DEPS_OK) & ANSWERS, LIFE_A_LOCK);
	return (0);
}

/*
 * A cluster job: the start waits for its lease; a fence stops the run and
 * gives the lock up with it, so the next start asks for a new lease
 * instead of spawning on the lock it had.
 */
TEST(fence_then_new_lease)
{
	spec_make(CONF_KIND_SERVICE, CONF_READY_EXEC);
	life_init(&l);
	now = NOW;
	go(LIFE_EV_START);
	ASSERT_EQ(go(LIFE_EV_DEPS_OK) & ANSWERS, LIFE_A_LOCK);
	ASSERT_EQ(go(LIFE_EV_LOCK_WAIT) & ANSWERS, 0);
	ASSERT_EQ(l.phase, LIFE_LEASE);
	ASSERT_EQ(life_state(l.phase), JOB_STARTING);
	ASSERT_EQ(l.timer, LIFE_TIMER_NONE);
	/* the lease came: from the top, then the lock */
	ASSERT_EQ(to_lock(), 0);
	ASSERT_EQ(go(LIFE_EV_LOCK_OK) & ANSWERS, LIFE_A_SPAWN);
	go(LIFE_EV_SPAWNED);
	go(LIFE_EV_EXEC_OK);
	ASSERT_EQ(l.phase, LIFE_RUNNING);
	ASSERT_OK(go(LIFE_EV_FENCE) & LIFE_A_TERM);
	ASSERT_EQ(l.phase, LIFE_TERM);
	ASSERT_EQ(l.cause, LIFE_CAUSE_FENCE);
	ASSERT_EQ(o.usec, spec.stop_timeout);
	/* gone: the lock goes, and the start begins again, not a spawn */
	ASSERT_EQ(go_exit(KILLED(15), 10 * SEC, 0) & (LIFE_A_RELEASE | ANSWERS),
	    LIFE_A_RELEASE | LIFE_A_DEPS);
	ASSERT_EQ(l.lock, 0);
	ASSERT_EQ(l.fenced, 0);
	ASSERT_EQ(l.failures, 0);
	ASSERT_EQ(go(LIFE_EV_DEPS_OK) & ANSWERS, LIFE_A_LOCK);
	go(LIFE_EV_LOCK_WAIT);
	ASSERT_EQ(l.phase, LIFE_LEASE);
	/* a stop while waiting for the lease lets it go */
	ASSERT_OK(go(LIFE_EV_STOP) & LIFE_A_RELEASE);
	ASSERT_EQ(l.phase, LIFE_STOPPED);
	return (0);
}

/* A fence during BACKOFF: the restart takes a new lease first. */
TEST(fence_in_backoff)
{
	spec_make(CONF_KIND_SERVICE, CONF_READY_EXEC);
	life_init(&l);
	now = NOW;
	go(LIFE_EV_START);
	go(LIFE_EV_DEPS_OK);
	go(LIFE_EV_LOCK_OK);
	go(LIFE_EV_SPAWNED);
	go(LIFE_EV_EXEC_OK);
	go_exit(EXITED(1), 10 * MS, 0);
	ASSERT_EQ(l.phase, LIFE_BACKOFF);
	ASSERT_EQ(l.lock, 1);
	ASSERT_OK(go(LIFE_EV_FENCE) & LIFE_A_RELEASE);
	ASSERT_EQ(l.lock, 0);
	ASSERT_EQ(l.phase, LIFE_BACKOFF);
	ASSERT_EQ(go(LIFE_EV_BACKOFF_DONE) & ANSWERS, LIFE_A_DEPS);
	return (0);
}

/* After a failed start: the backoff is over, the run is up again. */
static void
again(void)
{
	go(LIFE_EV_BACKOFF_DONE);
	go(LIFE_EV_SPAWNED);
	go(LIFE_EV_EXEC_OK);
}

/*
 * A cluster service failing on its holder: at handover_after failed starts
 * in a row the lease goes, marked failed (HANDOVER with the RELEASE), and
 * the start waits for it again as a standby; a success in between starts
 * the count over; the policy giving up here (max_restarts) hands over
 * too, never FATAL; without handover_after (not a cluster job) nothing
 * changes.
 */
TEST(cluster_handover)
{
	unsigned int i;

	spec_make(CONF_KIND_SERVICE, CONF_READY_EXEC);
	spec.max_restarts = 0;
	par.handover_after = 3;
	ASSERT_EQ(up(), 0);
	for (i = 1; i < 3; i++) {
		ASSERT_EQ(go_exit(EXITED(1), 0, 0) & LIFE_A_HANDOVER, 0);
		ASSERT_EQ(l.phase, LIFE_BACKOFF);
		again();
	}
	/* a run that lasted min_uptime: the count starts over */
	go_exit(EXITED(1), spec.min_uptime, 0);
	ASSERT_EQ(l.failures, 0);
	go(LIFE_EV_SPAWNED);
	go(LIFE_EV_EXEC_OK);
	for (i = 1; i < 3; i++) {
		go_exit(EXITED(1), 0, 0);
		again();
	}
	ASSERT_EQ(go_exit(EXITED(1), 0, 0) &
	        (LIFE_A_HANDOVER | LIFE_A_RELEASE | ANSWERS),
	    LIFE_A_HANDOVER | LIFE_A_RELEASE | LIFE_A_DEPS);
	ASSERT_EQ(l.lock, 0);
	ASSERT_EQ(l.want, 1);
	ASSERT_EQ(l.failures, 0);
	ASSERT_EQ(go(LIFE_EV_DEPS_OK) & ANSWERS, LIFE_A_LOCK);
	go(LIFE_EV_LOCK_WAIT);
	ASSERT_EQ(l.phase, LIFE_LEASE);
	/* max_restarts reached here first: a handover, not FATAL */
	spec.max_restarts = 1;
	ASSERT_EQ(up(), 0);
	go_exit(EXITED(1), 0, 0);
	again();
	ASSERT_OK(go_exit(EXITED(1), 0, 0) & LIFE_A_HANDOVER);
	ASSERT_EQ(l.want, 1);
	ASSERT_OK(l.phase != LIFE_FATAL);
	/* a stop asked meanwhile is a stop, not a handover */
	ASSERT_EQ(up(), 0);
	spec.max_restarts = 0;
	go(LIFE_EV_STOP);
	ASSERT_EQ(go_exit(EXITED(1), 0, 0) & LIFE_A_HANDOVER, 0);
	ASSERT_EQ(l.phase, LIFE_STOPPED);
	/* not a cluster job: FATAL as ever */
	par.handover_after = 0;
	spec.max_restarts = 1;
	ASSERT_EQ(up(), 0);
	go_exit(EXITED(1), 0, 0);
	again();
	ASSERT_EQ(go_exit(EXITED(1), 0, 0) & LIFE_A_HANDOVER, 0);
	ASSERT_EQ(l.phase, LIFE_FATAL);
	return (0);
}

TEST(leftover_is_reclaimed)
{
	spec_make(CONF_KIND_SERVICE, CONF_READY_EXEC);
	life_init(&l);
	now = NOW;
	go(LIFE_EV_START);
	go(LIFE_EV_DEPS_OK);
	ASSERT_OK(go_lock(LIFE_EV_LOCK_LEFTOVER, 0, 0) & LIFE_A_LEFTOVER_TERM);
	ASSERT_EQ(l.phase, LIFE_RECLAIM);
	ASSERT_EQ(o.timer, LIFE_TIMER_RECHECK);
	ASSERT_EQ(o.usec, par.recheck_min);
	ASSERT_EQ(l.kill_at, NOW + spec.stop_timeout);
	/* The same leftover, before kill_at: no signal, slower looks. */
	now += o.usec;
	ASSERT_EQ(to_lock(), 0);
	ASSERT_EQ(go_lock(LIFE_EV_LOCK_LEFTOVER, 1, 0) &
	        (LIFE_A_LEFTOVER_TERM | LIFE_A_LEFTOVER_KILL),
	    0);
	ASSERT_EQ(l.phase, LIFE_RECLAIM);
	ASSERT_EQ(o.usec, 2 * par.recheck_min);
	/* The timer never passes kill_at. */
	now = l.kill_at - 50 * MS;
	ASSERT_EQ(to_lock(), 0);
	go_lock(LIFE_EV_LOCK_LEFTOVER, 1, 0);
	ASSERT_EQ(o.usec, 50 * MS);
	now = l.kill_at;
	ASSERT_EQ(to_lock(), 0);
	ASSERT_OK(go_lock(LIFE_EV_LOCK_LEFTOVER, 1, 0) & LIFE_A_LEFTOVER_KILL);
	ASSERT_EQ(l.phase, LIFE_RECLAIM_KILL);
	ASSERT_EQ(life_state(l.phase), JOB_BLOCKED);
	ASSERT_EQ(to_lock(), 0);
	ASSERT_EQ(go_lock(LIFE_EV_LOCK_LEFTOVER, 1, 0) &
	        (LIFE_A_LEFTOVER_TERM | LIFE_A_LEFTOVER_KILL),
	    0);
	ASSERT_EQ(l.phase, LIFE_RECLAIM_KILL);
	/* Gone at last: the lock is ours. */
	ASSERT_EQ(to_lock(), 0);
	ASSERT_EQ(go(LIFE_EV_LOCK_OK) & ANSWERS, LIFE_A_SPAWN);
	return (0);
}

TEST(recheck_doubles_up_to_max)
{
	uint64_t want = 100 * MS;
	int i;

	spec_make(CONF_KIND_SERVICE, CONF_READY_EXEC);
	life_init(&l);
	go(LIFE_EV_START);
	go(LIFE_EV_DEPS_OK);
	ASSERT_OK(go_lock(LIFE_EV_LOCK_FOREIGN, 0, 0) & LIFE_A_NAME_HOLDER);
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(l.phase, LIFE_FOREIGN);
		ASSERT_EQ(o.timer, LIFE_TIMER_RECHECK);
		ASSERT_EQ(o.usec, want);
		want = want * 2 > par.recheck_max ? par.recheck_max : want * 2;
		ASSERT_EQ(to_lock(), 0);
		ASSERT_EQ(
		    go_lock(LIFE_EV_LOCK_FOREIGN, 0, 0) & LIFE_A_NAME_HOLDER,
		    0);
	}
	ASSERT_EQ(o.usec, par.recheck_max);
	return (0);
}

TEST(foreign_while_spawning_quick_retries)
{
	unsigned int i;

	spec_make(CONF_KIND_SERVICE, CONF_READY_EXEC);
	life_init(&l);
	go(LIFE_EV_START);
	go(LIFE_EV_DEPS_OK);
	for (i = 1; i <= par.quick_max; i++) {
		ASSERT_EQ(
		    go_lock(LIFE_EV_LOCK_FOREIGN, 0, 1) & LIFE_A_NAME_HOLDER,
		    0);
		ASSERT_EQ(l.phase, LIFE_LOCKWAIT);
		ASSERT_EQ(l.quick, i);
		ASSERT_EQ(o.timer, LIFE_TIMER_RECHECK);
		ASSERT_EQ(o.usec, par.quick_retry);
		ASSERT_EQ(to_lock(), 0);
	}
	ASSERT_OK(go_lock(LIFE_EV_LOCK_FOREIGN, 0, 1) & LIFE_A_NAME_HOLDER);
	ASSERT_EQ(l.phase, LIFE_FOREIGN);
	ASSERT_EQ(o.usec, par.recheck_min);
	ASSERT_EQ(to_lock(), 0);
	ASSERT_EQ(go_lock(LIFE_EV_LOCK_FOREIGN, 0, 1) & LIFE_A_NAME_HOLDER, 0);
	ASSERT_EQ(l.phase, LIFE_FOREIGN);
	/* The lock ours at last: the count starts over. */
	ASSERT_EQ(to_lock(), 0);
	go(LIFE_EV_LOCK_OK);
	ASSERT_EQ(l.quick, 0);
	return (0);
}

/* A lock error is a failed start; it waits in BACKOFF. */
TEST(lock_error_backs_off)
{
	spec_make(CONF_KIND_QUEUE, CONF_READY_EXEC);
	life_init(&l);
	go(LIFE_EV_START);
	go(LIFE_EV_DEPS_OK);
	ASSERT_OK(go(LIFE_EV_LOCK_ERROR) & LIFE_A_START_FAILED);
	ASSERT_EQ(l.phase, LIFE_BACKOFF);
	ASSERT_EQ(l.lock, 0);
	ASSERT_EQ(o.timer, LIFE_TIMER_BACKOFF);
	ASSERT_EQ(o.usec, par.recheck_max);
	/* A service without restart_delay: never a loop either. */
	spec_make(CONF_KIND_SERVICE, CONF_READY_EXEC);
	spec.restart_delay = 0;
	life_init(&l);
	go(LIFE_EV_START);
	go(LIFE_EV_DEPS_OK);
	ASSERT_OK(go(LIFE_EV_LOCK_ERROR) & LIFE_A_START_FAILED);
	ASSERT_EQ(l.phase, LIFE_BACKOFF);
	ASSERT_EQ(o.usec, par.recheck_max);
	/* With a restart_delay, the restart policy's delay. */
	spec.restart_delay = 100 * MS;
	life_init(&l);
	go(LIFE_EV_START);
	go(LIFE_EV_DEPS_OK);
	go(LIFE_EV_LOCK_ERROR);
	ASSERT_EQ(l.phase, LIFE_BACKOFF);
	ASSERT_EQ(o.usec, spec.restart_delay);
	ASSERT_EQ(l.failures, 1);
	/* Without the lock, BACKOFF_DONE takes it again. */
	ASSERT_EQ(go(LIFE_EV_BACKOFF_DONE) & ANSWERS, LIFE_A_DEPS);
	return (0);
}

/* A queue slot up to WAITING, its lock held. */
static int
queue_waiting(void)
{
	life_init(&l);
	go(LIFE_EV_START);
	go(LIFE_EV_DEPS_OK);
	ASSERT_EQ(go(LIFE_EV_LOCK_OK) & (LIFE_A_KICK | ANSWERS), LIFE_A_KICK);
	ASSERT_EQ(l.phase, LIFE_WAITING);
	ASSERT_EQ(l.lock, 1);
	ASSERT_EQ(life_state(l.phase), JOB_WAITING);
	return (0);
}

/* WAITING, a message, RUNNING. */
static int
queue_running(void)
{
	ASSERT_EQ(queue_waiting(), 0);
	ASSERT_EQ(go(LIFE_EV_MSG) & ANSWERS, LIFE_A_DEPS);
	ASSERT_EQ(l.msg, 1);
	ASSERT_EQ(go(LIFE_EV_DEPS_OK) & ANSWERS, LIFE_A_SPAWN);
	ASSERT_OK(go(LIFE_EV_SPAWNED) & LIFE_A_ARM_DEADLINE);
	go(LIFE_EV_EXEC_OK);
	ASSERT_EQ(l.phase, LIFE_RUNNING);
	return (0);
}

TEST(queue_slot)
{
	spec_make(CONF_KIND_QUEUE, CONF_READY_EXEC);
	ASSERT_EQ(queue_running(), 0);
	/* The message ends, the slot keeps its lock for the next. */
	ASSERT_OK(go_exit(EXITED(1), 0, 0) & LIFE_A_KICK);
	ASSERT_EQ(o.actions & (LIFE_A_RELEASE | ANSWERS), 0);
	ASSERT_EQ(l.phase, LIFE_WAITING);
	ASSERT_EQ(l.lock, 1);
	/* A stop lets the message finish, within drain_timeout. */
	ASSERT_EQ(queue_running(), 0);
	ASSERT_EQ(
	    go(LIFE_EV_STOP) & (LIFE_A_DRAIN | LIFE_A_TERM), LIFE_A_DRAIN);
	ASSERT_EQ(l.phase, LIFE_DRAIN);
	ASSERT_EQ(o.timer, LIFE_TIMER_DRAIN);
	ASSERT_EQ(o.usec, spec.drain_timeout);
	ASSERT_OK(go(LIFE_EV_DRAIN_TIMEOUT) & LIFE_A_TERM);
	ASSERT_EQ(l.phase, LIFE_TERM);
	ASSERT_EQ(l.cause, LIFE_CAUSE_DRAIN);
	ASSERT_OK(go_exit(KILLED(15), 5 * SEC, 0) & LIFE_A_RELEASE);
	ASSERT_EQ(l.phase, LIFE_STOPPED);
	/* drain_timeout 0: the message is cancelled at once. */
	spec.drain_timeout = 0;
	ASSERT_EQ(queue_running(), 0);
	ASSERT_EQ(go(LIFE_EV_STOP) & (LIFE_A_DRAIN | LIFE_A_TERM),
	    LIFE_A_DRAIN | LIFE_A_TERM);
	ASSERT_EQ(l.phase, LIFE_TERM);
	ASSERT_EQ(l.cause, LIFE_CAUSE_DRAIN);
	ASSERT_EQ(o.timer, LIFE_TIMER_STOP);
	/* STOP of a free slot gives its lock up. */
	ASSERT_EQ(queue_waiting(), 0);
	ASSERT_OK(go(LIFE_EV_STOP) & LIFE_A_RELEASE);
	ASSERT_EQ(l.phase, LIFE_STOPPED);
	ASSERT_EQ(l.lock, 0);
	return (0);
}

TEST(periodic)
{
	struct life_input in;

	spec_make(CONF_KIND_PERIODIC, CONF_READY_EXEC);
	life_init(&l);
	ASSERT_OK(go(LIFE_EV_ARM) & LIFE_A_ARM_SLOT);
	ASSERT_EQ(o.actions & ANSWERS, 0);
	ASSERT_EQ(l.phase, LIFE_WAITING);
	ASSERT_EQ(l.want, 1);
	/* A slot missed while vigild was down runs at once. */
	life_init(&l);
	memset(&in, 0, sizeof(in));
	in.missed = 1;
	ASSERT_EQ(go_in(LIFE_EV_ARM, &in) & ANSWERS, LIFE_A_DEPS);
	life_init(&l);
	go(LIFE_EV_ARM);
	ASSERT_EQ(go(LIFE_EV_SLOT) & (LIFE_A_NEXT_SLOT | ANSWERS),
	    LIFE_A_NEXT_SLOT | LIFE_A_DEPS);
	go(LIFE_EV_DEPS_OK);
	go(LIFE_EV_LOCK_OK);
	ASSERT_OK(go(LIFE_EV_SPAWNED) & LIFE_A_ARM_DEADLINE);
	go(LIFE_EV_EXEC_OK);
	ASSERT_EQ(l.phase, LIFE_RUNNING);
	/* A slot while it runs is skipped. */
	ASSERT_EQ(go(LIFE_EV_SLOT) & (LIFE_A_SKIP | LIFE_A_NEXT_SLOT | ANSWERS),
	    LIFE_A_SKIP | LIFE_A_NEXT_SLOT);
	ASSERT_EQ(l.phase, LIFE_RUNNING);
	ASSERT_OK(go(LIFE_EV_TIMEOUT) & LIFE_A_TERM);
	ASSERT_EQ(l.phase, LIFE_TERM);
	ASSERT_EQ(l.cause, LIFE_CAUSE_TIMEOUT);
	ASSERT_OK(go_exit(KILLED(15), 5 * SEC, 0) & LIFE_A_RELEASE);
	ASSERT_EQ(o.actions & ANSWERS, 0);
	ASSERT_EQ(l.phase, LIFE_WAITING);
	ASSERT_EQ(l.lock, 0);
	ASSERT_EQ(l.want, 1);
	return (0);
}

TEST(shutdown_stops_everything)
{
	spec_make(CONF_KIND_SERVICE, CONF_READY_EXEC);
	ASSERT_EQ(up(), 0);
	par.shutdown = 1;
	ASSERT_OK(go(LIFE_EV_STOP) & LIFE_A_TERM);
	go_exit(KILLED(15), 5 * SEC, 0);
	ASSERT_EQ(l.phase, LIFE_STOPPED);
	ASSERT_EQ(o.decision.state, JOB_STOPPED);
	/* A restart in BACKOFF does not happen at shutdown. */
	par.shutdown = 0;
	ASSERT_EQ(up(), 0);
	go_exit(EXITED(1), 0, 0);
	ASSERT_EQ(l.phase, LIFE_BACKOFF);
	par.shutdown = 1;
	ASSERT_OK(go(LIFE_EV_BACKOFF_DONE) & LIFE_A_RELEASE);
	ASSERT_EQ(o.actions & ANSWERS, 0);
	ASSERT_EQ(l.phase, LIFE_STOPPED);
	ASSERT_EQ(l.lock, 0);
	/* Nor a start. */
	ASSERT_EQ(go(LIFE_EV_START) & ANSWERS, 0);
	ASSERT_EQ(l.phase, LIFE_STOPPED);
	return (0);
}

/* ---- random sequences from a simulated world ---- */

#define HIST 16
#define STEPS 300  /* per seed, at most */
#define SETTLE 400 /* steps a stop may take once the world only answers */

struct world {
	struct life l;
	uint64_t rng, now;
	unsigned int seed, step;
	enum life_run run;       /* what the processes are */
	int leader;              /* the leader of the run's stage lives */
	int execd;               /* the run reached exec, or failed before */
	unsigned int asked;      /* LIFE_A_DEPS/_LOCK/_SPAWN to answer */
	enum life_event sanswer; /* the answer a stage's action gets, or 0 */
	enum life_intent intent; /* the operator's word, as the world saw */
	enum life_timer timer, stimer;
	int watchdog, deadline, slot;
	int msg;              /* queue: a message claimed, not settled */
	int stopped;          /* a STOP, and no start since */
	int settle;           /* only world events, since this many steps */
	enum life_phase idle; /* the phase a stop may stay in */
	int shutdown_in;      /* steps until shutdown, then its STOP */
	struct {
		enum life_event ev;
		enum life_phase from, to;
		unsigned int actions;
	} hist[HIST];
};

static uint32_t
rnd32(struct world *w)
{
	uint64_t z = (w->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return ((uint32_t)((z ^ (z >> 31)) >> 32));
}

static unsigned int
rnd_n(struct world *w, unsigned int n)
{
	return (rnd32(w) % n);
}

/* A job with numbers of this seed. */
static void
prop_spec(struct world *w)
{
	static const enum conf_kind kinds[] = { CONF_KIND_SERVICE,
		CONF_KIND_PERIODIC, CONF_KIND_QUEUE };
	enum conf_kind kind = kinds[rnd_n(w, 3)];

	/* One call per statement: the same numbers with every compiler. */
	spec_make(kind, rnd_n(w, 2) ? CONF_READY_NOTIFY : CONF_READY_EXEC);
	spec.restart = (enum conf_restart)rnd_n(w, 3);
	spec.restart_delay = rnd_n(w, 4) == 0 ? 0 : 100 * MS;
	spec.restart_delay_max = rnd_n(w, 2) ? 1 * SEC : 5 * SEC;
	spec.max_restarts = (int)rnd_n(w, 3);
	spec.ready_timeout = rnd_n(w, 3) == 0 ? 0 : 2 * SEC;
	spec.drain_timeout = rnd_n(w, 2) ? 0 : 4 * SEC;
	if (spec.kind != CONF_KIND_SERVICE)
		spec.timeout = rnd_n(w, 2) ? 0 : 5 * SEC;
	spec.watchdog = rnd_n(w, 2) ? 0 : 10 * SEC;
	/* a cluster service: the lease moves on after 2 failed starts */
	if (spec.kind == CONF_KIND_SERVICE && rnd_n(w, 2))
		par.handover_after = 2;
	/* the steps, and a daemon that forks */
	spec.pre_argv = rnd_n(w, 3) == 0 ? step_argv : NULL;
	spec.stop_post_argv = rnd_n(w, 3) == 0 ? step_argv : NULL;
	spec.forking = spec.kind == CONF_KIND_SERVICE &&
	    spec.ready == CONF_READY_EXEC && rnd_n(w, 2);
}

static void
prop_dump(const struct world *w)
{
	unsigned int i, n = w->step < HIST ? w->step : HIST;

	fprintf(stderr,
	    "  seed %u step %u: kind %d ready %d restart %d "
	    "delay %" PRIu64 "/%" PRIu64 " max_restarts %d drain %" PRIu64
	    " timeout %" PRIu64 " shutdown %d pre %d post %d forking %d\n",
	    w->seed, w->step, spec.kind, spec.ready, spec.restart,
	    spec.restart_delay, spec.restart_delay_max, spec.max_restarts,
	    spec.drain_timeout, spec.timeout, par.shutdown,
	    spec.pre_argv != NULL, spec.stop_post_argv != NULL, spec.forking);
	for (i = w->step - n; i < w->step; i++)
		fprintf(stderr, "    %-14s %-12s -> %-12s %#x\n",
		    life_event_name(w->hist[i % HIST].ev),
		    life_phase_name(w->hist[i % HIST].from),
		    life_phase_name(w->hist[i % HIST].to),
		    w->hist[i % HIST].actions);
}

#define PROP_CHECK(w, e)                                                       \
	do {                                                                   \
		if (!(e)) {                                                    \
			fprintf(stderr, "  %s:%d: invariant: %s\n", __FILE__,  \
			    __LINE__, #e);                                     \
			prop_dump(w);                                          \
			return (1);                                            \
		}                                                              \
	} while (0)

/* The answer to what the last step asked. */
static enum life_event
prop_answer(struct world *w)
{
	unsigned int r = rnd_n(w, 20);

	if (w->sanswer != 0)
		return (w->sanswer == LIFE_EV_MAINPID && r < 10 ?
		        LIFE_EV_NO_DAEMON :
		        w->sanswer);
	if (w->asked == LIFE_A_DEPS)
		return (r < 5 ? LIFE_EV_DEPS_WAIT : LIFE_EV_DEPS_OK);
	if (w->asked == LIFE_A_SPAWN)
		return (r < 2 ? LIFE_EV_SPAWN_FAILED : LIFE_EV_SPAWNED);
	if (r < 11)
		return (LIFE_EV_LOCK_OK);
	if (r < 14)
		return (LIFE_EV_LOCK_LEFTOVER);
	return (r < 18 ? LIFE_EV_LOCK_FOREIGN : LIFE_EV_LOCK_ERROR);
}

/* An event of the world (processes, timers), or of the operator. */
static enum life_event
prop_event(struct world *w)
{
	enum life_event c[16];
	int n = 0;

	if (w->asked != 0 || w->sanswer != 0)
		return (prop_answer(w));
	if (w->timer != LIFE_TIMER_NONE)
		c[n++] = life_timer_event(w->timer);
	if (w->stimer != LIFE_TIMER_NONE)
		c[n++] = life_timer_event(w->stimer);
	if (w->leader)
		c[n++] = LIFE_EV_REAPED;
	if (w->run == LIFE_RUN_LIVE) {
		if (w->leader && w->execd == 0) {
			c[n++] = LIFE_EV_EXEC_OK;
			c[n++] = LIFE_EV_EXEC_FAILED;
		} else if (w->execd == 1)
			c[n++] = LIFE_EV_READY;
		if (w->watchdog)
			c[n++] = LIFE_EV_WATCHDOG;
		c[n++] = LIFE_EV_UNHEALTHY; /* a health probe, any time */
	}
	if (w->run == LIFE_RUN_GROUP)
		c[n++] = LIFE_EV_GROUP_GONE;
	if (w->deadline && w->run != LIFE_RUN_NONE)
		c[n++] = LIFE_EV_TIMEOUT;
	if (w->l.phase == LIFE_DEPS)
		c[n++] = LIFE_EV_RECHECK; /* a dependency changed */
	if (w->slot && spec.kind == CONF_KIND_PERIODIC)
		c[n++] = LIFE_EV_SLOT;
	if (w->l.phase == LIFE_WAITING && spec.kind == CONF_KIND_QUEUE)
		c[n++] = LIFE_EV_MSG;
	if (w->settle == 0 && !par.shutdown && (n == 0 || rnd_n(w, 4) == 0))
		return ((enum life_event)(rnd_n(w, 4) == 0 ? LIFE_EV_ARM :
		        rnd_n(w, 2)                        ? LIFE_EV_START :
		                                             LIFE_EV_STOP));
	if (n == 0)
		return (LIFE_EV_STOP); /* nothing else can happen */
	return (c[rnd_n(w, (unsigned int)n)]);
}

static void
prop_input(struct world *w, enum life_event ev, struct life_input *in)
{
	static const int statuses[] = { EXITED(0), EXITED(1), KILLED(9),
		KILLED(15) };

	memset(in, 0, sizeof(*in));
	w->now += rnd_n(w, 2000) * MS;
	in->ev = ev;
	in->now = w->now;
	in->rnd = rnd32(w);
	in->status = statuses[rnd_n(w, 4)];
	in->uptime = rnd_n(w, 3000) * MS;
	in->group_left = rnd_n(w, 3) == 0;
	in->group_alive = w->run == LIFE_RUN_LIVE || rnd_n(w, 2);
	in->same = rnd_n(w, 4) != 0;
	in->spawning = rnd_n(w, 2);
	in->missed = rnd_n(w, 3) == 0;
	in->mainpid = spec.ready == CONF_READY_NOTIFY && rnd_n(w, 5) == 0;
	in->operator=(
	    ev == LIFE_EV_START || ev == LIFE_EV_STOP || ev == LIFE_EV_ARM) &&
	    rnd_n(w, 2);
}

/* What the stage's actions of a step ask of the world. */
static void
prop_world_stage(struct world *w, const struct life_step *s)
{
	unsigned int a = s->sactions;

	if (s->stage_timer_set)
		w->stimer = s->stage_timer;
	w->sanswer = (enum life_event)0;
	if (a & LIFE_S_MAINPID)
		w->leader = 1;
	if (a & (LIFE_S_COMMAND | LIFE_S_POST)) {
		if (rnd_n(w, 10) == 0)
			w->sanswer = LIFE_EV_STEP_FAILED; /* fork failed */
		else {
			w->leader = 1;
			w->execd = 0;
		}
	}
	if (a & LIFE_S_FIND)
		w->sanswer = LIFE_EV_MAINPID; /* or NO_DAEMON: prop_answer */
	if (a & LIFE_S_END)
		w->sanswer = LIFE_EV_EXIT;
}

/* The world after the step: the processes, the timers, what was asked. */
static void
prop_world(
    struct world *w, const struct life_input *in, const struct life_step *s)
{
	unsigned int a = s->actions;

	if (in->ev == LIFE_EV_EXEC_OK || in->ev == LIFE_EV_EXEC_FAILED)
		w->execd = in->ev == LIFE_EV_EXEC_OK ? 1 : 2;
	else if (in->ev == LIFE_EV_MSG)
		w->msg = 1;
	else if (in->ev == LIFE_EV_TIMEOUT)
		w->deadline = 0;
	else if (in->ev == LIFE_EV_SLOT)
		w->slot = 0;
	if (in->ev == life_timer_event(w->timer) && w->timer != LIFE_TIMER_NONE)
		w->timer = LIFE_TIMER_NONE; /* it fired */
	if (in->ev == life_timer_event(w->stimer) &&
	    w->stimer != LIFE_TIMER_NONE)
		w->stimer = LIFE_TIMER_NONE;
	if (s->timer_set)
		w->timer = s->timer;
	prop_world_stage(w, s);
	if (a & LIFE_A_CANCEL_WATCHDOG)
		w->watchdog = 0;
	if (a & LIFE_A_ARM_WATCHDOG)
		w->watchdog = spec.watchdog > 0;
	if (a & LIFE_A_DISARM_SLOT)
		w->slot = 0;
	if (a & (LIFE_A_ARM_SLOT | LIFE_A_NEXT_SLOT))
		w->slot = 1;
	if (a & LIFE_A_CANCEL_DEADLINE)
		w->deadline = 0;
	if (a & LIFE_A_ARM_DEADLINE)
		w->deadline = 1;
	if (a & (LIFE_A_RECORD_END | LIFE_A_MSG_DROP))
		w->msg = 0;
	w->asked = a & ANSWERS;
}

/* The processes after event in: never two runs at once. */
static int
prop_processes(struct world *w, const struct life_input *in)
{
	if (in->ev == LIFE_EV_SPAWNED) {
		PROP_CHECK(w, w->run == LIFE_RUN_NONE);
		w->run = LIFE_RUN_LIVE;
		w->leader = 1;
		w->execd = 0;
	} else if (in->ev == LIFE_EV_REAPED)
		w->leader = 0;
	else if (in->ev == LIFE_EV_MAINPID)
		w->leader = 1; /* the daemon */
	else if (in->ev == LIFE_EV_EXIT)
		w->run = in->group_left ? LIFE_RUN_GROUP : LIFE_RUN_NONE;
	else if (in->ev == LIFE_EV_GROUP_GONE ||
	    (in->ev == LIFE_EV_KILL_POLL && !in->group_alive))
		w->run = LIFE_RUN_NONE;
	return (0);
}

/* What the operator asked: a stop, or a start. */
static void
prop_operator(struct world *w, enum life_event ev, int operator)
{
	w->intent = intent_after(w->intent, ev, operator);
	if (ev == LIFE_EV_STOP && !w->stopped) {
		w->stopped = 1;
		w->idle = w->l.phase;
		if (rnd_n(w, 2) || par.shutdown)
			w->settle = 1; /* only the world from now on */
	} else if (ev == LIFE_EV_START || ev == LIFE_EV_ARM)
		w->stopped = 0;
}

/* The invariants of what a step asked. */
static int
prop_check_step(
    struct world *w, const struct life_input *in, const struct life_step *s)
{
	const struct life *lf = &w->l;
	unsigned int a = s->actions, ans = a & ANSWERS;

	unsigned int sa = s->sactions, sans = sa & LIFE_S_QUESTIONS;
	int stopping = (STOPPING & (1U << lf->phase)) != 0;

	PROP_CHECK(w,
	    ans == 0 || ans == LIFE_A_DEPS || ans == LIFE_A_LOCK ||
	        ans == LIFE_A_SPAWN);
	/* At most one answer asked, of the phase or of the stage. */
	PROP_CHECK(w, sans == 0 || ((sans & (sans - 1)) == 0 && ans == 0));
	/* The command only after exec_start_pre, never during a stop. */
	PROP_CHECK(w,
	    !(sa & LIFE_S_COMMAND) ||
	        (s->stage == LIFE_STAGE_PRE && !stopping));
	PROP_CHECK(w, !(sa & LIFE_S_POST) || spec.stop_post_argv != NULL);
	PROP_CHECK(w, !(sa & LIFE_S_FAILED) || (!stopping && lf->exec_failed));
	PROP_CHECK(w,
	    !(sa & LIFE_S_KILL) || s->stage == LIFE_STAGE_PRE ||
	        s->stage == LIFE_STAGE_POST);
	PROP_CHECK(w, !(sa & LIFE_S_END) || lf->stage == LIFE_STAGE_NONE);
	/* A run begins with exec_start_pre if the job has one. */
	PROP_CHECK(w,
	    !(a & LIFE_A_SPAWN) ||
	        lf->stage ==
	            (spec.pre_argv != NULL ? LIFE_STAGE_PRE : LIFE_STAGE_MAIN));
	PROP_CHECK(w, !(a & LIFE_A_SPAWN) || w->run == LIFE_RUN_NONE);
	PROP_CHECK(w, !(a & LIFE_A_SPAWN) || lf->run == LIFE_RUN_NONE);
	PROP_CHECK(w, !(a & LIFE_A_SPAWN) || lf->lock == 1);
	PROP_CHECK(w, !(ans & (LIFE_A_SPAWN | LIFE_A_DEPS)) || !w->stopped);
	/* A queue slot never runs without a message. */
	PROP_CHECK(
	    w, !(a & LIFE_A_SPAWN) || spec.kind != CONF_KIND_QUEUE || w->msg);
	/* Nothing starts at shutdown. */
	PROP_CHECK(w, !(ans & (LIFE_A_SPAWN | LIFE_A_DEPS)) || !par.shutdown);
	if (s->timer_set && s->timer == LIFE_TIMER_BACKOFF) {
		PROP_CHECK(w, s->usec > 0 && s->usec == lf->delay);
		PROP_CHECK(w,
		    s->usec <= spec.restart_delay_max ||
		        ((a & LIFE_A_START_FAILED) &&
		            s->usec <= par.recheck_max));
	}
	if (s->timer_set && s->timer == LIFE_TIMER_RECHECK)
		PROP_CHECK(w, s->usec > 0 && s->usec <= par.recheck_max);
	/* What the world says happened is never lost. */
	PROP_CHECK(w,
	    !s->ignored || in->ev == LIFE_EV_READY ||
	        in->ev == LIFE_EV_WATCHDOG || in->ev == LIFE_EV_UNHEALTHY ||
	        in->ev == LIFE_EV_TIMEOUT || in->ev == LIFE_EV_EXEC_OK ||
	        in->ev == LIFE_EV_EXEC_FAILED || in->ev == LIFE_EV_SLOT ||
	        in->ev == LIFE_EV_MSG || in->ev == LIFE_EV_START ||
	        in->ev == LIFE_EV_STOP || in->ev == LIFE_EV_ARM);
	return (0);
}

/* The invariants of the state after any step. */
static int
prop_check_state(struct world *w)
{
	const struct life *lf = &w->l;
	enum life_phase ph = lf->phase;
	unsigned int busy = HELD | RUN2 | PH(BACKOFF) | STOPPING;
	unsigned int norun = IDLE3 | PH(WAITING) | PH(DEPS) | PH(LOCKWAIT) |
	    PH(BACKOFF) | BLOCK3;

	PROP_CHECK(w, (unsigned int)ph < LIFE_PHASE_COUNT);
	PROP_CHECK(
	    w, job_state_is_active(life_state(ph)) == !!(busy & (1U << ph)));
	PROP_CHECK(w, !(norun & (1U << ph)) || lf->run == LIFE_RUN_NONE);
	/* Until the answer, the phase is the one that asked. */
	PROP_CHECK(w, !(IDLE3 & (1U << ph)) || lf->lock == 0 || w->asked);
	PROP_CHECK(w, lf->run == w->run);
	PROP_CHECK(w, lf->timer == w->timer);
	PROP_CHECK(w, lf->stage_timer == w->stimer);
	/* The operator's word is kept; a stop of theirs holds until a start. */
	PROP_CHECK(w, lf->intent == w->intent);
	PROP_CHECK(w, lf->intent != LIFE_INTENT_DOWN || w->stopped);
	/* A live run has a stage; its leader leads a step or the command. */
	PROP_CHECK(w,
	    w->asked != 0 || w->sanswer != 0 ||
	        (lf->run == LIFE_RUN_LIVE) == (lf->stage != LIFE_STAGE_NONE));
	PROP_CHECK(w,
	    !w->leader || lf->stage == LIFE_STAGE_PRE ||
	        lf->stage == LIFE_STAGE_MAIN || lf->stage == LIFE_STAGE_POST);
	PROP_CHECK(w, lf->stage != LIFE_STAGE_PIDWAIT || !w->leader);
	PROP_CHECK(w,
	    lf->stage != LIFE_STAGE_PIDWAIT ||
	        lf->stage_timer == LIFE_TIMER_PIDWAIT || w->sanswer != 0);
	PROP_CHECK(w,
	    !(STOPPING & (1U << ph)) || lf->run != LIFE_RUN_NONE ||
	        w->asked != 0);
	PROP_CHECK(w, lf->quick <= par.quick_max);
	PROP_CHECK(w,
	    spec.kind != CONF_KIND_PERIODIC ||
	        !((PH(FATAL) | PH(EXITED) | PH(BACKOFF) | PH(DRAIN)) &
	            (1U << ph)));
	PROP_CHECK(w,
	    spec.kind != CONF_KIND_QUEUE ||
	        !((PH(FATAL) | PH(EXITED)) & (1U << ph)));
	PROP_CHECK(w,
	    spec.kind != CONF_KIND_SERVICE ||
	        !((PH(WAITING) | PH(DRAIN)) & (1U << ph)));
	PROP_CHECK(w,
	    ph != LIFE_WAITING || spec.kind != CONF_KIND_QUEUE ||
	        lf->lock == 1);
	PROP_CHECK(w,
	    spec.kind != CONF_KIND_QUEUE || w->asked != 0 || lf->msg == w->msg);
	return (0);
}

/* A stop settles within SETTLE steps of the world alone. */
static int
prop_check_settle(struct world *w)
{
	const struct life *lf = &w->l;

	if (w->settle == 0)
		return (0);
	if (w->asked == 0 && w->sanswer == 0 && lf->run == LIFE_RUN_NONE &&
	    lf->lock == 0 &&
	    (lf->phase == LIFE_STOPPED || lf->phase == w->idle)) {
		PROP_CHECK(w, IDLE3 & (1U << lf->phase));
		w->settle = 0;
		return (0);
	}
	PROP_CHECK(w, ++w->settle < SETTLE);
	return (0);
}

/* One step of the world; 1 on a broken invariant. */
static int
prop_step(struct world *w)
{
	struct life_input in;
	struct life_step s;
	enum life_event ev;

	if (w->shutdown_in > 0 && w->asked == 0 && w->sanswer == 0 &&
	    --w->shutdown_in == 0)
		par.shutdown = 1;
	if (par.shutdown && !w->stopped && w->asked == 0 && w->sanswer == 0 &&
	    rnd_n(w, 4) == 0)
		ev = LIFE_EV_STOP; /* its turn to be stopped */
	else
		ev = prop_event(w);
	prop_input(w, ev, &in);
	prop_operator(w, ev, in.operator);
	life_step(&w->l, &par, &in, &s);
	w->hist[w->step % HIST].ev = ev;
	w->hist[w->step % HIST].from = s.from;
	w->hist[w->step % HIST].to = w->l.phase;
	w->hist[w->step % HIST].actions = s.actions;
	w->step++;
	if (prop_processes(w, &in) || prop_check_step(w, &in, &s))
		return (1);
	prop_world(w, &in, &s);
	if (prop_check_state(w) || prop_check_settle(w))
		return (1);
	return (0);
}

/* The life of one instance for one seed, up to the end of a shutdown. */
static int
prop_run(unsigned int seed, unsigned long *steps)
{
	struct world w;

	memset(&w, 0, sizeof(w));
	w.seed = seed;
	w.rng = 0x5eed0000ULL + seed;
	w.now = NOW;
	prop_spec(&w);
	life_init(&w.l);
	w.shutdown_in = 1 + (int)rnd_n(&w, STEPS);
	while (w.step < STEPS + SETTLE) {
		if (prop_step(&w))
			return (1);
		if (par.shutdown && w.stopped && w.settle == 0 &&
		    w.asked == 0 && w.sanswer == 0)
			break; /* vigild is gone */
	}
	*steps += w.step;
	return (0);
}

TEST(random_sequences)
{
	const char *e;
	unsigned long steps = 0;
	unsigned int first = 1, n = 150, i;

	if ((e = getenv("VIGIL_LIFE_SEEDS")) != NULL)
		n = (unsigned int)strtoul(e, NULL, 10);
	if ((e = getenv("VIGIL_LIFE_SEED")) != NULL)
		first = (unsigned int)strtoul(e, NULL, 10);
	for (i = 0; i < n; i++)
		ASSERT_EQ(prop_run(first + i, &steps), 0);
	printf("# %u seeds from %u, %lu steps\n", n, first, steps);
	return (0);
}

int
main(void)
{
	RUN(names);
	RUN(every_phase_event_kind);
	RUN(every_stage_phase_input);
	RUN(start_ready_exec);
	RUN(forking_starter);
	RUN(forking_ready_timeout);
	RUN(operator_intent);
	RUN(pre_command_post);
	RUN(pre_failure_is_a_failed_start);
	RUN(pre_stopped_is_no_failure);
	RUN(forking_waits_for_its_daemon);
	RUN(forking_stopped_while_waiting);
	RUN(probe_ready_and_unhealthy);
	RUN(ready_notify);
	RUN(ready_timeout_is_a_failed_start);
	RUN(crash_in_min_uptime_backs_off);
	RUN(max_restarts_gives_fatal);
	RUN(start_during_stop_starts_again);
	RUN(stop_after_start_during_stop_stays_stopped);
	RUN(leader_exit_with_group_left);
	RUN(stop_timeout_kills_and_polls);
	RUN(fence_then_new_lease);
	RUN(fence_in_backoff);
	RUN(cluster_handover);
	RUN(leftover_is_reclaimed);
	RUN(recheck_doubles_up_to_max);
	RUN(foreign_while_spawning_quick_retries);
	RUN(lock_error_backs_off);
	RUN(queue_slot);
	RUN(periodic);
	RUN(shutdown_stops_everything);
	RUN(random_sequences);
	TEST_MAIN_END();
}
