/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The command layer: the verbs' table and context (cmd.c resolves the
 * operands, the cmd-*.c files act), and the waits of clients for
 * instances (waiters.c).
 */

#ifndef VIGILD_CMD_H
#define VIGILD_CMD_H

#include <stdint.h>
#include <stdio.h>

#include "job.h"
#include "json.h"
#include "proto.h"

struct broken_job;
struct client;
struct inst;
struct job;
struct queue;
struct queue_counts;
struct queue_msg;

/* A wait of a client for an instance to reach a state. */
enum wait_kind {
	WAIT_START, /* RUNNING is success; EXITED/BACKOFF/FATAL failure */
	WAIT_STOP,  /* any inactive state */
	WAIT_STATE, /* exactly target */
	WAIT_ASKED, /* the answer of another node (cluster-ask.c) */
};

/* waiters.c */
int waiters_add(struct client *, struct inst *, enum wait_kind, enum job_state);
int waiters_add_asked(struct client *, struct inst *, uint64_t);
/* A step of a roll: 0, or the handle of a request to another node. */
typedef uint64_t (*waiters_step_fn)(struct client *, struct inst *);
int waiters_roll(struct client *, struct inst **, size_t, waiters_step_fn);
void waiters_report(struct client *, const char *);
int waiters_code(struct client *);
void waiters_timeout(struct client *, uint64_t);
void waiters_notify(struct inst *);
extern const struct inst_observer waiters_observer;
void waiters_move(struct inst *, struct inst *);

/* cmd.c */
enum cmd_retval {
	CMD_ERROR = -1,
	CMD_OK = 0,
	CMD_WAIT, /* reply later: the client stays connected */
};

/* What a command's operands name; cmd.c resolves them before exec. */
enum cmd_target {
	CMD_TARGET_NONE,      /* words the handler reads itself */
	CMD_TARGET_INSTANCES, /* all, JOB or JOB@N: ctx->insts */
	CMD_TARGET_ONE_JOB,   /* one JOB or JOB@N, not all: ctx->insts */
	CMD_TARGET_QUEUES,    /* queue jobs: ctx->jobs */
	CMD_TARGET_IDS,       /* message ids: ctx->ids */
};
#define CMD_TARGET_DEFAULT_ALL 0x1 /* no operand: every one there is */
#define CMD_TARGET_BROKEN 0x2      /* broken job files: ctx->broken */

/* The type of an option's value, checked by cmd.c before exec. */
enum cmd_opt_type {
	CMD_OPT_STRING,   /* any word */
	CMD_OPT_WORD,     /* a word that is not empty */
	CMD_OPT_INT,      /* an integer from min to max */
	CMD_OPT_DURATION, /* "10s", "1m30s": microseconds */
	CMD_OPT_STATE,    /* a state name: its enum job_state */
};

struct cmd_opt {
	int ch; /* the letter; 0 ends a list */
	enum cmd_opt_type type;
	long long min, max; /* CMD_OPT_INT */
};

struct cmd_ctx {
	struct client *client;
	const struct cmd_entry *entry;
	int argc; /* the operands, options taken out */
	char **argv;
	char **operands; /* owned array behind argv */
	char opts[128];  /* opts['x'] != 0: option -x given */
	char *optarg[128];
	long long optnum[128]; /* the value of a typed option */
	int json;
	int code;            /* exit code for the client, 0 by default */
	const uint8_t *data; /* PROTO_DATA sent before the command, or NULL */
	size_t datalen;
	struct proto_buf out;
	struct proto_buf err;
	struct json jw; /* JSON output, written into out */
	/* The targets, resolved by cmd.c (owned arrays, borrowed items). */
	struct inst **insts;
	size_t ninsts;
	struct job **jobs;
	size_t njobs;
	int64_t *ids;
	size_t nids;
	const struct broken_job **broken;
	size_t nbroken;
};

struct cmd_entry {
	const char *name;
	const char *alias;
	const char *usage;
	const char *optstring;
	const char *longopts; /* "no-wait=W,state=s": long name to letter */
	const struct cmd_opt *typed; /* options with typed values, or NULL */
	int min_args;
	int max_args; /* -1: no limit */
	int flags;
#define CMD_READONLY 0x1 /* allowed for peers without control rights */
	enum cmd_target target;
	int target_flags;
	int target_at; /* the first operand that is a target */
	int target_n;  /* how many are (0: every one from target_at) */
	/* Checks of the words that come before the targets, or NULL. */
	enum cmd_retval (*check)(struct cmd_ctx *);
	const char *help;
	enum cmd_retval (*exec)(struct cmd_ctx *);
};

/* Exit codes of vigilctl, as in interface.md. */
#define CMD_EXIT_OK 0
#define CMD_EXIT_FAILED 1
#define CMD_EXIT_USAGE 2
#define CMD_EXIT_NOT_RUNNING 3
#define CMD_EXIT_NO_JOB 4

void cmd_dispatch(
    struct client *, uint32_t, int, char **, const uint8_t *, size_t);
void cmd_buf_printf(struct proto_buf *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
void cmd_print(struct cmd_ctx *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
void cmd_error(struct cmd_ctx *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
void cmd_print_err(struct cmd_ctx *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
enum cmd_retval cmd_usage_error(struct cmd_ctx *, const char *, const char *);
void cmd_json_end(struct cmd_ctx *);
void cmd_json_write(void *, const void *, size_t);
void cmd_send(struct cmd_ctx *);
void cmd_targets_free(struct cmd_ctx *);
int cmd_targets(struct cmd_ctx *);
/* cmd-later.c */
struct cmd_ctx *cmd_later(struct cmd_ctx *);
void cmd_later_end(struct cmd_ctx *);

/* cmd-queue-print.c: the rows of the queue verbs */
void cmd_queue_dead_head(struct cmd_ctx *, const char *);
void cmd_queue_dead_print(struct cmd_ctx *, const struct queue_msg *);
void cmd_queue_dead_tail(struct cmd_ctx *, const char *, size_t, size_t);
void cmd_queue_counts_head(struct cmd_ctx *, int, int);
void cmd_queue_counts_print(struct cmd_ctx *, const char *, int,
    const struct queue_counts *, const char *);
void cmd_queue_counts_tail(struct cmd_ctx *);
enum cmd_retval cmd_queue_enqueued(
    struct cmd_ctx *, const char *, int, int64_t, const char *);
/* cmd-queue-cluster.c: the queue verbs on cluster queues */
enum cmd_retval cmd_cq_enqueue(
    struct cmd_ctx *, struct job *, const void *, size_t, long long, long long);
enum cmd_retval cmd_cq_counts(struct cmd_ctx *, struct queue *);
enum cmd_retval cmd_cq_dead(struct cmd_ctx *, struct job *, long);
enum cmd_retval cmd_cq_ids(struct cmd_ctx *, int, const int64_t *, size_t);
enum cmd_retval cmd_cq_purge(struct cmd_ctx *, struct job *, int);
enum cmd_retval cmd_cq_kick(struct cmd_ctx *, struct job *);
long long cmd_opt_num(const struct cmd_ctx *, int, long long);
char *cmd_format_time(int64_t, char *, size_t);
char *cmd_format_exit(int, int, char *, size_t);
void cmd_print_table(FILE *);
int cmd_is_instance(const char *);
extern const struct cmd_entry *const cmd_table[];
int cmd_is_readonly(const char *);

#endif
