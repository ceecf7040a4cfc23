/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Readiness notifications from jobs.  notify_parse() is pure; notify_open()
 * and notify_recv() wrap the datagram socket.  Descriptors passed with a
 * datagram (SCM_RIGHTS, e.g. systemd-notify's BARRIER=1) are closed at
 * once: the sender waits until the receiver closes them.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "notify.h"
#include "xmalloc.h"

/* Free what a parsed message owns and make it empty. */
void
notify_msg_clear(struct notify_msg *m)
{
	free(m->status);
	memset(m, 0, sizeof(*m));
}

static int
notify_number(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (*s == '\0')
		return (-1);
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return (-1);
	*out = v;
	return (0);
}

/* Apply one KEY=VALUE line; return 1 if understood, 0 if not. */
static int
notify_assign(struct notify_msg *m, const char *key, const char *val)
{
	long v;

	if (strcmp(key, "READY") == 0)
		return (m->ready = strcmp(val, "1") == 0);
	if (strcmp(key, "STOPPING") == 0)
		return (m->stopping = strcmp(val, "1") == 0);
	if (strcmp(key, "RELOADING") == 0)
		return (m->reloading = strcmp(val, "1") == 0);
	if (strcmp(key, "WATCHDOG") == 0) {
		m->watchdog = strcmp(val, "1") == 0;
		m->watchdog_trigger = strcmp(val, "trigger") == 0;
		return (m->watchdog || m->watchdog_trigger);
	}
	if (strcmp(key, "STATUS") == 0) {
		free(m->status);
		m->status = xstrdup(val);
		return (1);
	}
	if (strcmp(key, "ERRNO") == 0 &&
	    notify_number(val, 0, INT_MAX, &v) == 0) {
		m->has_errno = 1;
		m->errnum = (int)v;
		return (1);
	}
	if (strcmp(key, "MAINPID") == 0 &&
	    notify_number(val, 2, INT_MAX, &v) == 0) {
		m->mainpid = (pid_t)v;
		return (1);
	}
	return (0);
}

static int
notify_key_is_valid(const char *k, size_t len)
{
	size_t i;

	if (len == 0)
		return (0);
	for (i = 0; i < len; i++) {
		if (!((k[i] >= 'A' && k[i] <= 'Z') ||
		        (k[i] >= '0' && k[i] <= '9') || k[i] == '_'))
			return (0);
	}
	return (1);
}

/*
 * Parse a datagram of newline-separated KEY=VALUE assignments into *m
 * (which the caller clears with notify_msg_clear).  Unknown keys are
 * skipped, as systemd does.  Return 0, or -1 when the datagram is garbage:
 * empty, holding a NUL byte, or with a line that is not an assignment.
 */
int
notify_parse(const char *buf, size_t len, struct notify_msg *m)
{
	const char *line, *end, *eq;
	char key[64], *val;
	size_t llen;

	memset(m, 0, sizeof(*m));
	if (len == 0 || memchr(buf, '\0', len) != NULL)
		return (-1);
	for (line = buf; line < buf + len; line = end + 1) {
		end = memchr(line, '\n', (size_t)(buf + len - line));
		if (end == NULL)
			end = buf + len;
		llen = (size_t)(end - line);
		if (llen == 0)
			continue;
		eq = memchr(line, '=', llen);
		if (eq == NULL || (size_t)(eq - line) >= sizeof(key) ||
		    !notify_key_is_valid(line, (size_t)(eq - line))) {
			notify_msg_clear(m);
			return (-1);
		}
		memcpy(key, line, (size_t)(eq - line));
		key[eq - line] = '\0';
		val = xstrndup(eq + 1, (size_t)(end - eq - 1));
		m->nknown += notify_assign(m, key, val);
		free(val);
	}
	return (0);
}

/*
 * Bind the readiness socket at path (an existing file there is removed):
 * datagram, close-on-exec, non-blocking, with SO_PASSCRED so every message
 * carries its sender's pid.  Mode 0666: jobs run as any user, and the
 * sender check, not the file mode, decides what counts.  Return the fd, or
 * -1 with *cause set.
 */
int
notify_open(const char *path, char **cause)
{
	struct sockaddr_un sun;
	int fd, one = 1;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		xasprintf(cause, "%s: path too long", path);
		return (-1);
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd == -1) {
		xasprintf(cause, "socket: %s", strerror(errno));
		return (-1);
	}
	(void)unlink(path);
	if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) == -1 ||
	    bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    chmod(path, 0666) == -1) {
		xasprintf(cause, "%s: %s", path, strerror(errno));
		close(fd);
		return (-1);
	}
	return (fd);
}

/* Close every descriptor passed in a control message. */
static void
notify_close_fds(struct msghdr *mh)
{
	struct cmsghdr *c;
	size_t i, n;
	int fd;

	for (c = CMSG_FIRSTHDR(mh); c != NULL; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			(void)close(fd);
		}
	}
}

/*
 * Receive one datagram into buf (NUL-terminated; len includes room for the
 * NUL).  Set *pid and *uid from the sender's credentials (0 and -1 when
 * missing).  Passed descriptors are closed.  Return the payload length
 * (a longer datagram is cut to len - 1), or -1 with errno (EAGAIN: none).
 */
ssize_t
notify_recv(int fd, char *buf, size_t len, pid_t *pid, uid_t *uid)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(struct ucred)) +
		    CMSG_SPACE(sizeof(int) * 253)];
	} control;
	struct msghdr mh;
	struct iovec iov;
	struct cmsghdr *c;
	struct ucred cred;
	ssize_t n;

	*pid = 0;
	*uid = (uid_t)-1;
	iov.iov_base = buf;
	iov.iov_len = len - 1;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = &control;
	mh.msg_controllen = sizeof(control);
	n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC | MSG_TRUNC);
	if (n == -1)
		return (-1);
	notify_close_fds(&mh);
	for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SCM_CREDENTIALS &&
		    c->cmsg_len == CMSG_LEN(sizeof(cred))) {
			memcpy(&cred, CMSG_DATA(c), sizeof(cred));
			*pid = cred.pid;
			*uid = cred.uid;
		}
	}
	if ((size_t)n > len - 1)
		n = (ssize_t)(len - 1);
	buf[n] = '\0';
	return (n);
}
