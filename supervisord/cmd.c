/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The command table and its checks, done once for every command: name
 * lookup (exact, alias, then unique prefix), options against the entry's
 * optstring and long names, operand counts, and rights of the peer.  Only
 * then does a handler run.  Handlers print through cmd_print()/cmd_error(),
 * which gather output and send it in as few messages as possible.
 */

#include "config.h"

#include <sys/types.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "signame.h"
#include "vigild.h"
#include "xmalloc.h"

extern const struct cmd_entry cmd_status_entry, cmd_pid_entry, cmd_start_entry,
    cmd_stop_entry, cmd_restart_entry, cmd_signal_entry, cmd_ping_entry,
    cmd_version_entry, cmd_shutdown_entry, cmd_list_commands_entry,
    cmd_reload_entry, cmd_wait_entry, cmd_history_entry, cmd_tail_entry,
    cmd_logrotate_entry, cmd_enqueue_entry, cmd_queue_entry, cmd_retry_entry,
    cmd_delete_entry, cmd_purge_entry, cmd_kick_entry;

/* Sorted by name, as list-commands prints them. */
const struct cmd_entry *const cmd_table[] = {
	&cmd_delete_entry,
	&cmd_enqueue_entry,
	&cmd_history_entry,
	&cmd_kick_entry,
	&cmd_list_commands_entry,
	&cmd_logrotate_entry,
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

/*
 * Return 1 if the peer may run commands that change state: root, the user
 * vigild runs as, and processes that had socket_group among their groups
 * when they connected (SO_PEERCRED, SO_PEERGROUPS).  Anyone else who can reach
 * the socket (socket_mode decides who can) may only read.
 */
int
cmd_peer_may_act(struct client *c)
{
	uid_t uid = server_client_uid(c);

	if (uid == 0 || uid == geteuid())
		return (1);
	return (vigild.conf->has_socket_gid &&
	    server_client_in_group(c, vigild.conf->socket_gid));
}

static void
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
	free(ctx->operands);
	ctx->operands = NULL;
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
	const struct cmd_entry *e;
	struct cmd_ctx ctx;
	enum cmd_retval r;
	char *cause = NULL;

	memset(&ctx, 0, sizeof(ctx));
	ctx.client = c;
	ctx.json = (flags & PROTO_F_JSON) != 0;
	ctx.data = data;
	ctx.datalen = data != NULL ? datalen : 0;
	proto_buf_init(&ctx.out);
	proto_buf_init(&ctx.err);
	if (argc == 0) {
		cmd_error(&ctx, "no command given");
		ctx.code = CMD_EXIT_USAGE;
		goto done;
	}
	if ((e = cmd_find(argv[0], &cause)) == NULL) {
		cmd_error(&ctx, "%s", cause);
		free(cause);
		ctx.code = CMD_EXIT_USAGE;
		goto done;
	}
	if (cmd_parse_options(&ctx, e, argc, argv) == -1 ||
	    ctx.argc < e->min_args ||
	    (e->max_args != -1 && ctx.argc > e->max_args)) {
		cmd_error(&ctx, "usage: %s %s", e->name, e->usage);
		ctx.code = CMD_EXIT_USAGE;
		goto done;
	}
	if (!(e->flags & CMD_READONLY) && !cmd_peer_may_act(c)) {
		cmd_error(&ctx,
		    "%s: permission denied (uid %ld may only run "
		    "read-only commands)",
		    e->name, (long)server_client_uid(c));
		log_warnx("uid %ld: %s: permission denied",
		    (long)server_client_uid(c), argv[0]);
		ctx.code = CMD_EXIT_FAILED;
		goto done;
	}
	if (!(e->flags & CMD_READONLY))
		log_info("uid %ld: %s", (long)server_client_uid(c), argv[0]);
	ctx.entry = e;
	r = e->exec(&ctx);
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

static void __attribute__((format(printf, 2, 0)))
cmd_vadd(struct proto_buf *b, const char *fmt, va_list ap)
{
	char *s;
	int n;

	if ((n = vasprintf(&s, fmt, ap)) == -1)
		fatal("vasprintf");
	proto_buf_add(b, s, (size_t)n);
	free(s);
}

/* Add formatted text to the command's standard output. */
void
cmd_print(struct cmd_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cmd_vadd(&ctx->out, fmt, ap);
	va_end(ap);
}

/* Add a line (a newline is appended) to the command's standard error. */
void
cmd_error(struct cmd_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cmd_vadd(&ctx->err, fmt, ap);
	va_end(ap);
	proto_buf_add(&ctx->err, "\n", 1);
}

/* Send formatted text to a client right away (outside a handler). */
void
cmd_printf_client(struct client *c, enum proto_type type, const char *fmt, ...)
{
	struct proto_buf b;
	va_list ap;

	proto_buf_init(&b);
	va_start(ap, fmt);
	cmd_vadd(&b, fmt, ap);
	va_end(ap);
	server_client_write(c, type, b.data, b.len);
	proto_buf_clear(&b);
}

/* Append s as a JSON string (quoted and escaped) to the output. */
void
cmd_print_json_string(struct cmd_ctx *ctx, const char *s)
{
	const unsigned char *p;

	if (s == NULL) {
		cmd_print(ctx, "null");
		return;
	}
	proto_buf_add(&ctx->out, "\"", 1);
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\')
			cmd_print(ctx, "\\%c", *p);
		else if (*p < 0x20)
			cmd_print(ctx, "\\u%04x", *p);
		else
			proto_buf_add(&ctx->out, p, 1);
	}
	proto_buf_add(&ctx->out, "\"", 1);
}

/* Marks the instances taken by the current cmd_resolve(). */
static unsigned int cmd_resolve_mark;

static void
cmd_push(struct inst ***v, size_t *n, size_t *cap, struct inst *in)
{
	/* Each instance once, however often the targets name it. */
	if (in->resolve_mark == cmd_resolve_mark)
		return;
	in->resolve_mark = cmd_resolve_mark;
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		*v = xreallocarray(*v, *cap, sizeof(**v));
	}
	(*v)[(*n)++] = in;
}

static void
cmd_push_job(struct inst ***v, size_t *n, size_t *cap, struct job *j)
{
	int i;

	for (i = 0; i < j->ninsts; i++)
		cmd_push(v, n, cap, &j->insts[i]);
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
			j->insts[i].resolve_mark = 0;
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
		j = supervise_find_job(s);
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

/*
 * Resolve targets ("all", "job", "job@N") into instances, each instance
 * once, in the order of first mention: the list never outgrows the
 * instances there are, however long the request.  On success return 0
 * with *out (owned array of borrowed pointers) and *n.  On an unknown job
 * print an error, set the exit code 4 and return -1; on a job whose file
 * did not load (BROKEN), the same with its error and exit code 1.
 */
int
cmd_resolve(
    struct cmd_ctx *ctx, int argc, char **argv, struct inst ***out, size_t *n)
{
	const struct broken_job *b;
	struct inst **v = NULL;
	struct job *j;
	size_t cap = 0;
	long idx;
	int i, all = 0;

	*n = 0;
	cmd_resolve_begin();
	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "all") == 0) {
			if (all++ > 0)
				continue;
			RB_FOREACH(j, job_tree, &vigild.jobs)
				cmd_push_job(&v, n, &cap, j);
			continue;
		}
		idx = -1;
		if ((j = supervise_find_job(argv[i])) == NULL)
			j = cmd_split_instance(argv[i], &idx);
		if (j == NULL && (b = reload_broken_find(argv[i])) != NULL) {
			cmd_error(ctx, "%s: BROKEN: %s", argv[i], b->reason);
			ctx->code = CMD_EXIT_FAILED;
			free(v);
			return (-1);
		}
		if (j == NULL || idx == -2 || idx >= j->ninsts) {
			cmd_error(ctx, "%s: no such job", argv[i]);
			ctx->code = CMD_EXIT_NO_JOB;
			free(v);
			return (-1);
		}
		if (idx >= 0)
			cmd_push(&v, n, &cap, &j->insts[idx]);
		else
			cmd_push_job(&v, n, &cap, j);
	}
	*out = v;
	return (0);
}

/* Local time with milliseconds of a wall clock usec, or "-" for none. */
char *
cmd_format_time(int64_t usec, char *buf, size_t len)
{
	struct tm tm;
	time_t t = (time_t)(usec / 1000000);

	if (usec <= 0 || localtime_r(&t, &tm) == NULL)
		strlcpy(buf, "-", len);
	else
		snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03d",
		    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		    tm.tm_min, tm.tm_sec, (int)(usec % 1000000 / 1000));
	return (buf);
}

/*
 * Print the command table to f as vigilctl --help shows it: per command a
 * line "  NAME (ALIAS) USAGE", as list-commands prints it, and the help
 * indented below.  The build makes vigilctl's help from this output.
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
	}
}

/* "exit N", "signal NAME" or "-": how a run ended (-1: none of either). */
char *
cmd_format_exit(int exit_code, int sig, char *buf, size_t len)
{
	const char *name;

	if (exit_code >= 0)
		snprintf(buf, len, "exit %d", exit_code);
	else if (sig > 0 && (name = signame_name(sig)) != NULL)
		snprintf(buf, len, "signal %s", name);
	else if (sig > 0)
		snprintf(buf, len, "signal %d", sig);
	else
		strlcpy(buf, "-", len);
	return (buf);
}
