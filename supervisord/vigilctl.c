/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * vigilctl: a thin client.  It finds the control socket, sends its
 * arguments as one command, copies the replies to stdout and stderr, and
 * exits with the code vigild sends.  Every command lives in vigild's
 * command table, so the two programs cannot drift apart.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "conf.h"
#include "proto.h"
#include "xmalloc.h"

static void __attribute__((noreturn)) vigilctl_usage(int code)
{
	FILE *f = code == 0 ? stdout : stderr;

	fprintf(f,
	    "usage: vigilctl [-s SOCKET] [-c FILE] [--json] COMMAND [ARGS]\n"
	    "\n"
	    "Control vigild through its socket.\n"
	    "\n"
	    "  -s, --socket PATH  control socket (else $VIGIL_SOCKET, else\n"
	    "                     RUNTIME_DIR/vigild.sock of the config)\n"
	    "  -c, --config FILE  vigil.conf to find the socket from\n"
	    "      --json         machine-readable output\n"
	    "      --version      print the version and exit\n"
	    "  -h, --help         print this help and exit\n"
	    "\n"
	    "Commands (options may come before or after job names):\n"
	    "  status [JOB...]              state of jobs; exit 3 if a named "
	    "job is\n"
	    "                               not RUNNING\n"
	    "  start|stop|restart [--no-wait] JOB...|all\n"
	    "                               act, then wait for the outcome\n"
	    "  signal SIG JOB...|all        send a signal\n"
	    "  wait [--state STATE] [--timeout DUR] JOB...\n"
	    "                               wait until jobs are in STATE "
	    "(RUNNING)\n"
	    "  reload [--dry-run]           re-read jobs.d, apply the "
	    "difference\n"
	    "  pid [JOB]                    pid of vigild or of a job\n"
	    "  shutdown                     stop all jobs, then vigild exits\n"
	    "  ping, version, list-commands\n"
	    "\n"
	    "A job is NAME, NAME@INDEX for one instance, or all.\n"
	    "Exit: 0 ok, 1 failed, 2 usage, 3 not running, 4 no such job,\n"
	    "69 vigild unreachable, 76 protocol mismatch, 78 bad config.\n");
	exit(code);
}

/* Work out the socket path from the options, environment and config. */
static char *
vigilctl_socket_path(const char *opt_socket, const char *config)
{
	struct conf_errors errs;
	struct conf *conf;
	char *path = NULL, *def = NULL;
	const char *env = getenv("VIGIL_SOCKET");
	size_t i;

	if (opt_socket != NULL)
		return (xstrdup(opt_socket));
	if (env != NULL && *env != '\0')
		return (xstrdup(env));
	conf_errors_init(&errs);
	if (config == NULL)
		def = conf_default_path();
	conf = conf_load(config ? config : def, config != NULL, &errs);
	free(def);
	if (conf == NULL) {
		for (i = 0; i < errs.n; i++)
			fprintf(stderr, "vigilctl: %s\n", errs.msgs[i]);
		exit(EX_CONFIG);
	}
	conf_errors_clear(&errs);
	xasprintf(&path, "%s/vigild.sock", conf->runtime_dir);
	conf_free(conf);
	return (path);
}

static int
vigilctl_connect(const char *path)
{
	struct sockaddr_un sun;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path))
		errx(EX_UNAVAILABLE, "%s: socket path too long", path);
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		err(EX_UNAVAILABLE, "socket");
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		if (errno == EACCES || errno == EPERM)
			errx(EX_UNAVAILABLE,
			    "cannot reach vigild at %s: "
			    "permission denied",
			    path);
		err(EX_UNAVAILABLE, "cannot reach vigild at %s", path);
	}
	return (fd);
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

/* Relay replies until PROTO_EXIT; return its code. */
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
			if (h.type == PROTO_EXIT && h.len == sizeof(code)) {
				memcpy(&code, payload, sizeof(code));
				proto_buf_clear(&in);
				return (code);
			}
			if (h.type == PROTO_STDOUT)
				vigilctl_write_all(1, payload, h.len);
			else if (h.type == PROTO_STDERR)
				vigilctl_write_all(2, payload, h.len);
			proto_buf_consume(&in, PROTO_HEADER_SIZE + h.len);
		}
		if (r == -1)
			errx(EX_PROTOCOL,
			    "bad reply from vigild (protocol "
			    "version %d expected)",
			    PROTO_VERSION);
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

int
main(int argc, char **argv)
{
	enum {
		OPT_JSON = 256,
		OPT_VERSION
	};
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "config", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *opt_socket = NULL, *config = NULL;
	struct proto_buf out;
	uint32_t flags = 0;
	char *path;
	int ch, fd;

	while ((ch = getopt_long(argc, argv, "+s:c:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 's':
			opt_socket = optarg;
			break;
		case 'c':
			config = optarg;
			break;
		case OPT_JSON:
			flags |= PROTO_F_JSON;
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

	path = vigilctl_socket_path(opt_socket, config);
	fd = vigilctl_connect(path);
	free(path);
	proto_buf_init(&out);
	proto_command_pack(&out, flags, argc, argv);
	vigilctl_write_all(fd, out.data, out.len);
	proto_buf_clear(&out);
	return (vigilctl_relay(fd));
}
