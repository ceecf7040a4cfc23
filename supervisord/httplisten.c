/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * What the HTTP server needs before it starts (http.c): the
 * token of http_token_file, read and checked (a regular file others may
 * not read, one line without blanks), and the listening socket of
 * http_listen: TCP, or a unix socket made as the control socket is (mode
 * and group of vigil.conf), in place of a stale one nobody listens on.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "httplisten.h"
#include "listenaddr.h"
#include "log.h"
#include "vigild.h"
#include "xmalloc.h"

#define HTTP_TOKEN_MAX 4096

/*
 * Read the token of http_token_file into *token (its length in *len): not
 * empty, others may not read it.  0, or -1 with cause.
 */
int
http_token_read(const char *path, char **token, size_t *len, char **cause)
{
	struct stat st;
	char buf[HTTP_TOKEN_MAX + 2];
	ssize_t n;
	size_t l;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1 ||
	    fstat(fd, &st) == -1) {
		xasprintf(
		    cause, "http_token_file %s: %s", path, strerror(errno));
		if (fd != -1)
			close(fd);
		return (-1);
	}
	if (!S_ISREG(st.st_mode) || (st.st_mode & 0007) != 0) {
		xasprintf(cause, "http_token_file %s: %s", path,
		    !S_ISREG(st.st_mode) ? "not a regular file" :
		                           "other users may read it (chmod "
		                           "o-rwx)");
		close(fd);
		return (-1);
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n == -1) {
		xasprintf(
		    cause, "http_token_file %s: %s", path, strerror(errno));
		return (-1);
	}
	l = (size_t)n;
	while (l > 0 && (buf[l - 1] == '\n' || buf[l - 1] == '\r'))
		l--;
	buf[l] = '\0';
	if (l == 0 || l > HTTP_TOKEN_MAX || strlen(buf) != l ||
	    strpbrk(buf, " \t\r\n") != NULL) {
		xasprintf(cause,
		    "http_token_file %s: the token must be one line of 1 to "
		    "%d characters without blanks",
		    path, HTTP_TOKEN_MAX);
		explicit_bzero(buf, sizeof(buf));
		return (-1);
	}
	if (l < 16)
		log_warnx("http_token_file %s: a token of %zu characters is "
		          "easy to guess; use 32 or more",
		    path, l);
	*token = xstrdup(buf);
	*len = l;
	explicit_bzero(buf, sizeof(buf));
	return (0);
}

/*
 * Clear the path of a unix listener: nothing there, or a stale socket
 * (nobody listens on it), which is removed.  Anything else is left alone
 * and is an error: a file that is not a socket, a socket that some
 * process listens on (another vigild's, say).  Return 0, or -1 with
 * cause.
 */
static int
http_unix_clear(const struct sockaddr_un *sun, char **cause)
{
	const char *path = sun->sun_path, *why = NULL;
	struct stat st;
	int fd, r, error;

	if (lstat(path, &st) == -1) {
		if (errno == ENOENT)
			return (0);
		why = strerror(errno);
	} else if (!S_ISSOCK(st.st_mode))
		why = "a file that is not a socket is there";
	else if ((fd = socket(AF_UNIX,
	              SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) != -1) {
		r = connect(fd, (const struct sockaddr *)sun, sizeof(*sun));
		error = errno;
		close(fd);
		if (r == 0 || error == EAGAIN || error == EINPROGRESS)
			why = "a process listens on it";
		else if (error != ECONNREFUSED)
			why = strerror(error);
		else if (unlink(path) == -1 && errno != ENOENT)
			why = strerror(errno);
	} else
		why = strerror(errno);
	if (why == NULL)
		return (0);
	xasprintf(cause,
	    "http_listen %s: %s (vigild replaces only a stale "
	    "socket, one nobody listens on)",
	    vigild.conf->http_listen, why);
	return (-1);
}

/*
 * The listening socket of a, with room for backlog connections; a unix
 * one as the control socket's (its path in *unix_path).  The socket, or
 * -1 with cause.
 */
int
http_listen_open(
    const struct listen_addr *a, int backlog, char **unix_path, char **cause)
{
	const struct sockaddr_un *sun = (const struct sockaddr_un *)&a->ss;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	mode_t old;
	char name[160];
	int fd, one = 1, r;

	fd = socket(
	    a->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		goto fail;
	if (a->ss.ss_family == AF_UNIX) {
		if (http_unix_clear(sun, cause) == -1) {
			close(fd);
			return (-1);
		}
		old = umask(0777 & ~(mode_t)vigild.conf->socket_mode);
		r = bind(fd, (const struct sockaddr *)&a->ss, a->len);
		umask(old);
		if (r == -1 ||
		    (vigild.conf->has_socket_gid &&
		        chown(sun->sun_path, (uid_t)-1,
		            vigild.conf->socket_gid) == -1) ||
		    chmod(sun->sun_path, (mode_t)vigild.conf->socket_mode) ==
		        -1)
			goto fail;
		*unix_path = xstrdup(sun->sun_path);
	} else {
		(void)setsockopt(
		    fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (a->ss.ss_family == AF_INET6)
			(void)setsockopt(
			    fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		if (bind(fd, (const struct sockaddr *)&a->ss, a->len) == -1)
			goto fail;
	}
	/* A backlog as deep as the connections served: a burst of scrapes
	 * waits in the kernel's queue rather than in SYN retries. */
	if (listen(fd, backlog) == -1 ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) == -1)
		goto fail;
	log_info("http: listening on %s",
	    listen_addr_format(
	        (struct sockaddr *)&ss, len, name, sizeof(name)));
	return (fd);
fail:
	xasprintf(cause, "http_listen %s: %s", vigild.conf->http_listen,
	    strerror(errno));
	if (fd != -1)
		close(fd);
	return (-1);
}
