/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * vigilctl's side of the control socket: where the socket and the state
 * directory are (options, environment, config); the exchange with vigild,
 * the request sent and the replies copied to stdout and stderr (escaped on
 * a terminal) until the exit code; and the kick after enqueue --direct.
 * vigilctl.c reads the command line and calls these; nothing here calls
 * back.
 *
 * It waits for vigild only so long (--timeout, 30 s by default): until
 * vigild acknowledges the request (PROTO_ACK, asked for with PROTO_F_ACK),
 * which it does as soon as it has read it.  What the command then takes,
 * a wait or a slow stop, is not limited.
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
#include "lock.h"
#include "proto.h"
#include "safedir.h"
#include "ttyesc.h"
#include "vigilctl.h"
#include "xmalloc.h"

/* How long the kick after enqueue --direct may take. */
#define VIGILCTL_KICK_SEC 2

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

/* What to try when no vigild answers at the socket's path. */
#define VIGILCTL_HINT_DOWN                                                     \
	"; is vigild running? (systemctl status vigild; -s SOCKET or -c "      \
	"FILE for another one)"

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
char *
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
char *
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
 * Send the request to vigild at path, relay the reply, and return its
 * exit code.  vigild must answer within timeout usec (0: no limit) of
 * the connect, or vigilctl exits 69.
 */
int
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

/*
 * Standard output and error for the replies: escaped when a terminal,
 * unless raw; json for the escapes a JSON string takes.
 */
void
vigilctl_escape_init(int raw, int json)
{
	int fd;

	for (fd = 1; fd <= 2; fd++) {
		vigilctl_escaping[fd] = !raw && isatty(fd);
		ttyesc_init(&vigilctl_esc[fd], json);
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
void
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
