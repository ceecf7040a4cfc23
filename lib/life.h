/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The life of an instance as one pure function: (phase, event, numbers) ->
 * (next phase, actions).  No system call, no clock, no allocation: the
 * caller passes every fact in (the time, a random number, whether a group
 * is still there) and carries the actions out (supervisord/instance.c).
 *
 * A phase is a state with its sub-state: STARTING is DEPS (held back by
 * its dependencies), LOCKWAIT (its lock looked at again in a moment) or
 * SPAWNED (a run, not ready yet) or LEASE (a cluster job: waiting for its
 * lease); STOPPING is DRAIN, TERM or KILL; BLOCKED
 * is RECLAIM, RECLAIM_KILL or FOREIGN.  The table in life.c has one row
 * per phase and one column per event.
 *
 * A run has a stage besides its phase: which of its commands leads it
 * (exec_start_pre, the command, exec_stop_post) or, for a forking job
 * whose starter exited 0, the wait for its daemon.  The stage has a timer
 * of its own; its rules are in life-run.c.
 */

#ifndef VIGIL_LIFE_H
#define VIGIL_LIFE_H

#include <stdint.h>

#include "job.h"

enum life_phase {
	LIFE_STOPPED = 0,  /* no run, not wanted */
	LIFE_EXITED,       /* the run ended and the policy did not restart */
	LIFE_FATAL,        /* too many failed starts in a row */
	LIFE_WAITING,      /* periodic: for a slot; queue: holds its lock,
	                     free for a message */
	LIFE_DEPS,         /* STARTING: waiting for its dependencies */
	LIFE_LOCKWAIT,     /* STARTING: lock looked at again in a moment */
	LIFE_SPAWNED,      /* STARTING: a run, not ready yet */
	LIFE_RUNNING,      /* a ready run */
	LIFE_BACKOFF,      /* the delay before a restart; lock kept */
	LIFE_DRAIN,        /* STOPPING (queue): the message may finish */
	LIFE_TERM,         /* STOPPING: stop_signal sent, stop_timeout armed */
	LIFE_KILL,         /* STOPPING: SIGKILL sent, what is left polled */
	LIFE_RECLAIM,      /* BLOCKED: a proven leftover was sent stop_signal */
	LIFE_RECLAIM_KILL, /* BLOCKED: ... and SIGKILL after stop_timeout */
	LIFE_FOREIGN,      /* BLOCKED: held by a process vigild did not start */
	LIFE_LEASE,        /* STARTING: waiting for its cluster lease */
	LIFE_PHASE_COUNT,
};

enum life_event {
	LIFE_EV_START = 0,     /* operator, autostart, a dependent's pull */
	LIFE_EV_STOP,          /* operator, reload or shutdown */
	LIFE_EV_DEPS_WAIT,     /* a dependency is not RUNNING */
	LIFE_EV_DEPS_OK,       /* every dependency is RUNNING */
	LIFE_EV_LOCK_OK,       /* the lock is ours now */
	LIFE_EV_LOCK_LEFTOVER, /* held by a proven leftover of a vigild */
	LIFE_EV_LOCK_FOREIGN,  /* held by something else */
	LIFE_EV_LOCK_ERROR,    /* the lock file cannot be used */
	LIFE_EV_MSG,           /* queue: a message was claimed for the slot */
	LIFE_EV_SPAWNED,       /* fork succeeded */
	LIFE_EV_SPAWN_FAILED,  /* failed before fork (stdin, pipes, fork) */
	LIFE_EV_EXEC_OK,       /* the child reached exec */
	LIFE_EV_EXEC_FAILED,   /* the child failed before exec */
	LIFE_EV_READY,         /* READY=1 */
	LIFE_EV_EXIT,          /* the run's leader was reaped */
	LIFE_EV_GROUP_GONE,    /* nothing is left of the run's group */
	LIFE_EV_BACKOFF_DONE,  /* timer: the restart delay is over */
	LIFE_EV_READY_TIMEOUT, /* timer: no READY=1 within ready_timeout */
	LIFE_EV_STOP_TIMEOUT,  /* timer: stop_timeout after stop_signal */
	LIFE_EV_KILL_POLL,     /* timer: after SIGKILL, look again */
	LIFE_EV_DRAIN_TIMEOUT, /* timer: the message outlived drain_timeout */
	LIFE_EV_RECHECK,       /* timer: look at the lock again */
	LIFE_EV_WATCHDOG,      /* no WATCHDOG=1 in time, or WATCHDOG=trigger */
	LIFE_EV_TIMEOUT,       /* periodic/queue: the run outlived timeout */
	LIFE_EV_SLOT,          /* periodic: a slot came */
	LIFE_EV_ARM,           /* autostart: periodic waits for its slot */
	LIFE_EV_MAINPID,       /* forking: the starter exited 0, its daemon's
	                          main process is known */
	LIFE_EV_UNHEALTHY,     /* health: health_failures failures in a row */
	LIFE_EV_LOCK_WAIT,     /* the cluster lease is asked for: wait */
	LIFE_EV_FENCE,         /* the cluster lease can no longer be trusted */
	LIFE_EV_REAPED,        /* the leader of the run's stage was reaped */
	LIFE_EV_STEP_TIMEOUT,  /* timer: exec_start_pre or exec_stop_post
	                          outlived stop_timeout */
	LIFE_EV_PIDWAIT,       /* timer: look for the forking job's daemon */
	LIFE_EV_NO_DAEMON,     /* forking: its daemon is not found (yet) */
	LIFE_EV_STEP_FAILED,   /* the command after exec_start_pre, or
	                          exec_stop_post, could not be forked */
	LIFE_EV_COUNT,
};

/*
 * What a timer of an instance is armed for: the phase's timer (BACKOFF to
 * RECHECK) or the stage's (STEP, PIDWAIT).
 */
enum life_timer {
	LIFE_TIMER_NONE = 0,
	LIFE_TIMER_BACKOFF, /* -> LIFE_EV_BACKOFF_DONE */
	LIFE_TIMER_READY,   /* -> LIFE_EV_READY_TIMEOUT */
	LIFE_TIMER_STOP,    /* -> LIFE_EV_STOP_TIMEOUT */
	LIFE_TIMER_KILL,    /* -> LIFE_EV_KILL_POLL */
	LIFE_TIMER_DRAIN,   /* -> LIFE_EV_DRAIN_TIMEOUT */
	LIFE_TIMER_RECHECK, /* -> LIFE_EV_RECHECK */
	LIFE_TIMER_STEP,    /* -> LIFE_EV_STEP_TIMEOUT */
	LIFE_TIMER_PIDWAIT, /* -> LIFE_EV_PIDWAIT */
	LIFE_TIMER_COUNT,
};

/* Why a run is being stopped, the first reason kept. */
enum life_cause {
	LIFE_CAUSE_NONE = 0,
	LIFE_CAUSE_STOP,          /* asked: operator, reload, shutdown */
	LIFE_CAUSE_GROUP,         /* the leader ended, its group did not */
	LIFE_CAUSE_TIMEOUT,       /* the run outlived timeout */
	LIFE_CAUSE_READY_TIMEOUT, /* no READY=1 within ready_timeout */
	LIFE_CAUSE_WATCHDOG,      /* no WATCHDOG=1 in time */
	LIFE_CAUSE_UNHEALTHY,     /* its health probe failed, in a row */
	LIFE_CAUSE_DRAIN,         /* queue: cancelled, or drain_timeout */
	LIFE_CAUSE_FENCE,         /* its cluster lease is no longer trusted */
};

/* What follows once the current run is gone. */
enum life_then {
	LIFE_THEN_POLICY = 0, /* the restart policy decides (job_decide) */
	LIFE_THEN_STOP,       /* stop: a stop was asked */
	LIFE_THEN_START,      /* start again: a start came during the stop */
};

/* Whether the run's processes are there. */
enum life_run {
	LIFE_RUN_NONE = 0, /* no run */
	LIFE_RUN_LIVE,     /* its leader lives */
	LIFE_RUN_GROUP,    /* the leader was reaped, its group was not */
};

/* Which of its commands leads a run, or what it waits for. */
enum life_stage {
	LIFE_STAGE_NONE = 0, /* no run, or its end is being settled */
	LIFE_STAGE_PRE,      /* exec_start_pre */
	LIFE_STAGE_MAIN,     /* the command (or the daemon it left) */
	LIFE_STAGE_PIDWAIT,  /* forking: the starter exited 0, its daemon
	                        is looked for */
	LIFE_STAGE_POST,     /* exec_stop_post, after the command ended */
};

/*
 * What the operator said of an instance last: it stays down (a stop), or
 * up though the job does not start on its own (a start).  A start of any
 * kind forgets a stop.
 */
enum life_intent {
	LIFE_INTENT_NONE = 0,
	LIFE_INTENT_DOWN, /* stopped by the operator */
	LIFE_INTENT_UP,   /* started by the operator */
};

/* The wait for a forking job's daemon: first look, longest step, bound. */
#define LIFE_PIDWAIT_FIRST (10 * 1000ULL)
#define LIFE_PIDWAIT_STEP_MAX (320 * 1000ULL)
#define LIFE_PIDWAIT_MAX (10 * 1000000ULL) /* without ready_timeout */

/* The lifecycle of one instance: all that life_step() decides from. */
struct life {
	enum life_phase phase;
	enum life_run run;
	enum life_then then;
	enum life_cause cause;
	enum life_timer timer; /* what the timer is armed for, or NONE */
	int want;              /* the goal: up */
	int lock;              /* the instance holds its lock */
	int msg;               /* queue: the slot has a message */
	int ready;             /* the run is ready (READY=1 or exec) */
	int exec_failed;       /* the run never reached exec */
	int fenced;            /* the lease went: the lock goes with the run */
	unsigned int failures; /* consecutive failed starts */
	unsigned int restarts;
	unsigned int quick;          /* LOCKWAIT looks so far */
	uint64_t recheck;            /* BLOCKED: the poll interval */
	uint64_t kill_at;            /* RECLAIM: when SIGKILL follows */
	uint64_t delay;              /* BACKOFF: the current delay */
	struct job_decision pending; /* taken at EXIT, applied when gone */
	enum life_stage stage;
	enum life_timer stage_timer; /* STEP, PIDWAIT or NONE */
	int step_failed;             /* exec_start_pre (or exec_stop_post)
	                                failed: a failed start */
	uint64_t pidwait_step;       /* PIDWAIT: the current interval */
	uint64_t pidwait_until;      /* ... and when the wait gives up */
	enum life_intent intent;     /* the operator's word */
};

/* The numbers of the job (from its spec) and of vigild that matter. */
struct life_params {
	const struct job_spec *spec;
	int shutdown;                /* vigild is shutting down */
	uint64_t quick_retry;        /* LOCKWAIT interval */
	unsigned int quick_max;      /* LOCKWAIT looks at most */
	uint64_t recheck_min;        /* BLOCKED poll: first interval */
	uint64_t recheck_max;        /* ... doubling up to this */
	unsigned int handover_after; /* cluster service: failed starts in
	                                a row before the lease moves on */
};

/* The facts an event brings. */
struct life_input {
	enum life_event ev;
	uint64_t now;      /* monotonic usec */
	uint32_t rnd;      /* random number for the backoff's jitter */
	int status;        /* EXIT: wait(2) status */
	uint64_t uptime;   /* EXIT: usec from fork to exit */
	int group_left;    /* EXIT: the group outlived its leader */
	int group_alive;   /* KILL_POLL: the run's group is still there */
	int same;          /* LOCK_LEFTOVER: the leftover already signalled */
	int spawning;      /* LOCK_FOREIGN: children between fork and exec */
	int missed;        /* ARM: a slot passed while vigild was down */
	int limit_reached; /* EXIT, start failed: start_limit's Nth failure */
	int mainpid;       /* REAPED: MAINPID= names another process of the
	                      run's session, alive */
	int operator;      /* START, ARM, STOP: the operator asked (vigilctl,
	                      or an operator on another node) */
};

/* Actions, carried out in this order by the effect layer. */
#define LIFE_A_CANCEL_WATCHDOG 0x00000001 /* the watchdog timer goes */
#define LIFE_A_DISARM_SLOT 0x00000002     /* periodic: no more slots */
#define LIFE_A_ARM_SLOT 0x00000004        /* periodic: a slot, if none */
#define LIFE_A_NEXT_SLOT 0x00000008       /* periodic: the slot after this */
#define LIFE_A_SKIP 0x00000010            /* periodic: a slot skipped */
#define LIFE_A_EXEC_FAILED 0x00000020     /* note why exec failed */
#define LIFE_A_RECORD_END                                                      \
	0x00000040                        /* the run ended: describe it,
                                         write history, settle the msg */
#define LIFE_A_DEPS_UNWAIT 0x00000080     /* off the dependency wait list */
#define LIFE_A_MSG_DROP 0x00000100        /* queue: the message goes back */
#define LIFE_A_START_FAILED 0x00000200    /* a start failed before fork */
#define LIFE_A_RELEASE 0x00000400         /* give the lock up */
#define LIFE_A_LEFTOVER_TERM 0x00000800   /* stop_signal to the leftover */
#define LIFE_A_LEFTOVER_KILL 0x00001000   /* SIGKILL to the leftover */
#define LIFE_A_NAME_HOLDER 0x00002000     /* say who holds the lock */
#define LIFE_A_GROUP_DONE 0x00004000      /* forget the run's group */
#define LIFE_A_CANCEL_DEADLINE 0x00008000 /* the run's timeout goes */
#define LIFE_A_DRAIN                                                           \
	0x00010000                       /* queue: the message may finish,
                                         or is asked to cancel */
#define LIFE_A_TERM 0x00020000           /* stop_signal (+CONT) to the run */
#define LIFE_A_KILL 0x00040000           /* SIGKILL to the run */
#define LIFE_A_REASON_CLEAR 0x00080000   /* no reason any more */
#define LIFE_A_REASON_STOPPED 0x00100000 /* "stopped while <state>" */
#define LIFE_A_RECORD_READY 0x00200000   /* the run is ready: history */
#define LIFE_A_ARM_WATCHDOG 0x00400000   /* the watchdog timer */
#define LIFE_A_ARM_DEADLINE 0x00800000   /* the run's timeout */
#define LIFE_A_KICK 0x01000000           /* queue: claim a message */
/* cluster: the RELEASE with it says the run failed here (handover) */
#define LIFE_A_HANDOVER 0x02000000
/* Then at most one of these, each answered with an event: */
#define LIFE_A_DEPS 0x10000000  /* -> LIFE_EV_DEPS_WAIT or _DEPS_OK */
#define LIFE_A_LOCK 0x20000000  /* -> LIFE_EV_LOCK_* */
#define LIFE_A_SPAWN 0x40000000 /* -> LIFE_EV_SPAWNED or _SPAWN_FAILED */

/*
 * The stage's actions (run.c), carried out after the others, in this
 * order:
 */
#define LIFE_S_CAUSE 0x0001      /* keep why the step's exec failed */
#define LIFE_S_MAINPID 0x0002    /* MAINPID= leads the run now */
#define LIFE_S_KILL 0x0004       /* SIGKILL to the step: stop_timeout */
#define LIFE_S_PRE_FAILED 0x0008 /* the command will not run: say why */
#define LIFE_S_POST_ENDED 0x0010 /* exec_stop_post ended: said if badly */
#define LIFE_S_NO_DAEMON 0x0020  /* a failed start: no daemon pid */
/* the command's end is kept; its stdin closed, its output drained: */
#define LIFE_S_MAIN_OVER 0x0040
#define LIFE_S_FAILED 0x0080 /* a failed start: the step's cause */
/* Then at most one of these: */
#define LIFE_S_COMMAND 0x0100 /* fork the command (-> _STEP_FAILED) */
#define LIFE_S_POST 0x0200    /* fork exec_stop_post (-> _STEP_FAILED) */
#define LIFE_S_FIND 0x0400 /* look for the daemon (-> _MAINPID, _NO_DAEMON) */
#define LIFE_S_END 0x0800  /* the run is over (-> LIFE_EV_EXIT) */
#define LIFE_S_QUESTIONS                                                       \
	(LIFE_S_COMMAND | LIFE_S_POST | LIFE_S_FIND | LIFE_S_END)

/* What life_step() decided. */
struct life_step {
	unsigned int actions;        /* LIFE_A_* */
	unsigned int sactions;       /* LIFE_S_* */
	enum life_stage stage;       /* the stage before */
	int stage_timer_set;         /* the stage's timer changes: to */
	enum life_timer stage_timer; /* (LIFE_TIMER_NONE: cancelled) */
	uint64_t stage_usec;         /* relative */
	int timer_set;               /* the timer changes: to (timer, usec) */
	enum life_timer timer;       /* LIFE_TIMER_NONE: cancelled */
	uint64_t usec;               /* relative */
	enum life_phase from;        /* the phase before */
	int ignored;                 /* the event means nothing in this phase */
	int decided;         /* a job_decision was taken (EXIT, errors) */
	int stop_asked;      /* EXIT: the end was asked for */
	enum life_then then; /* EXIT: what was to follow, before it */
	struct job_decision decision;
};

enum job_state life_state(enum life_phase);
const char *life_phase_name(enum life_phase);
const char *life_event_name(enum life_event);
const char *life_stage_name(enum life_stage);
enum life_event life_timer_event(enum life_timer);
void life_init(struct life *);
int life_stop_asked(const struct life *, const struct life_params *);
void life_step(struct life *, const struct life_params *,
    const struct life_input *, struct life_step *);
void life_intent_start(struct life *, int);
void life_intent_restore(struct life *, enum life_intent);

#endif
