/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * vigilctl: a thin client.  It finds the control socket, sends its
 * arguments as one command, copies the replies to stdout and stderr, and
 * exits with the code vigild sends.  Every command lives in vigild's
 * command table, so the two programs cannot drift apart.
 *
 * This file reads the command line: vigilctl's options, --help, the
 * request made of the rest; vigilctl-conn.c finds vigild and talks to it,
 * vigilctl-import.c translates supervisord's files without it.
 *
 * Two exceptions, both for enqueue: with the payload "-", vigilctl reads
 * it from its standard input and sends it in PROTO_DATA frames before the
 * command; and with --direct, it writes the message into state.db itself
 * (for when vigild is down), then asks a running vigild, if any, to kick
 * the job: the one that holds the state dir (STATE_DIR/vigild.lock names
 * its runtime dir), else the one it would talk to.
 */

#include "config.h"

#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "duration.h"
#include "enqueue.h"
#include "proto.h"
#include "queue.h"
#include "store.h"
#include "vigilctl.h"
#include "xmalloc.h"

/* How long enqueue --direct waits for vigild's hold on state.db. */
#define VIGILCTL_BUSY_MS 10000
/* How long vigild may take to acknowledge a request, by default. */
#define VIGILCTL_TIMEOUT (30 * DURATION_USEC_PER_SEC)

/* The options and operands of enqueue, as vigilctl reads them. */
struct vigilctl_enqueue {
	int direct;
	const char *delay;
	const char *unique;
	const char *priority;
	const char *operands[2];
	int noperands;
	int bad; /* an unknown option, a missing value, too many operands */
};

/*
 * The commands, as vigild --list-commands prints its command table: made
 * at build time into vigilctl-commands.c (Makefile.am).
 */
extern const char vigilctl_commands[];

static void __attribute__((noreturn)) vigilctl_usage(int code)
{
	FILE *f = code == 0 ? stdout : stderr;

	fputs(
	    "usage: vigilctl [-s SOCKET] [-c FILE] [--state-dir DIR] [--json]\n"
	    "                [--raw] [--timeout DUR] COMMAND [ARGS]\n"
	    "\n"
	    "Control vigild through its socket.\n"
	    "\n"
	    "  -s, --socket PATH  control socket (else $VIGIL_SOCKET, else\n"
	    "                     RUNTIME_DIR/vigild.sock of the config)\n"
	    "  -c, --config FILE  vigil.conf to find the socket from\n"
	    "      --state-dir DIR\n"
	    "                     state.db's directory, for enqueue --direct\n"
	    "                     (else $VIGIL_STATE_DIR, else the config's)\n"
	    "      --json         machine-readable output\n"
	    "      --raw          write what vigild sends byte for byte; else\n"
	    "                     control characters (a job's escape\n"
	    "                     sequences) are shown as \\x1b on a terminal\n"
	    "      --timeout DUR  give up (exit 69) if vigild has not taken the\n"
	    "                     request within DUR (default 30s; 0: never);\n"
	    "                     once taken, waiting commands are not cut off\n"
	    "      --version      print the version and exit\n"
	    "  -h, --help         print this help and exit\n"
	    "\n"
	    "Commands (options may come before or after job names):\n",
	    f);
	/* vigild's command table, as vigild --list-commands printed it. */
	fputs(vigilctl_commands, f);
	fputs("  enqueue --direct ...\n"
	      "      vigilctl writes the message into state.db itself, for "
	      "when\n"
	      "      vigild is down\n"
	      "  import supervisord [--jobs-dir DIR] [--dry-run] [--force] "
	      "FILE...\n"
	      "      options: --jobs-dir --dry-run --force\n"
	      "      vigilctl translates supervisord config files into job "
	      "files,\n"
	      "      without vigild\n"
	      "\n"
	      "A job is NAME, NAME@INDEX for one instance, or all.\n"
	      "Exit: 0 ok, 1 failed, 2 usage, 3 not running, 4 no such job,\n"
	      "69 vigild unreachable, 76 protocol mismatch, 78 bad config.\n",
	    f);
	exit(code);
}

/*
 * Read the payload from standard input: at most QUEUE_PAYLOAD_MAX bytes,
 * or exit 1.  Return it (owned) with its length in *len.
 */
static uint8_t *
vigilctl_read_payload(size_t *len)
{
	uint8_t *buf;
	char *cause = NULL;
	size_t n = 0;
	ssize_t r;

	buf = xmalloc(QUEUE_PAYLOAD_MAX + 1);
	while (n < QUEUE_PAYLOAD_MAX + 1) {
		r = read(STDIN_FILENO, buf + n, QUEUE_PAYLOAD_MAX + 1 - n);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1)
			err(1, "standard input");
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (enqueue_payload_check(n, &cause) == -1)
		errx(1, "%s", cause);
	*len = n;
	return (buf);
}

/* Is word the command enqueue (or a prefix of it, as vigild allows)? */
static int
vigilctl_is_enqueue(const char *word)
{
	size_t len = strlen(word);

	return (len > 0 && strncmp(word, "enqueue", len) == 0);
}

/*
 * Which field of eq an option of enqueue sets ("-d", "-dVALUE",
 * "--delay", "--delay=VALUE"), with its value in *value when it is in the
 * same word.  NULL for an option enqueue does not know.
 */
static const char **
vigilctl_enqueue_slot(
    struct vigilctl_enqueue *eq, const char *arg, const char **value)
{
	static const char *const names[] = { "delay", "unique", "priority" };
	const char **slots[] = { &eq->delay, &eq->unique, &eq->priority };
	const char *eqs;
	size_t i, len;

	*value = NULL;
	if (arg[1] != '-') {
		for (i = 0; i < 3; i++) {
			if (arg[1] == names[i][0]) {
				*value = arg[2] != '\0' ? arg + 2 : NULL;
				return (slots[i]);
			}
		}
		return (NULL);
	}
	eqs = strchr(arg, '=');
	len = eqs != NULL ? (size_t)(eqs - arg - 2) : strlen(arg + 2);
	for (i = 0; i < 3; i++) {
		if (strlen(names[i]) == len &&
		    strncmp(arg + 2, names[i], len) == 0) {
			*value = eqs != NULL ? eqs + 1 : NULL;
			return (slots[i]);
		}
	}
	return (NULL);
}

/*
 * Read enqueue's words as vigild does: options anywhere, "--" ends them.
 * Also take vigilctl's own --direct.
 */
static void
vigilctl_enqueue_parse(int argc, char **argv, struct vigilctl_enqueue *eq)
{
	const char **slot, *value;
	char *arg;
	int i, rest = 0;

	memset(eq, 0, sizeof(*eq));
	for (i = 1; i < argc; i++) {
		arg = argv[i];
		if (rest || arg[0] != '-' || arg[1] == '\0') {
			if (eq->noperands == 2)
				eq->bad = 1;
			else
				eq->operands[eq->noperands++] = arg;
		} else if (strcmp(arg, "--") == 0)
			rest = 1;
		else if (strcmp(arg, "--direct") == 0)
			eq->direct = 1;
		else if ((slot = vigilctl_enqueue_slot(eq, arg, &value)) !=
		        NULL &&
		    (value != NULL || i + 1 < argc))
			*slot = value != NULL ? value : argv[++i];
		else
			eq->bad = 1; /* unknown, or its value is missing */
	}
}

/*
 * Check enqueue --direct's words: the job's name here (there is no vigild
 * to know the job), the options and the payload's size with vigild's own
 * enqueue_check.  Exit 2 (1 for a payload too large) with a message if
 * one is bad.  A payload from standard input is checked as it is read.
 */
static void
vigilctl_direct_check(
    const struct vigilctl_enqueue *eq, int64_t now, struct enqueue_opts *o)
{
	struct enqueue_req req;
	const char *payload = eq->noperands == 2 ? eq->operands[1] : "";
	char *cause = NULL;

	if (eq->bad || eq->noperands < 1)
		errx(2,
		    "usage: enqueue --direct [--delay DUR] [--unique KEY] "
		    "[--priority N] JOB [PAYLOAD | -]");
	if (!conf_name_is_valid(eq->operands[0]))
		errx(2, "%s: not a valid job name", eq->operands[0]);
	req.delay = eq->delay;
	req.priority = eq->priority;
	req.unique = eq->unique;
	req.len = strcmp(payload, "-") == 0 ? 0 : strlen(payload);
	if (enqueue_check(&req, now, o, &cause) == -1)
		errx(errno == EMSGSIZE ? 1 : 2, "enqueue: %s", cause);
}

/* Open STATE_DIR/state.db and its queue, or exit 1. */
static struct queue *
vigilctl_direct_open(const struct vigilctl_where *w, struct store **s)
{
	struct queue *q;
	char *dir, *path, *cause = NULL;

	dir = vigilctl_state_dir(w);
	xasprintf(&path, "%s/state.db", dir);
	if ((*s = store_open(path, &cause)) == NULL)
		errx(1, "%s: %s", path,
		    strncmp(cause, "state.db: ", 10) == 0 ? cause + 10 : cause);
	if (cause != NULL) {
		warnx("%s: %s", path, cause);
		free(cause);
		cause = NULL;
	}
	free(path);
	/* vigild holds the write lock only briefly: wait for it. */
	store_busy_timeout_set(*s, VIGILCTL_BUSY_MS);
	/* Message ids never repeat in a state directory (store_ids_keep). */
	xasprintf(&path, "%s/queue-ids", dir);
	if (store_ids_keep(*s, path, 0, &cause) == -1)
		errx(1, "%s", cause);
	free(path);
	free(dir);
	if ((q = queue_open(*s, &cause)) == NULL)
		errx(1, "%s", cause);
	return (q);
}

/*
 * enqueue --direct: write the message into state.db without vigild, which
 * may be down.  The job cannot be checked, only its name.  Print the id
 * (or the live duplicate's, exit 1), then kick a running vigild.
 */
static int
vigilctl_direct(const struct vigilctl_where *w,
    const struct vigilctl_enqueue *eq, uint32_t flags)
{
	struct enqueue_opts o;
	struct store *s;
	struct queue *q;
	const void *payload = "";
	uint8_t *data = NULL;
	size_t len = 0;
	int64_t now = store_now(), id = 0, existing = 0;
	char *cause = NULL, *dir;
	int rc;

	vigilctl_direct_check(eq, now, &o);
	if (eq->noperands == 2 && strcmp(eq->operands[1], "-") == 0)
		payload = data = vigilctl_read_payload(&len);
	else if (eq->noperands == 2) {
		payload = eq->operands[1];
		len = strlen(eq->operands[1]);
	}
	q = vigilctl_direct_open(w, &s);
	rc = queue_enqueue(q, eq->operands[0], payload, len, eq->unique,
	    o.priority, now + (int64_t)o.delay, now, &id, &existing, &cause);
	queue_close(q);
	store_close(s);
	free(data);
	if (rc == -1)
		errx(1, "enqueue: %s", cause);
	if (flags & PROTO_F_JSON)
		printf("{\"id\":%lld%s}\n",
		    (long long)(rc == 1 ? existing : id),
		    rc == 1 ? ",\"duplicate\":true" : "");
	else
		printf("%lld\n", (long long)(rc == 1 ? existing : id));
	if (fflush(stdout) == EOF)
		err(1, "stdout");
	if (rc == 1) {
		warnx("%s: a message with key %s is already queued: id %lld",
		    eq->operands[0], eq->unique, (long long)existing);
		return (1);
	}
	dir = vigilctl_state_dir(w);
	vigilctl_kick(w, dir, eq->operands[0]);
	free(dir);
	return (0);
}

/*
 * The request: the command, after PROTO_DATA frames with the payload of
 * "enqueue JOB -" read from standard input (one frame, maybe empty, at
 * least).
 */
static void
vigilctl_request(struct proto_buf *out, uint32_t flags, int argc, char **argv,
    const struct vigilctl_enqueue *eq)
{
	uint8_t *data;
	size_t len, off = 0, n;

	if (eq != NULL && eq->noperands == 2 &&
	    strcmp(eq->operands[1], "-") == 0) {
		data = vigilctl_read_payload(&len);
		do {
			n = len - off > PROTO_MAX_PAYLOAD ? PROTO_MAX_PAYLOAD :
			                                    len - off;
			proto_append(out, PROTO_DATA, data + off, n);
			off += n;
		} while (off < len);
		free(data);
	}
	proto_command_pack(out, flags, argc, argv);
}

/* Take --timeout DUR (0: no limit), or exit 2. */
static uint64_t
vigilctl_timeout_parse(const char *arg)
{
	uint64_t usec;
	char *cause = NULL;

	if (duration_parse(arg, &usec, &cause) == -1)
		errx(2, "--timeout: %s", cause);
	return (usec);
}

int
main(int argc, char **argv)
{
	enum {
		OPT_JSON = 256,
		OPT_VERSION,
		OPT_STATE_DIR,
		OPT_TIMEOUT,
		OPT_RAW,
	};
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "config", required_argument, NULL, 'c' },
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "raw", no_argument, NULL, OPT_RAW },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct vigilctl_where where = { NULL, NULL, NULL };
	struct vigilctl_enqueue eq, *enq = NULL;
	struct proto_buf out;
	uint64_t timeout = VIGILCTL_TIMEOUT;
	uint32_t flags = PROTO_F_ACK;
	char *path;
	int ch, code, raw = 0;

	while ((ch = getopt_long(argc, argv, "+s:c:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 's':
			where.socket = optarg;
			break;
		case 'c':
			where.config = optarg;
			break;
		case OPT_STATE_DIR:
			where.state_dir = optarg;
			break;
		case OPT_JSON:
			flags |= PROTO_F_JSON;
			break;
		case OPT_TIMEOUT:
			timeout = vigilctl_timeout_parse(optarg);
			break;
		case OPT_RAW:
			raw = 1;
			break;
		case OPT_VERSION:
			printf("vigilctl %s\n", PACKAGE_VERSION);
			return (0);
		case 'h':
			vigilctl_usage(0);
		default:
			vigilctl_usage(2);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0)
		vigilctl_usage(2);
	if (strcmp(argv[0], "import") == 0)
		return (vigilctl_import(argc, argv, where.config));
	if (vigilctl_is_enqueue(argv[0])) {
		vigilctl_enqueue_parse(argc, argv, &eq);
		if (eq.direct)
			return (vigilctl_direct(&where, &eq, flags));
		enq = &eq;
	}

	vigilctl_escape_init(raw, (flags & PROTO_F_JSON) != 0);

	/* Standard input first: vigild waits only 10 s for a request. */
	proto_buf_init(&out);
	vigilctl_request(&out, flags, argc, argv, enq);
	path = vigilctl_socket_path(&where, 0);
	code = vigilctl_exchange(path, &out, timeout);
	free(path);
	proto_buf_clear(&out);
	return (code);
}
