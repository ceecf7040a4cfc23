/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * start, stop, restart and signal.  The first three act on every target,
 * then wait for the outcome unless --no-wait: start and restart succeed
 * when the instance is RUNNING and fail when it falls into BACKOFF, FATAL
 * or EXITED; stop succeeds when nothing of the instance is left.  A start
 * that would wait for a dependency the operator stopped is refused at once,
 * unless --with-deps starts that dependency too.  Each success prints
 * "LABEL: started" or "LABEL: stopped" unless --quiet; --no-wait prints
 * nothing, as nothing is known yet.  restart --rolling restarts one
 * instance at a time, each once the one before started well.
 */

#include "config.h"

#include <sys/types.h>

#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "cmd.h"
#include "inst.h"
#include "jobs-view.h"
#include "jobs.h"
#include "server.h"
#include "signame.h"
#include "state.h"
#include "xmalloc.h"

static enum cmd_retval cmd_control_exec(struct cmd_ctx *);
static enum cmd_retval cmd_signal_check(struct cmd_ctx *);
static enum cmd_retval cmd_signal_exec(struct cmd_ctx *);

const struct cmd_entry cmd_start_entry = {
	.name = "start",
	.usage = "[--no-wait] [--quiet] [--with-deps] job|all ...",
	.optstring = "DWq",
	.longopts = "no-wait=W,quiet=q,with-deps=D",
	.min_args = 1,
	.max_args = -1,
	.target = CMD_TARGET_INSTANCES,
	.help = "start jobs and wait until they run",
	.exec = cmd_control_exec,
};

const struct cmd_entry cmd_stop_entry = {
	.name = "stop",
	.usage = "[--no-wait] [--quiet] job|all ...",
	.optstring = "Wq",
	.longopts = "no-wait=W,quiet=q",
	.min_args = 1,
	.max_args = -1,
	.target = CMD_TARGET_INSTANCES,
	.help = "stop jobs and wait until they are gone",
	.exec = cmd_control_exec,
};

const struct cmd_entry cmd_restart_entry = {
	.name = "restart",
	.usage = "[--no-wait | --rolling] [--quiet] [--with-deps] job|all ...",
	.optstring = "DRWq",
	.longopts = "no-wait=W,quiet=q,rolling=R,with-deps=D",
	.min_args = 1,
	.max_args = -1,
	.target = CMD_TARGET_INSTANCES,
	.help = "stop then start jobs",
	.exec = cmd_control_exec,
};

const struct cmd_entry cmd_signal_entry = {
	.name = "signal",
	.alias = "kill",
	.usage = "signal job|all ...",
	.optstring = "",
	.min_args = 2,
	.max_args = -1,
	.target = CMD_TARGET_INSTANCES,
	.target_at = 1,
	.check = cmd_signal_check,
	.help = "send a signal to jobs",
	.exec = cmd_signal_exec,
};

/*
 * Act on one instance.  A cluster service whose lease another node holds
 * is stopped or started cluster-wide here as anywhere, and the verb is
 * also asked of the node that runs it (with waited, the handle of its
 * answer is returned; else 0).
 */
static uint64_t
cmd_control_one(struct client *c, const char *verb, struct inst *in, int waited)
{
	long uid = (long)server_client_uid(c);
	int elsewhere = cluster_elsewhere(in);

	/* restart is a stop, then a start once the stop completed. */
	if (strcmp(verb, "restart") == 0)
		inst_stop(in);
	if (strcmp(verb, "stop") != 0) {
		/* Cluster-wide first: the bid of the start comes after it. */
		cluster_intent(in, 0, uid);
		inst_start_operator(in);
		state_intent(in, 0, 1, uid);
	} else {
		/* Neither a reload nor a restart of vigild starts it. */
		inst_stop_operator(in);
		state_intent(in, 1, 0, uid);
		cluster_intent(in, 1, uid);
	}
	return (elsewhere ? cluster_request(in, verb, 0, uid, waited) : 0);
}

/*
 * An instance of a job that job j needs (depends, also through other
 * jobs) and that the operator stopped, or NULL.  The request's own
 * targets (resolve_mark == mark) are left out: they start too, and their
 * own needs are looked at as theirs.
 */
static struct inst *
cmd_control_held_dep(const struct job *j, unsigned int mark)
{
	struct job *d;
	struct inst *in;
	size_t k;
	int i, targeted;

	for (k = 0; k < j->spec->ndepends; k++) {
		d = job_find(j->spec->depends[k]);
		if (d == NULL || d->retiring)
			continue;
		targeted = 1;
		for (i = 0; i < d->ninsts; i++) {
			if (d->insts[i]->resolve_mark == mark)
				continue;
			targeted = 0;
			if (d->insts[i]->life.intent == LIFE_INTENT_DOWN)
				return (d->insts[i]);
		}
		if (!targeted && (in = cmd_control_held_dep(d, mark)) != NULL)
			return (in);
	}
	return (NULL);
}

/*
 * A start would wait forever for a dependency the operator stopped: say
 * so and return -1, or with --with-deps add such dependencies to the
 * targets (*v, *n) to be started.  Each added one is looked at in turn.
 */
static int
cmd_control_deps(struct cmd_ctx *ctx, struct inst ***v, size_t *n)
{
	struct inst *d;
	char when[64];
	unsigned int mark = (*v)[0]->resolve_mark;
	size_t i;
	int refused = 0;

	for (i = 0; i < *n; i++) {
		if (i > 0 && (*v)[i]->job == (*v)[i - 1]->job)
			continue;
		/* Starting what runs does nothing: nothing to wait for. */
		if (strcmp(ctx->entry->name, "start") == 0 &&
		    (*v)[i]->state == JOB_RUNNING)
			continue;
		while ((d = cmd_control_held_dep((*v)[i]->job, mark)) != NULL) {
			if (!ctx->opts['D']) {
				cmd_format_time(
				    d->intent_at, when, sizeof(when));
				cmd_error(ctx,
				    "%s: depends on %s, stopped by uid %ld at "
				    "%s; start it first or use --with-deps",
				    (*v)[i]->job->name, d->label, d->intent_uid,
				    when);
				refused = 1;
				break;
			}
			d->resolve_mark = mark;
			*v = xreallocarray(*v, *n + 1, sizeof(**v));
			(*v)[(*n)++] = d;
		}
	}
	if (refused)
		ctx->code = CMD_EXIT_FAILED;
	return (refused ? -1 : 0);
}

/* One step of a roll: restart the instance. */
static uint64_t
cmd_control_roll_step(struct client *c, struct inst *in)
{
	return (cmd_control_one(c, "restart", in, 1));
}

/*
 * restart --rolling: the dependencies --with-deps added (past ntargets)
 * start now; the targets restart one at a time (waiters_roll).
 */
static enum cmd_retval
cmd_control_roll(struct cmd_ctx *ctx, size_t ntargets)
{
	size_t i;

	if (ctx->opts['W']) {
		cmd_error(ctx,
		    "--rolling waits for each instance: not with "
		    "--no-wait");
		ctx->code = CMD_EXIT_USAGE;
		return (CMD_ERROR);
	}
	for (i = ntargets; i < ctx->ninsts; i++)
		(void)cmd_control_one(ctx->client, "start", ctx->insts[i], 0);
	if (!ctx->opts['q'])
		waiters_report(ctx->client, "started");
	if (waiters_roll(
	        ctx->client, ctx->insts, ntargets, cmd_control_roll_step))
		return (CMD_WAIT);
	ctx->code = waiters_code(ctx->client);
	return (ctx->code == 0 ? CMD_OK : CMD_ERROR);
}

static enum cmd_retval
cmd_control_exec(struct cmd_ctx *ctx)
{
	const char *verb = ctx->entry->name;
	enum wait_kind kind;
	struct inst **v;
	uint64_t *tokens;
	size_t n = ctx->ninsts, ntargets = n, i;
	int waiting = 0;

	if (strcmp(verb, "stop") != 0 && n > 0 &&
	    cmd_control_deps(ctx, &ctx->insts, &n) == -1)
		return (CMD_ERROR);
	v = ctx->insts;
	ctx->ninsts = n;
	if (ctx->opts['R'])
		return (cmd_control_roll(ctx, ntargets));
	tokens = xcalloc(n + 1, sizeof(*tokens));
	for (i = 0; i < n; i++)
		tokens[i] = cmd_control_one(ctx->client,
		    i < ntargets ? verb : "start", v[i], !ctx->opts['W']);
	kind = strcmp(verb, "stop") == 0 ? WAIT_STOP : WAIT_START;
	/*
	 * One line per instance once it settled well: "web@0: started", or
	 * the words of the node that runs it: "web@0: restarted on n2".
	 */
	if (!ctx->opts['q'])
		waiters_report(
		    ctx->client, kind == WAIT_STOP ? "stopped" : "started");
	for (i = 0; i < n && !ctx->opts['W']; i++) {
		if (tokens[i] != 0 ?
		        waiters_add_asked(ctx->client, v[i], tokens[i]) :
		        waiters_add(ctx->client, v[i], kind, JOB_RUNNING))
			waiting = 1;
	}
	free(tokens);
	if (waiting)
		return (CMD_WAIT);
	ctx->code = waiters_code(ctx->client);
	return (ctx->code == 0 ? CMD_OK : CMD_ERROR);
}

/* The signal, first of the operands, before the targets. */
static enum cmd_retval
cmd_signal_check(struct cmd_ctx *ctx)
{
	if (signame_parse(ctx->argv[0]) > 0)
		return (CMD_OK);
	cmd_error(ctx, "%s: unknown signal", ctx->argv[0]);
	ctx->code = CMD_EXIT_USAGE;
	return (CMD_ERROR);
}

/*
 * "all" means every instance that has a process: with it among the
 * targets, an instance without one (a periodic job WAITING for its slot, a
 * free queue slot, a stopped job) is skipped.  Otherwise a target without
 * a process gets "NAME: not running" and exit 1; the others still get the
 * signal.
 */
static enum cmd_retval
cmd_signal_exec(struct cmd_ctx *ctx)
{
	struct inst **v = ctx->insts;
	size_t i;
	uint64_t token;
	long uid = (long)server_client_uid(ctx->client);
	int sig = signame_parse(ctx->argv[0]), all = 0, waiting = 0;

	for (i = 1; i < (size_t)ctx->argc; i++) {
		if (strcmp(ctx->argv[i], "all") == 0)
			all = 1;
	}
	/* The holder's answers: "web: signalled HUP on n2 (pid 4242)". */
	waiters_report(ctx->client, "signalled");
	for (i = 0; i < ctx->ninsts; i++) {
		/* all: each node signals its own runs. */
		if (!all && cluster_elsewhere(v[i])) {
			token = cluster_request(v[i], "signal", sig, uid, 1);
			if (waiters_add_asked(ctx->client, v[i], token))
				waiting = 1;
		} else if (v[i]->run.pid > 0)
			inst_signal(v[i], sig);
		else if (!all) {
			cmd_error(ctx, "%s: not running", v[i]->label);
			ctx->code = CMD_EXIT_FAILED;
		}
	}
	if (waiting)
		return (CMD_WAIT);
	if (waiters_code(ctx->client) != 0)
		ctx->code = CMD_EXIT_FAILED;
	return (ctx->code == 0 ? CMD_OK : CMD_ERROR);
}
