/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * A queue message's fate once the run that worked it is over, apart from
 * the writes that carry it out (supervisord/dispatch.c):
 *  - deleted by an operator while it ran: the outcome is dropped;
 *  - never started, or stopped by a drain or a lost lease without
 *    succeeding: available again, the attempt not counted;
 *  - succeeded: done;
 *  - else a retry after a backoff, or the dead list once max_attempts are
 *    spent (the attempt was counted when it was claimed).
 * Pure: the caller supplies the randomness of the backoff.
 */

#ifndef VIGIL_MSGFATE_H
#define VIGIL_MSGFATE_H

#include <stdint.h>

#include "backoff.h"
#include "life.h"

enum msg_fate {
	MSG_FATE_DROP = 0, /* deleted while it ran: its outcome is dropped */
	MSG_FATE_RELEASE,  /* available again, the attempt not counted */
	MSG_FATE_DONE,     /* done: deleted from the queue */
	MSG_FATE_RETRY,    /* available again after delay */
	MSG_FATE_DEAD,     /* on the dead list */
};

/* How a message's run ended. */
struct msg_end {
	int deleted;           /* deleted by an operator while it ran */
	int status;            /* wait status; -1: the run never started */
	int success;           /* as the job's success_exit_codes see it */
	int exec_failed;       /* the command could not be executed */
	enum life_cause cause; /* why it was stopped; NONE: it ended */
	int attempts;          /* this one included */
	int max_attempts;
};

/* What becomes of it. */
struct msg_verdict {
	enum msg_fate fate;
	int code;       /* RETRY, DEAD: its exit code, or -1 */
	int sig;        /* RETRY, DEAD: the signal that ended it, or -1 */
	int why;        /* RETRY, DEAD: the failure is more than an exit */
	uint64_t delay; /* RETRY, DEAD: the backoff before a retry, µs */
};

void msg_fate(const struct msg_end *, const struct backoff *, uint32_t,
    struct msg_verdict *);

#endif
