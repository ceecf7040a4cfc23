/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Tests of the readiness protocol: parsing of notify datagrams, and a real
 * socket pair that passes credentials and descriptors.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "notify.h"
#include "test.h"

static int
parse(const char *s, struct notify_msg *m)
{
	return (notify_parse(s, strlen(s), m));
}

TEST(fields)
{
	struct notify_msg m;

	ASSERT_EQ(parse("READY=1\nSTATUS=Ready to accept\nMAINPID=4242\n"
	                "ERRNO=5\nWATCHDOG=1",
	              &m),
	    0);
	ASSERT_EQ(m.ready, 1);
	ASSERT_STREQ(m.status, "Ready to accept");
	ASSERT_EQ(m.mainpid, 4242);
	ASSERT_EQ(m.has_errno, 1);
	ASSERT_EQ(m.errnum, 5);
	ASSERT_EQ(m.watchdog, 1);
	ASSERT_EQ(m.nknown, 5);
	notify_msg_clear(&m);
	ASSERT_EQ(parse("WATCHDOG=trigger", &m), 0);
	ASSERT_EQ(m.watchdog_trigger, 1);
	ASSERT_EQ(m.watchdog, 0);
	notify_msg_clear(&m);
	ASSERT_EQ(parse("STOPPING=1", &m), 0);
	ASSERT_EQ(m.stopping, 1);
	ASSERT_EQ(m.ready, 0);
	notify_msg_clear(&m);
	return (0);
}

TEST(unknown_and_bad_values)
{
	struct notify_msg m;

	/* Unknown keys are skipped; bad values of known keys are too. */
	ASSERT_EQ(parse("BARRIER=1\nX_CUSTOM=2\nMAINPID=abc\nREADY=0", &m), 0);
	ASSERT_EQ(m.nknown, 0);
	ASSERT_EQ(m.ready, 0);
	ASSERT_EQ(m.mainpid, 0);
	notify_msg_clear(&m);
	ASSERT_EQ(parse("MAINPID=1", &m), 0); /* pid 1 is never a job's */
	ASSERT_EQ(m.mainpid, 0);
	notify_msg_clear(&m);
	return (0);
}

TEST(garbage)
{
	struct notify_msg m;

	ASSERT_EQ(parse("", &m), -1);
	ASSERT_EQ(parse("hello world", &m), -1);
	ASSERT_EQ(parse("READY=1\nnot an assignment", &m), -1);
	ASSERT_EQ(parse("=1", &m), -1);
	ASSERT_EQ(parse("ready=1", &m), -1);
	ASSERT_EQ(notify_parse("READY=1\0X", 9, &m), -1);
	ASSERT_OK(m.status == NULL);
	return (0);
}

TEST(socket_credentials_and_fds)
{
	char dir[] = "/tmp/test-notify.XXXXXX", path[128], buf[256];
	struct sockaddr_un sun;
	struct msghdr mh;
	struct iovec iov;
	struct cmsghdr *c;
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} control;
	char *cause = NULL;
	int fd, s, p[2];
	pid_t pid;
	uid_t uid;
	ssize_t n;
	char x;

	ASSERT_OK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/notify.sock", dir);
	ASSERT_OK((fd = notify_open(path, &cause)) >= 0);
	ASSERT_EQ(notify_recv(fd, buf, sizeof(buf), &pid, &uid), -1);
	ASSERT_EQ(errno, EAGAIN);

	/* Send READY=1 with one descriptor, as systemd-notify's BARRIER=1. */
	ASSERT_OK((s = socket(AF_UNIX, SOCK_DGRAM, 0)) >= 0);
	ASSERT_EQ(pipe(p), 0);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strcpy(sun.sun_path, path);
	iov.iov_base = "READY=1";
	iov.iov_len = 7;
	memset(&mh, 0, sizeof(mh));
	memset(&control, 0, sizeof(control));
	mh.msg_name = &sun;
	mh.msg_namelen = sizeof(sun);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = &control;
	mh.msg_controllen = sizeof(control);
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &p[1], sizeof(int));
	ASSERT_EQ(sendmsg(s, &mh, 0), 7);
	close(p[1]);

	n = notify_recv(fd, buf, sizeof(buf), &pid, &uid);
	ASSERT_EQ(n, 7);
	ASSERT_STREQ(buf, "READY=1");
	ASSERT_EQ(pid, getpid());
	ASSERT_EQ(uid, getuid());
	/* The passed descriptor was closed: the pipe's reader sees EOF. */
	ASSERT_EQ(read(p[0], &x, 1), 0);
	close(p[0]);

	/* A datagram longer than the buffer is cut, not overflowed. */
	memset(buf, 'A', sizeof(buf));
	ASSERT_EQ(sendto(s, buf, sizeof(buf), 0, (struct sockaddr *)&sun,
	              sizeof(sun)),
	    (ssize_t)sizeof(buf));
	ASSERT_EQ(notify_recv(fd, buf, 16, &pid, &uid), 15);
	ASSERT_EQ(strlen(buf), 15);
	close(s);
	close(fd);
	unlink(path);
	rmdir(dir);
	return (0);
}

int
main(void)
{
	RUN(fields);
	RUN(unknown_and_bad_values);
	RUN(garbage);
	RUN(socket_credentials_and_fds);
	TEST_MAIN_END();
}
