/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The state seam (state.c): run history, the operator's intent, alert
 * states and the queue's outcomes, through one backend per job (the
 * local SQLite one, state-sqlite.c; cluster mode's, cluster-queue.c), and
 * state.db's health (state-watch.c).
 */

#ifndef VIGILD_STATE_H
#define VIGILD_STATE_H

#include <stdint.h>

#include "store.h"

struct inst;
struct queue;

/* state.c */
/*
 * The state seam: run history, the operator's intent and the queue's
 * operations, one implementation per backend (each member as the state_*
 * function of its name; run_started, run_ended: state_run_begin, _end).
 * state.c calls the backend of the job concerned, the default one for
 * calls without a job.
 */
struct state_ops {
	const char *name;
	void (*open)(void);
	void (*close)(void);
	void (*batch_begin)(void);
	void (*batch_end)(void);
	/* run history */
	void (*run_started)(struct inst *);
	void (*run_ready)(struct inst *);
	void (*run_ended)(struct inst *, int, const char *);
	void (*run_skipped)(struct inst *, int64_t);
	int64_t (*last_start)(const char *);
	int (*history)(const char *, int, int, store_run_cb, void *, char **);
	/* the operator's intent; the alert state (the default backend's) */
	void (*intent)(struct inst *, int, int, long);
	void (*intents_load)(void);
	void (*alert)(const struct inst *);
	void (*alerts_load)(void);
	/* the queue: its handle, the outcomes of its runs */
	struct queue *(*queue)(void);
	void (*queue_failed)(char *);
	void (*queue_done)(const struct inst *, int64_t);
	void (*queue_release)(const struct inst *, int64_t);
	void (*queue_fail)(const struct inst *, int64_t, int, int64_t, int, int,
	    const char *, const char *, size_t);
};
extern const struct state_ops state_sqlite; /* state-sqlite.c */
/* state-sqlite-pending.c: its store, for state-watch.c */
struct store *state_sqlite_store(void);
const char *state_sqlite_path(void);
void state_sqlite_detach(void);
void state_sqlite_reattach(void);
extern void (*state_sqlite_aside)(const char *);

/* state-watch.c: state.db never lost without a word */
struct state_health {
	uint64_t lost;     /* found deleted, replaced or corrupt */
	uint64_t restored; /* put back from the open database */
	int64_t at;        /* the last event, wall usec; 0: none */
	char *what;        /* what it was, or NULL */
	char *failing;     /* why the last put-back failed, or NULL */
};
void state_watch_start(void);
void state_watch_stop(void);
const struct state_health *state_watch_health(void);

void state_open(void);
void state_close(void);
void state_run_begin(struct inst *);
void state_run_ready(struct inst *);
void state_run_end(struct inst *, int, const char *);
void state_run_skipped(struct inst *, int64_t);
int64_t state_last_start(const char *);
void state_intent(struct inst *, int, int, long);
void state_intents_load(void);
void state_alert(const struct inst *);
void state_alerts_load(void);
int state_history(const char *, int, int, store_run_cb, void *, char **);
struct queue *state_queue(void);
void state_batch_begin(void);
void state_batch_end(void);
void state_queue_failed(char *);
void state_queue_done(const struct inst *, int64_t);
void state_queue_release(const struct inst *, int64_t);
void state_queue_fail(const struct inst *, int64_t, int, int64_t, int, int,
    const char *, const char *, size_t);

#endif
