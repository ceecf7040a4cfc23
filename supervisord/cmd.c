/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The command table and its checks, done once for every command: name
 * lookup (exact, alias, then unique prefix), options against the entry's
 * optstring and long names, operand counts, and rights of the peer.  Only
 * then does a handler run.  Before it, the typed options are checked
 * (cmd_opt_num() reads them) and the operands the entry declares as
 * targets are resolved into ctx->insts, ctx->jobs or ctx->ids, so that
 * "no such job" is decided here once.  Handlers print through
 * cmd_print()/cmd_error() and JSON through ctx->jw (lib/json.c), which
 * gather output and send it in as few messages as possible.
 */

#include "config.h"

#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "daemon.h"
#include "duration.h"
#include "jobs-view.h"
#include "jobs.h"
#include "json.h"
#include "log.h"
#include "server.h"
#include "signame.h"
#include "vigild.h"
#include "xmalloc.h"

extern const struct cmd_entry cmd_status_entry, cmd_pid_entry, cmd_start_entry,
    cmd_stop_entry, cmd_restart_entry, cmd_signal_entry, cmd_ping_entry,
    cmd_version_entry, cmd_shutdown_entry, cmd_list_commands_entry,
    cmd_reload_entry, cmd_wait_entry, cmd_history_entry, cmd_tail_entry,
    cmd_logrotate_entry, cmd_enqueue_entry, cmd_queue_entry, cmd_retry_entry,
    cmd_delete_entry, cmd_purge_entry, cmd_kick_entry, cmd_metrics_entry,
    cmd_cluster_entry;

/* Sorted by name, as list-commands prints them. */
const struct cmd_entry *const cmd_table[] = {
	&cmd_cluster_entry,
	&cmd_delete_entry,
	&cmd_enqueue_entry,
	&cmd_history_entry,
	&cmd_kick_entry,
	&cmd_list_commands_entry,
	&cmd_logrotate_entry,
	&cmd_metrics_entry,
	&cmd_pid_entry,
	&cmd_ping_entry,
	&cmd_purge_entry,
	&cmd_queue_entry,
	&cmd_reload_entry,
	&cmd_restart_entry,
	&cmd_retry_entry,
	&cmd_shutdown_entry,
	&cmd_signal_entry,
	&cmd_start_entry,
	&cmd_status_entry,
	&cmd_stop_entry,
	&cmd_tail_entry,
	&cmd_version_entry,
	&cmd_wait_entry,
	NULL,
};

static const struct cmd_entry *
cmd_find(const char *name, char **cause)
{
	const struct cmd_entry *const *e, *found = NULL;
	size_t len = strlen(name);
	int n = 0;

	for (e = cmd_table; *e != NULL; e++) {
		if (strcmp((*e)->name, name) == 0)
			return (*e);
		if ((*e)->alias != NULL && strcmp((*e)->alias, name) == 0)
			return (*e);
	}
	for (e = cmd_table; *e != NULL; e++) {
		if (len > 0 && strncmp((*e)->name, name, len) == 0) {
			found = *e;
			n++;
		}
	}
	if (n == 1)
		return (found);
	if (n > 1)
		xasprintf(cause, "ambiguous command: %s", name);
	else
		xasprintf(cause, "unknown command: %s", name);
	return (NULL);
}

/* Return 1 if the command called name exists and only reads. */
int
cmd_is_readonly(const char *name)
{
	const struct cmd_entry *const *e;

	for (e = cmd_table; *e != NULL; e++) {
		if (strcmp((*e)->name, name) == 0)
			return (((*e)->flags & CMD_READONLY) != 0);
	}
	return (0);
}

/* Map a long option ("no-wait") to its letter through the entry's list. */
static int
cmd_long_option(const struct cmd_entry *e, const char *name)
{
	const char *p = e->longopts, *eq;
	size_t len = strlen(name);

	/* longopts: "name=x,name2=y" */
	while (p != NULL && *p != '\0') {
		eq = strchr(p, '=');
		if (eq == NULL)
			break;
		if ((size_t)(eq - p) == len && strncmp(p, name, len) == 0)
			return ((unsigned char)eq[1]);
		p = strchr(eq, ',');
		if (p != NULL)
			p++;
	}
	return (-1);
}

/* Record option ch; take its argument from the word or the next one. */
static int
cmd_take_option(struct cmd_ctx *ctx, const struct cmd_entry *e, int ch,
    const char *rest, int *i, int argc, char **argv)
{
	const char *spec = strchr(e->optstring, ch);

	if (ch <= 0 || ch >= 128 || ch == ':' || spec == NULL) {
		cmd_error(ctx, "%s: unknown option", e->name);
		return (-1);
	}
	ctx->opts[ch] = 1;
	if (spec[1] != ':')
		return (0);
	if (rest != NULL && *rest != '\0')
		ctx->optarg[ch] = (char *)rest;
	else if (*i + 1 < argc)
		ctx->optarg[ch] = argv[++*i];
	else {
		cmd_error(ctx, "%s: option -%c needs a value", e->name, ch);
		return (-1);
	}
	return (1);
}

/* A long option: "--name" or "--name=value". */
static int
cmd_parse_long(struct cmd_ctx *ctx, const struct cmd_entry *e, int *i, int argc,
    char **argv)
{
	char *arg = argv[*i], name[64], *eq;
	const char *spec;
	int ch;

	strlcpy(name, arg + 2, sizeof(name));
	if ((eq = strchr(name, '=')) != NULL)
		*eq = '\0';
	if ((ch = cmd_long_option(e, name)) == -1) {
		cmd_error(ctx, "%s: unknown option %s", e->name, arg);
		return (-1);
	}
	eq = strchr(arg, '=');
	spec = strchr(e->optstring, ch);
	if (eq != NULL && spec != NULL && spec[1] != ':') {
		cmd_error(ctx, "%s: option --%s takes no value", e->name, name);
		return (-1);
	}
	return (cmd_take_option(ctx, e, ch, eq ? eq + 1 : NULL, i, argc, argv));
}

/*
 * Parse the options of argv (argv[0] is the command), which may come
 * before, between or after the operands (as GNU getopt allows); "--" ends
 * them.  The operands, in order, end up in ctx->argc/argv.
 */
static int
cmd_parse_options(
    struct cmd_ctx *ctx, const struct cmd_entry *e, int argc, char **argv)
{
	char *arg;
	int i, j, r, rest = 0;

	ctx->operands = xcalloc((size_t)argc + 1, sizeof(*ctx->operands));
	ctx->argv = ctx->operands;
	ctx->argc = 0;
	for (i = 1; i < argc; i++) {
		arg = argv[i];
		if (rest || arg[0] != '-' || arg[1] == '\0') {
			ctx->argv[ctx->argc++] = arg;
			continue;
		}
		if (strcmp(arg, "--") == 0) {
			rest = 1;
			continue;
		}
		if (arg[1] == '-') {
			if (cmd_parse_long(ctx, e, &i, argc, argv) == -1)
				return (-1);
			continue;
		}
		for (j = 1; arg[j] != '\0'; j++) {
			r = cmd_take_option(ctx, e, (unsigned char)arg[j],
			    arg + j + 1, &i, argc, argv);
			if (r == -1)
				return (-1);
			if (r == 1)
				break;
		}
	}
	return (0);
}

/* Send what the request's output holds, and free its targets. */
void
cmd_send(struct cmd_ctx *ctx)
{
	if (ctx->out.len > 0)
		server_client_write(
		    ctx->client, PROTO_STDOUT, ctx->out.data, ctx->out.len);
	if (ctx->err.len > 0)
		server_client_write(
		    ctx->client, PROTO_STDERR, ctx->err.data, ctx->err.len);
	proto_buf_clear(&ctx->out);
	proto_buf_clear(&ctx->err);
	cmd_targets_free(ctx);
}

/* Free what cmd_targets resolved (and the operands behind argv). */
void
cmd_targets_free(struct cmd_ctx *ctx)
{
	free(ctx->operands);
	free(ctx->insts);
	free(ctx->jobs);
	free(ctx->ids);
	free(ctx->broken);
	ctx->operands = NULL;
	ctx->insts = NULL;
	ctx->jobs = NULL;
	ctx->ids = NULL;
	ctx->broken = NULL;
}

/*
 * A command that changes state needs control rights; it is logged.
 * Return 0, or -1 with the error printed and ctx->code set.
 */
static int
cmd_rights(struct cmd_ctx *ctx, const struct cmd_entry *e, const char *word)
{
	const char *who = server_client_who(ctx->client);

	if (e->flags & CMD_READONLY)
		return (0);
	if (!server_client_may_act(ctx->client)) {
		cmd_error(ctx,
		    "%s: permission denied (%s may only run read-only "
		    "commands)",
		    e->name, who);
		log_warnx("%s: %s: permission denied", who, word);
		ctx->code = CMD_EXIT_FAILED;
		return (-1);
	}
	log_info("%s: %s", who, word);
	return (0);
}

/* The name of option ch as users write it: "--long" if it has one. */
static char *
cmd_opt_name(const struct cmd_entry *e, int ch, char *buf, size_t len)
{
	const char *p = e->longopts, *eq;

	while (p != NULL && (eq = strchr(p, '=')) != NULL) {
		if ((unsigned char)eq[1] == ch) {
			snprintf(buf, len, "--%.*s", (int)(eq - p), p);
			return (buf);
		}
		if ((p = strchr(eq, ',')) != NULL)
			p++;
	}
	snprintf(buf, len, "-%c", ch);
	return (buf);
}

/*
 * A usage error about what (an option or an operand): print "COMMAND:
 * what: why", set the exit code 2 and return CMD_ERROR.
 */
enum cmd_retval
cmd_usage_error(struct cmd_ctx *ctx, const char *what, const char *why)
{
	cmd_error(ctx, "%s: %s: %s", ctx->entry->name, what, why);
	ctx->code = CMD_EXIT_USAGE;
	return (CMD_ERROR);
}

/* An integer from o->min to o->max in s, or -1 with why set. */
static int
cmd_opt_int(
    const struct cmd_opt *o, const char *s, long long *v, char *why, size_t len)
{
	char *end;

	errno = 0;
	*v = strtoll(s, &end, 10);
	if (*s != '\0' && *end == '\0' && errno == 0 && *v >= o->min &&
	    *v <= o->max)
		return (0);
	if (o->min == INT_MIN && o->max == INT_MAX)
		snprintf(why, len, "not an integer: %s", s);
	else
		snprintf(why, len, "not a number from %lld to %lld: %s", o->min,
		    o->max, s);
	return (-1);
}

/* Check the value of typed option o; keep it in ctx->optnum. */
static int
cmd_opt_check(struct cmd_ctx *ctx, const struct cmd_opt *o)
{
	const char *s = ctx->optarg[o->ch];
	char why[256], name[64], *cause = NULL;
	uint64_t usec;
	long long v = 0;
	int r = 0;

	switch (o->type) {
	case CMD_OPT_INT:
		r = cmd_opt_int(o, s, &v, why, sizeof(why));
		break;
	case CMD_OPT_DURATION:
		if ((r = duration_parse(s, &usec, &cause)) == -1) {
			strlcpy(why, cause, sizeof(why));
			free(cause);
		}
		v = (long long)usec;
		break;
	case CMD_OPT_STATE:
		if ((r = job_state_parse(s)) == -1)
			snprintf(why, sizeof(why), "unknown state %s", s);
		v = r;
		break;
	case CMD_OPT_WORD:
		if (*s == '\0' && (r = -1) == -1)
			strlcpy(why, "empty", sizeof(why));
		break;
	case CMD_OPT_STRING:
		break;
	}
	if (r == -1) {
		cmd_usage_error(ctx,
		    cmd_opt_name(ctx->entry, o->ch, name, sizeof(name)), why);
		return (-1);
	}
	ctx->optnum[o->ch] = v;
	return (0);
}

/* Check every typed option given.  Return 0, or -1 after a usage error. */
static int
cmd_opts_check(struct cmd_ctx *ctx)
{
	const struct cmd_opt *o;

	for (o = ctx->entry->typed; o != NULL && o->ch != 0; o++) {
		if (ctx->opts[o->ch] && cmd_opt_check(ctx, o) == -1)
			return (-1);
	}
	return (0);
}

/*
 * The value of typed option ch (an integer, a duration in usec, a state),
 * or def if it was not given.
 */
long long
cmd_opt_num(const struct cmd_ctx *ctx, int ch, long long def)
{
	return (ctx->opts[ch] ? ctx->optnum[ch] : def);
}

/* A JSON writer's output into arg, a proto_buf (a command's output). */
void
cmd_json_write(void *arg, const void *p, size_t n)
{
	proto_buf_add(arg, p, n);
}

/* End a JSON reply: the line's newline. */
void
cmd_json_end(struct cmd_ctx *ctx)
{
	proto_buf_add(&ctx->out, "\n", 1);
}

/*
 * The checks of a request, in order: command name, options and operand
 * counts, rights, typed options, the handler's own word checks, targets.
 * Return 0, or -1 with the error printed and ctx->code set.
 */
static int
cmd_check(struct cmd_ctx *ctx, int argc, char **argv)
{
	const struct cmd_entry *e;
	char *cause = NULL;

	ctx->code = CMD_EXIT_USAGE;
	if (argc == 0) {
		cmd_error(ctx, "no command given");
		return (-1);
	}
	if ((e = cmd_find(argv[0], &cause)) == NULL) {
		cmd_error(ctx, "%s", cause);
		free(cause);
		return (-1);
	}
	if (cmd_parse_options(ctx, e, argc, argv) == -1 ||
	    ctx->argc < e->min_args ||
	    (e->max_args != -1 && ctx->argc > e->max_args)) {
		cmd_error(ctx, "usage: %s %s", e->name, e->usage);
		return (-1);
	}
	ctx->code = 0;
	if (cmd_rights(ctx, e, argv[0]) == -1)
		return (-1);
	ctx->entry = e;
	if (cmd_opts_check(ctx) == -1 ||
	    (e->check != NULL && e->check(ctx) != CMD_OK) ||
	    cmd_targets(ctx) == -1) {
		if (ctx->code == 0)
			ctx->code = CMD_EXIT_FAILED;
		return (-1);
	}
	return (0);
}

/*
 * Run one request from a client, with the datalen bytes at data that came
 * in PROTO_DATA frames before it (data NULL when none came; borrowed for
 * the call).  Every path ends the reply, except a handler that returns
 * CMD_WAIT: it has registered waits that end it.
 */
void
cmd_dispatch(struct client *c, uint32_t flags, int argc, char **argv,
    const uint8_t *data, size_t datalen)
{
	struct cmd_ctx ctx;
	enum cmd_retval r;

	memset(&ctx, 0, sizeof(ctx));
	ctx.client = c;
	ctx.json = (flags & PROTO_F_JSON) != 0;
	ctx.data = data;
	ctx.datalen = data != NULL ? datalen : 0;
	proto_buf_init(&ctx.out);
	proto_buf_init(&ctx.err);
	json_init(&ctx.jw, cmd_json_write, &ctx.out);
	if (cmd_check(&ctx, argc, argv) == -1)
		goto done;
	r = ctx.entry->exec(&ctx);
	/* A peer without control rights gets a few waiting requests only. */
	if (r == CMD_WAIT && server_client_may_wait(c) == -1) {
		ctx.code = EX_UNAVAILABLE;
		goto done;
	}
	if (r == CMD_WAIT) {
		cmd_send(&ctx);
		return;
	}
	if (r == CMD_ERROR && ctx.code == 0)
		ctx.code = CMD_EXIT_FAILED;
done:
	cmd_send(&ctx);
	server_client_finish(c, ctx.code);
}

/* Marks the instances taken by the current resolution. */
static unsigned int cmd_resolve_mark;

static void
cmd_push(struct cmd_ctx *ctx, size_t *cap, struct inst *in)
{
	/* Each instance once, however often the targets name it. */
	if (in->resolve_mark == cmd_resolve_mark)
		return;
	in->resolve_mark = cmd_resolve_mark;
	if (ctx->ninsts == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		ctx->insts =
		    xreallocarray(ctx->insts, *cap, sizeof(*ctx->insts));
	}
	ctx->insts[ctx->ninsts++] = in;
}

static void
cmd_push_job(struct cmd_ctx *ctx, size_t *cap, struct job *j)
{
	int i;

	for (i = 0; i < j->ninsts; i++)
		cmd_push(ctx, cap, j->insts[i]);
}

/* Start a new mark: no instance is taken yet. */
static void
cmd_resolve_begin(void)
{
	struct job *j;
	int i;

	if (++cmd_resolve_mark != 0)
		return;
	/* Wrapped around: forget every old mark. */
	RB_FOREACH(j, job_tree, &vigild.jobs) {
		for (i = 0; i < j->ninsts; i++)
			j->insts[i]->resolve_mark = 0;
	}
	cmd_resolve_mark = 1;
}

/*
 * Split "job@N": return the job (or NULL) with N in *idx, -2 when N is not
 * a number; *idx is -1 for a name without "@".
 */
static struct job *
cmd_split_instance(const char *name, long *idx)
{
	struct job *j = NULL;
	char *s, *at, *end;

	*idx = -1;
	s = xstrdup(name);
	if ((at = strrchr(s, '@')) != NULL) {
		*at = '\0';
		*idx = strtol(at + 1, &end, 10);
		if (at[1] == '\0' || *end != '\0' || *idx < 0)
			*idx = -2;
		j = job_find(s);
	}
	free(s);
	return (j);
}

/*
 * Does name (not a job's) name an instance, "job@N" of a job with more
 * than N instances?  Instances come before the broken job files a name
 * could also mean (a file "x@1.conf" is reported, never instance 1 of x).
 */
int
cmd_is_instance(const char *name)
{
	const struct job *j;
	long idx;

	j = cmd_split_instance(name, &idx);
	return (j != NULL && idx >= 0 && idx < j->ninsts);
}

/* A target names no job: BROKEN (exit 1) or no such job (exit 4). */
static int
cmd_no_job(struct cmd_ctx *ctx, const char *name)
{
	const struct broken_job *b;

	if ((b = reload_broken_find(name)) != NULL) {
		cmd_error(ctx, "%s: BROKEN: %s", name, b->reason);
		ctx->code = CMD_EXIT_FAILED;
	} else {
		cmd_error(ctx, "%s: no such job", name);
		ctx->code = CMD_EXIT_NO_JOB;
	}
	return (-1);
}

/* Add the instances one target ("all", "job", "job@N") names. */
static int
cmd_resolve_one(struct cmd_ctx *ctx, const char *name, size_t *cap, int *all)
{
	struct job *j;
	long idx = -1;

	if (strcmp(name, "all") == 0) {
		if ((*all)++ == 0) {
			RB_FOREACH(j, job_tree, &vigild.jobs)
				cmd_push_job(ctx, cap, j);
		}
		return (0);
	}
	if ((j = job_find(name)) == NULL)
		j = cmd_split_instance(name, &idx);
	if (j == NULL)
		return (cmd_no_job(ctx, name));
	if (idx == -2 || idx >= j->ninsts) {
		cmd_error(ctx, "%s: no such job", name);
		ctx->code = CMD_EXIT_NO_JOB;
		return (-1);
	}
	if (idx >= 0)
		cmd_push(ctx, cap, j->insts[idx]);
	else
		cmd_push_job(ctx, cap, j);
	return (0);
}

/*
 * Resolve targets into ctx->insts, each instance once, in the order of
 * first mention: the list never outgrows the instances there are,
 * however long the request.
 */
static int
cmd_resolve(struct cmd_ctx *ctx, int argc, char **argv)
{
	size_t cap = 0;
	int i, all = 0;

	cmd_resolve_begin();
	for (i = 0; i < argc; i++) {
		if (cmd_resolve_one(ctx, argv[i], &cap, &all) == -1)
			return (-1);
	}
	return (0);
}

/*
 * Take the targets that name a broken job file (and no job) into
 * ctx->broken, and keep the others in argv; return how many are left.
 * None at all: every broken file.
 */
static int
cmd_take_broken(struct cmd_ctx *ctx, int argc, char **argv)
{
	const struct broken_job *b;
	int i, keep = 0;

	ctx->broken =
	    xcalloc(vigild.nbroken + (size_t)argc + 1, sizeof(*ctx->broken));
	if (argc == 0) {
		for (; ctx->nbroken < vigild.nbroken; ctx->nbroken++)
			ctx->broken[ctx->nbroken] =
			    &vigild.broken[ctx->nbroken];
		return (0);
	}
	for (i = 0; i < argc; i++) {
		if (job_find(argv[i]) == NULL && !cmd_is_instance(argv[i]) &&
		    (b = reload_broken_find(argv[i])) != NULL)
			ctx->broken[ctx->nbroken++] = b;
		else
			argv[keep++] = argv[i];
	}
	return (keep);
}

/* Instance targets: "all" for none with CMD_TARGET_DEFAULT_ALL. */
static int
cmd_target_insts(struct cmd_ctx *ctx, int argc, char **argv)
{
	static char *all[] = { "all" };
	int named = argc > 0, flags = ctx->entry->target_flags;

	if (flags & CMD_TARGET_BROKEN)
		argc = cmd_take_broken(ctx, argc, argv);
	if (argc == 0 && !named && (flags & CMD_TARGET_DEFAULT_ALL))
		return (cmd_resolve(ctx, 1, all));
	return (cmd_resolve(ctx, argc, argv));
}

/* One job, or one instance of it ("job@N"): not "all". */
static int
cmd_target_one(struct cmd_ctx *ctx, char **argv)
{
	if (strcmp(argv[0], "all") == 0) {
		cmd_error(ctx, "%s: one job at a time", ctx->entry->name);
		ctx->code = CMD_EXIT_USAGE;
		return (-1);
	}
	return (cmd_resolve(ctx, 1, argv));
}

/*
 * The queue job called name.  Otherwise print why and set the exit code:
 * 4 for no such job, 1 for a job of another kind.
 */
static struct job *
cmd_queue_job(struct cmd_ctx *ctx, const char *name)
{
	struct job *j;

	if ((j = job_find(name)) == NULL) {
		cmd_error(ctx, "%s: no such job", name);
		ctx->code = CMD_EXIT_NO_JOB;
		return (NULL);
	}
	if (j->spec->kind != CONF_KIND_QUEUE) {
		cmd_error(ctx, "%s is not a queue job", name);
		ctx->code = CMD_EXIT_FAILED;
		return (NULL);
	}
	return (j);
}

/* Queue jobs, or with none and CMD_TARGET_DEFAULT_ALL every one. */
static int
cmd_target_queues(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct job *j;
	int i;

	ctx->jobs = xreallocarray(
	    NULL, vigild.njobs + (size_t)argc + 1, sizeof(*ctx->jobs));
	if (argc == 0 && (ctx->entry->target_flags & CMD_TARGET_DEFAULT_ALL)) {
		RB_FOREACH(j, job_tree, &vigild.jobs) {
			if (j->spec->kind == CONF_KIND_QUEUE)
				ctx->jobs[ctx->njobs++] = j;
		}
		return (0);
	}
	for (i = 0; i < argc; i++) {
		if ((j = cmd_queue_job(ctx, argv[i])) == NULL)
			return (-1);
		ctx->jobs[ctx->njobs++] = j;
	}
	return (0);
}

/* Message ids: positive decimal integers. */
static int
cmd_target_ids(struct cmd_ctx *ctx, int argc, char **argv)
{
	char *end;
	long long v;
	int i;

	ctx->ids = xreallocarray(NULL, (size_t)argc + 1, sizeof(*ctx->ids));
	for (i = 0; i < argc; i++) {
		errno = 0;
		v = strtoll(argv[i], &end, 10);
		if (*argv[i] < '0' || *argv[i] > '9' || errno != 0 ||
		    *end != '\0' || v <= 0) {
			cmd_usage_error(ctx, "not a message id", argv[i]);
			return (-1);
		}
		ctx->ids[ctx->nids++] = v;
	}
	return (0);
}

/*
 * Resolve the operands the entry declares as targets (again, for a reply
 * that waited: what they name may have changed).  Return 0, or -1 with
 * the error printed and the exit code set (4: no such job).
 */
int
cmd_targets(struct cmd_ctx *ctx)
{
	const struct cmd_entry *e = ctx->entry;
	char **argv = ctx->argv + e->target_at;
	int argc = ctx->argc - e->target_at;

	if (argc < 0)
		argc = 0;
	if (e->target_n > 0 && argc > e->target_n)
		argc = e->target_n;
	switch (e->target) {
	case CMD_TARGET_INSTANCES:
		return (cmd_target_insts(ctx, argc, argv));
	case CMD_TARGET_ONE_JOB:
		return (argc > 0 ? cmd_target_one(ctx, argv) : 0);
	case CMD_TARGET_QUEUES:
		return (cmd_target_queues(ctx, argc, argv));
	case CMD_TARGET_IDS:
		return (cmd_target_ids(ctx, argc, argv));
	case CMD_TARGET_NONE:
		break;
	}
	return (0);
}

/* The options of an entry for --help: "-n --lines -f --follow". */
static void
cmd_print_options(FILE *f, const struct cmd_entry *e)
{
	const char *o;
	char name[64];

	if (*e->optstring == '\0')
		return;
	fprintf(f, "      options:");
	for (o = e->optstring; *o != '\0'; o++) {
		if (*o == ':')
			continue;
		fprintf(f, " -%c", *o);
		if (strncmp(
		        cmd_opt_name(e, (unsigned char)*o, name, sizeof(name)),
		        "--", 2) == 0)
			fprintf(f, " %s", name);
	}
	fprintf(f, "\n");
}

/*
 * Print the command table to f as vigilctl --help shows it: per command a
 * line "  NAME (ALIAS) USAGE", as list-commands prints it, the help
 * indented below, and "      options: -x --long ..." if it has any.  The
 * build makes vigilctl's help from this output, and the bash completion
 * reads its commands and options from that help.
 */
void
cmd_print_table(FILE *f)
{
	const struct cmd_entry *const *e;

	for (e = cmd_table; *e != NULL; e++) {
		fprintf(f, "  %s%s%s%s%s%s\n", (*e)->name,
		    (*e)->alias ? " (" : "", (*e)->alias ? (*e)->alias : "",
		    (*e)->alias ? ")" : "", *(*e)->usage != '\0' ? " " : "",
		    (*e)->usage);
		fprintf(f, "      %s\n", (*e)->help);
		cmd_print_options(f, *e);
	}
}
