/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * vigilctl: a thin client.  It finds the control socket, sends its
 * arguments as one command, copies the replies to stdout and stderr, and
 * exits with the code vigild sends.  Every command lives in vigild's
 * command table, so the two programs cannot drift apart.
 *
 * It waits for vigild only so long (--timeout, 30 s by default): until
 * vigild acknowledges the request (PROTO_ACK, asked for with PROTO_F_ACK),
 * which it does as soon as it has read it.  What the command then takes,
 * a wait or a slow stop, is not limited.
 *
 * Two exceptions, both for enqueue: with the payload "-", vigilctl reads
 * it from its standard input and sends it in PROTO_DATA frames before the
 * command; and with --direct, it writes the message into state.db itself
 * (for when vigild is down), then asks a running vigild, if any, to kick
 * the job: the one that holds the state dir (STATE_DIR/vigild.lock names
 * its runtime dir), else the one it would talk to.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "duration.h"
#include "enqueue.h"
#include "lock.h"
#include "proto.h"
#include "queue.h"
#include "safedir.h"
#include "store.h"
#include "ttyesc.h"
#include "vigilctl.h"
#include "xmalloc.h"

/* How long enqueue --direct waits for vigild's hold on state.db. */
#define VIGILCTL_BUSY_MS 10000
/* How long the kick after enqueue --direct may take. */
#define VIGILCTL_KICK_SEC 2
/* How long vigild may take to acknowledge a request, by default. */
#define VIGILCTL_TIMEOUT (30 * DURATION_USEC_PER_SEC)

/*
 * Until vigild has answered: the monotonic usec by which it must have, or
 * 0 for no limit; and the limit as given, for the message.
 */
static uint64_t vigilctl_deadline;
static char vigilctl_timeout_text[64];

/*
 * Standard output and error: escaped (ttyesc) when a terminal, unless
 * --raw.  Index 1 and 2.
 */
static struct ttyesc vigilctl_esc[3];
static int vigilctl_escaping[3];

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

/* Where the socket and the state directory are to be found. */
struct vigilctl_where {
	const char *socket;
	const char *config;
	const char *state_dir;
};

/* What to try when no vigild answers at the socket's path. */
#define VIGILCTL_HINT_DOWN                                                     \
	"; is vigild running? (systemctl status vigild; -s SOCKET or -c "      \
	"FILE for another one)"

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
 * Load the configuration: the file given with -c (which must exist), or
 * the default one (built-in defaults when it does not).  On errors, print
 * them and exit EX_CONFIG, or with quiet return NULL.
 */
static struct conf *
vigilctl_conf(const char *config, int quiet)
{
	struct conf_errors errs;
	struct conf *conf;
	char *def = NULL;
	size_t i;

	conf_errors_init(&errs);
	if (config == NULL)
		def = conf_default_path();
	conf = conf_load(config ? config : def, config != NULL, &errs);
	free(def);
	if (conf == NULL && !quiet) {
		for (i = 0; i < errs.n; i++)
			fprintf(stderr, "vigilctl: %s\n", errs.msgs[i]);
		exit(EX_CONFIG);
	}
	conf_errors_clear(&errs);
	return (conf);
}

/*
 * The system's socket (RUNSTATEDIR/vigil/vigild.sock), for a user who runs
 * no vigild of their own, if it is there in a directory root owns; else
 * NULL.
 */
static char *
vigilctl_system_socket(void)
{
	static const char dir[] = RUNSTATEDIR "/vigil";
	struct stat st;
	char *why = NULL, *path = NULL;

	if (safedir_path_check(dir, SAFEDIR_ROOT_OK, &why) != 0) {
		free(why);
		return (NULL);
	}
	xasprintf(&path, "%s/vigild.sock", dir);
	if (stat(path, &st) == -1 || !S_ISSOCK(st.st_mode)) {
		free(path);
		return (NULL);
	}
	return (path);
}

/*
 * Work out the socket path from the options, environment and config; a
 * user without a runtime directory of their own (no vigild of theirs)
 * gets the system's socket, where socket_group may let them in.  With
 * quiet, a config that cannot be read gives NULL instead of an exit.
 */
static char *
vigilctl_socket_path(const struct vigilctl_where *w, int quiet)
{
	struct conf *conf;
	char *path = NULL, *why = NULL;
	const char *env = getenv("VIGIL_SOCKET");

	if (w->socket != NULL)
		return (xstrdup(w->socket));
	if (env != NULL && *env != '\0')
		return (xstrdup(env));
	if ((conf = vigilctl_conf(w->config, quiet)) == NULL)
		return (NULL);
	/* Not a socket in a directory another user made (/tmp/vigil-UID). */
	if (safedir_path_check(conf->runtime_dir, SAFEDIR_ROOT_OK, &why) != 0) {
		if (errno == ENOENT && w->config == NULL && geteuid() != 0 &&
		    (path = vigilctl_system_socket()) != NULL) {
			free(why);
			conf_free(conf);
			return (path);
		}
		if (!quiet && errno == EPERM)
			errx(EX_UNAVAILABLE,
			    "cannot reach vigild in %s: %s: not trusting a "
			    "socket there",
			    conf->runtime_dir, why);
		if (!quiet)
			errx(EX_UNAVAILABLE, "cannot reach vigild in %s: %s%s",
			    conf->runtime_dir, why,
			    errno == ENOENT ? VIGILCTL_HINT_DOWN : "");
		free(why);
		conf_free(conf);
		return (NULL);
	}
	xasprintf(&path, "%s/vigild.sock", conf->runtime_dir);
	conf_free(conf);
	return (path);
}

/* The state directory: --state-dir, else $VIGIL_STATE_DIR, else config. */
static char *
vigilctl_state_dir(const struct vigilctl_where *w)
{
	struct conf *conf;
	char *dir;
	const char *env = getenv("VIGIL_STATE_DIR");

	if (w->state_dir != NULL)
		return (xstrdup(w->state_dir));
	if (env != NULL && *env != '\0')
		return (xstrdup(env));
	conf = vigilctl_conf(w->config, 0);
	dir = xstrdup(conf->state_dir);
	conf_free(conf);
	return (dir);
}

/* Return the time on the monotonic clock, in microseconds. */
static uint64_t
vigilctl_now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		err(1, "clock_gettime");
	return ((uint64_t)ts.tv_sec * DURATION_USEC_PER_SEC +
	    (uint64_t)ts.tv_nsec / 1000);
}

/* vigild has not answered within --timeout: say so, exit 69. */
static void __attribute__((noreturn)) vigilctl_silent(void)
{
	errx(EX_UNAVAILABLE, "vigild did not answer within %s",
	    vigilctl_timeout_text);
}

/*
 * Set *tv to the time left for vigild to answer (zero: no limit, as
 * SO_SNDTIMEO takes it); exit 69 if none is left.  Return the time left
 * in milliseconds, rounded up, for poll(2): -1 for no limit.
 */
static int
vigilctl_left(struct timeval *tv)
{
	uint64_t now, left;

	memset(tv, 0, sizeof(*tv));
	if (vigilctl_deadline == 0)
		return (-1);
	if ((now = vigilctl_now()) >= vigilctl_deadline)
		vigilctl_silent();
	left = vigilctl_deadline - now;
	tv->tv_sec = (time_t)(left / DURATION_USEC_PER_SEC);
	tv->tv_usec = (suseconds_t)(left % DURATION_USEC_PER_SEC);
	left = (left + 999) / 1000;
	return (left > INT_MAX ? INT_MAX : (int)left);
}

/*
 * Connect to the socket at path; with tv (not zero), give up after that
 * long (a vigild that does not accept fills its listen backlog, and then
 * a connect waits).  Return the fd, or -1 with errno (EAGAIN: timed out).
 */
static int
vigilctl_dial(const char *path, const struct timeval *tv)
{
	struct sockaddr_un sun;
	int fd, saved;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return (-1);
	if (tv != NULL &&
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, tv, sizeof(*tv)) == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return (-1);
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return (-1);
	}
	return (fd);
}

/*
 * Connect to vigild within the time left, or exit 69.  The socket keeps
 * that time as its send timeout, for the request.
 */
static int
vigilctl_connect(const char *path)
{
	struct timeval tv;
	int fd;

	(void)vigilctl_left(&tv);
	if ((fd = vigilctl_dial(path, &tv)) != -1)
		return (fd);
	if ((errno == EAGAIN || errno == EINPROGRESS) && vigilctl_deadline != 0)
		vigilctl_silent();
	if (errno == ENAMETOOLONG)
		errx(EX_UNAVAILABLE, "%s: socket path too long", path);
	if (errno == EACCES || errno == EPERM)
		errx(EX_UNAVAILABLE,
		    "cannot reach vigild at %s: permission denied (root and "
		    "the members of vigil.conf's socket_group may connect)",
		    path);
	if (errno == ENOENT || errno == ECONNREFUSED)
		errx(EX_UNAVAILABLE, "cannot reach vigild at %s: %s%s", path,
		    strerror(errno), VIGILCTL_HINT_DOWN);
	err(EX_UNAVAILABLE, "cannot reach vigild at %s", path);
}

static void
vigilctl_write_all(int fd, const void *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		w = write(fd, p, n);
		if (w == -1 && errno == EINTR)
			continue;
		if (w == -1)
			err(EX_UNAVAILABLE, "write");
		p = (const char *)p + w;
		n -= (size_t)w;
	}
}

/*
 * Write what vigild sent for fd (1 or 2), escaped if it is a terminal
 * (vigilctl_escaping); p NULL: the end of the reply.
 */
static void
vigilctl_out(int fd, const void *p, size_t n)
{
	char *text;
	size_t len;

	if (!vigilctl_escaping[fd]) {
		vigilctl_write_all(fd, p, n);
		return;
	}
	if (p == NULL)
		text = ttyesc_flush(&vigilctl_esc[fd], &len);
	else
		text = ttyesc_chunk(&vigilctl_esc[fd], p, n, &len);
	vigilctl_write_all(fd, text, len);
	free(text);
}

/*
 * Send n bytes to vigild.  Return 0, or -1 with errno (EPIPE when vigild
 * closed the connection: it may have answered already).  Never SIGPIPE.
 */
static int
vigilctl_send(int fd, const void *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		w = send(fd, p, n, MSG_NOSIGNAL);
		if (w == -1 && errno == EINTR)
			continue;
		if (w == -1)
			return (-1);
		p = (const char *)p + w;
		n -= (size_t)w;
	}
	return (0);
}

/* Until vigild's first message, wait for it only as long as is left. */
static void
vigilctl_await(int fd)
{
	struct pollfd pfd;
	struct timeval tv;
	int r;

	for (;;) {
		pfd.fd = fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		r = poll(&pfd, 1, vigilctl_left(&tv));
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1)
			err(EX_UNAVAILABLE, "poll");
		if (r > 0)
			return;
	}
}

/*
 * Relay replies until PROTO_EXIT; return its code.  The first message
 * (PROTO_ACK from a vigild that knows it) ends the time limit.
 */
static int
vigilctl_relay(int fd)
{
	struct proto_buf in;
	struct proto_header h;
	const uint8_t *payload;
	int32_t code;
	ssize_t n;
	int r;

	proto_buf_init(&in);
	for (;;) {
		while ((r = proto_next(&in, &h, &payload)) == 1) {
			vigilctl_deadline = 0;
			if (h.type == PROTO_EXIT && h.len == sizeof(code)) {
				vigilctl_out(1, NULL, 0);
				vigilctl_out(2, NULL, 0);
				memcpy(&code, payload, sizeof(code));
				proto_buf_clear(&in);
				return (code);
			}
			if (h.type == PROTO_STDOUT)
				vigilctl_out(1, payload, h.len);
			else if (h.type == PROTO_STDERR)
				vigilctl_out(2, payload, h.len);
			proto_buf_consume(&in, PROTO_HEADER_SIZE + h.len);
		}
		if (r == -1)
			errx(EX_PROTOCOL,
			    "bad reply from vigild (protocol "
			    "version %d expected)",
			    PROTO_VERSION);
		if (vigilctl_deadline != 0)
			vigilctl_await(fd);
		n = read(fd, proto_buf_reserve(&in, 65536), 65536);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			err(EX_UNAVAILABLE, "read");
		if (n == 0)
			errx(EX_UNAVAILABLE, "vigild closed the connection");
		proto_buf_commit(&in, (size_t)n);
	}
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
 * The runtime dir of the vigild that holds STATE_DIR/vigild.lock, from
 * its owner record, or NULL when none does (or it cannot be told).  Only
 * asks: taking the lock, even briefly, could turn away a vigild starting.
 */
static char *
vigilctl_state_holder(const char *state_dir)
{
	char *path, *dir = NULL, *why = NULL;
	pid_t pid;
	int fd;

	xasprintf(&path, "%s/vigild.lock", state_dir);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	free(path);
	if (fd == -1)
		return (NULL);
	if (lock_is_held(fd) != 1 || lock_owner_read(fd, &pid, &dir) == -1)
		dir = NULL;
	close(fd);
	/* As for a runtime dir from a config: never another user's. */
	if (dir != NULL &&
	    safedir_path_check(dir, SAFEDIR_ROOT_OK, &why) != 0) {
		free(why);
		free(dir);
		dir = NULL;
	}
	return (dir);
}

/*
 * Tell a running vigild to look at job's queue now: the one that holds
 * the state dir, else the one vigilctl would talk to.  vigild may be down,
 * or refuse: nothing is reported.  Never waits more than a few seconds.
 */
static void
vigilctl_kick(
    const struct vigilctl_where *w, const char *state_dir, const char *job)
{
	struct timeval tv = { VIGILCTL_KICK_SEC, 0 };
	struct proto_buf out;
	char *path, *args[2], buf[4096], *holder;
	int fd;

	if ((holder = vigilctl_state_holder(state_dir)) != NULL) {
		xasprintf(&path, "%s/vigild.sock", holder);
		free(holder);
	} else if ((path = vigilctl_socket_path(w, 1)) == NULL)
		return;
	fd = vigilctl_dial(path, &tv);
	free(path);
	if (fd == -1)
		return;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	args[0] = (char *)"kick";
	args[1] = (char *)job;
	proto_buf_init(&out);
	proto_command_pack(&out, 0, 2, args);
	/* vigild closes the connection after its reply. */
	if (vigilctl_send(fd, out.data, out.len) == 0) {
		while (read(fd, buf, sizeof(buf)) > 0)
			continue;
	}
	proto_buf_clear(&out);
	close(fd);
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

/*
 * Send the request to vigild at path, relay the reply, and return its
 * exit code.  vigild must answer within timeout usec (0: no limit) of
 * the connect, or vigilctl exits 69.
 */
static int
vigilctl_exchange(
    const char *path, const struct proto_buf *out, uint64_t timeout)
{
	struct timeval tv;
	int fd;

	if (timeout > 0) {
		(void)duration_format(timeout, vigilctl_timeout_text,
		    sizeof(vigilctl_timeout_text));
		vigilctl_deadline = vigilctl_now() + timeout;
	}
	fd = vigilctl_connect(path);
	/* What the connect left of the time bounds the sending, too. */
	(void)vigilctl_left(&tv);
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	/* vigild may refuse the request before it has all of it: read why. */
	if (vigilctl_send(fd, out->data, out->len) == -1) {
		if ((errno == EAGAIN || errno == EWOULDBLOCK) &&
		    vigilctl_deadline != 0)
			vigilctl_silent();
		if (errno != EPIPE && errno != ECONNRESET)
			err(EX_UNAVAILABLE, "write");
	}
	return (vigilctl_relay(fd));
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

	for (ch = 1; ch <= 2; ch++) {
		vigilctl_escaping[ch] = !raw && isatty(ch);
		ttyesc_init(&vigilctl_esc[ch], (flags & PROTO_F_JSON) != 0);
	}

	/* Standard input first: vigild waits only 10 s for a request. */
	proto_buf_init(&out);
	vigilctl_request(&out, flags, argc, argv, enq);
	path = vigilctl_socket_path(&where, 0);
	code = vigilctl_exchange(path, &out, timeout);
	free(path);
	proto_buf_clear(&out);
	return (code);
}
