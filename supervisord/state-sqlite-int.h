/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The SQLite backend's own structures, shared by its two files (and by
 * no other): state-sqlite.c (the operations and their table,
 * state_sqlite: each write made a record) and state-sqlite-pending.c
 * (the store, the records kept until their transaction commits, the
 * retries, the batches, start-up and exit).  Calls go from
 * state-sqlite.c to state-sqlite-pending.c, never back.
 */

#ifndef STATE_SQLITE_INT_H
#define STATE_SQLITE_INT_H

#include <bsd/sys/queue.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

struct queue;

/* A write waiting for its transaction to commit. */
enum state_op {
	STATE_RUN,     /* a run's row; its ready time and end once known */
	STATE_READY,   /* the ready time of a row written */
	STATE_END,     /* the end of a row written */
	STATE_SKIPPED, /* a periodic slot skipped */
	STATE_INTENT,  /* the operator's held or started, or neither */
	STATE_ALERT,   /* the alert state of an instance (state 0: none) */
	STATE_DONE,    /* queue: the message's run succeeded */
	STATE_RELEASE, /* queue: stopped or never started, attempt not counted */
	STATE_FAIL,    /* queue: the run failed, retry or dead */
};

struct state_rec {
	enum state_op op;
	int64_t seq; /* STATE_RUN: the instance's run_row is -seq till then */
	int64_t row; /* STATE_READY, STATE_END; STATE_RUN once inserted */
	struct store_intent it; /* job, instance; the rest: STATE_INTENT */
	struct store_alert al;  /* STATE_ALERT */
	char run_id[17];
	long pid;
	int64_t started, ready, ended; /* usec, 0: not (yet) */
	int code, sig;                 /* -1: none */
	char *reason;
	int64_t msg; /* queue: the message id */
	int max_attempts;
	int64_t retry_at;
	char *what; /* STATE_FAIL: how the run ended */
	char *tail; /* STATE_FAIL: the end of its output */
	size_t tail_len;
	TAILQ_ENTRY(state_rec) entry;
};

/* state-sqlite-pending.c */
void state_sqlite_open(void);
void state_sqlite_close(void);
void state_sqlite_batch_begin(void);
void state_sqlite_batch_end(void);
void state_rec_add(struct state_rec *);
void state_rec_replace(struct state_rec *);
struct state_rec *state_rec_find_run(int64_t);
struct store *state_get(void);
void state_failed(const char *, char *);
struct queue *state_queue_open(struct store *, char **);

#endif
