/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Tests of spawn_start()'s announcement: the child sends it, with its
 * own pid and the descriptor to pass, before it execs (the fence keeper
 * must know a run before the run can make a process of its own); a
 * watcher that cannot take it fails the start; a request without one
 * sends nothing.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "spawn.h"
#include "test.h"

struct msg {
	uint32_t op;
	int32_t pid;
	uint64_t key;
};

static char dir[] = "/tmp/vigil-test-spawn.XXXXXX";

/* A job of one command, loaded from a file as vigild loads it. */
static struct job_spec *
load_job(const char *command)
{
	struct conf_errors errs;
	struct job_spec *spec;
	char path[sizeof(dir) + 16];
	FILE *f;

	snprintf(path, sizeof(path), "%s/t.conf", dir);
	if ((f = fopen(path, "w")) == NULL)
		return (NULL);
	fprintf(f, "command = %s\n", command);
	fclose(f);
	conf_errors_init(&errs);
	spec = job_spec_load(path, "t", &errs);
	if (spec == NULL)
		for (size_t i = 0; i < errs.n; i++)
			fprintf(stderr, "  %s\n", errs.msgs[i]);
	conf_errors_clear(&errs);
	return (spec);
}

/* Start spec with announcement a; wait for its exec outcome. */
static int
start(const struct job_spec *spec, const struct spawn_announce *a, pid_t *pid,
    char **failed)
{
	struct spawn_request req;
	struct spawn_result res;
	char *cause = NULL;
	int r;

	memset(&req, 0, sizeof(req));
	req.spec = spec;
	req.run_id = "0123456789abcdef";
	req.lock_fd = -1;
	req.stdout_fd = -1;
	req.stderr_fd = -1;
	if (a != NULL)
		req.announce = *a;
	if (spawn_start(&req, &res, &cause) == -1) {
		fprintf(stderr, "  spawn_start: %s\n", cause);
		free(cause);
		return (-1);
	}
	*pid = res.pid;
	*failed = res.cause;
	if (res.done)
		return (0);
	/* Forked, not vforked (valgrind): the report pipe tells. */
	do
		r = spawn_report_read(res.report_fd, failed);
	while (r == -1 && (errno == EINTR || errno == EAGAIN));
	close(res.report_fd);
	return (r == -1 ? -1 : 0);
}

static int
exit_status(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return (-1);
	return (WEXITSTATUS(st));
}

/* What came on sock, with a descriptor if one came (else -1). */
static ssize_t
receive(int sock, struct msg *m, int *fd)
{
	struct msghdr mh;
	struct iovec iov;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct cmsghdr *cm;
	ssize_t n;

	memset(&mh, 0, sizeof(mh));
	iov.iov_base = m;
	iov.iov_len = sizeof(*m);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = u.buf;
	mh.msg_controllen = sizeof(u.buf);
	*fd = -1;
	n = recvmsg(sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	for (cm = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; cm != NULL;
	     cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
			memcpy(fd, CMSG_DATA(cm), sizeof(*fd));
	return (n);
}

static int
same_file(int a, int b)
{
	struct stat sa, sb;

	return (fstat(a, &sa) == 0 && fstat(b, &sb) == 0 &&
	    sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino);
}

/* An announcement of m on sock, passing fd (-1: none). */
static void
announce_to(struct spawn_announce *a, int sock, struct msg *m, int fd)
{
	a->fd = sock;
	a->buf = m;
	a->len = sizeof(*m);
	a->pid_off = offsetof(struct msg, pid);
	a->pass_fd = fd;
}

/*
 * The exec is done (or known done) when spawn_start returns or its
 * report pipe ends; the command sends nothing itself: whatever is on
 * the socket then, the child sent before it exec'd.
 */
TEST(announced_before_exec)
{
	struct job_spec *spec = load_job("{\"/bin/sh\", \"-c\", \"exit 3\"}");
	struct spawn_announce a;
	struct msg m, got;
	int sv[2], pfd[2], fd;
	char *failed = NULL;
	pid_t pid;

	ASSERT_OK(spec != NULL);
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	ASSERT_EQ(pipe2(pfd, O_CLOEXEC), 0);
	memset(&m, 0, sizeof(m));
	m.op = 1;
	m.key = 42;
	announce_to(&a, sv[0], &m, pfd[0]);
	ASSERT_EQ(start(spec, &a, &pid, &failed), 0);
	ASSERT_OK(failed == NULL);
	ASSERT_EQ(receive(sv[1], &got, &fd), (ssize_t)sizeof(got));
	ASSERT_EQ(got.op, 1);
	ASSERT_EQ(got.key, 42);
	ASSERT_EQ(got.pid, pid);
	ASSERT_OK(fd != -1);
	ASSERT_OK(same_file(fd, pfd[0]));
	ASSERT_EQ(exit_status(pid), 3); /* and the command ran */
	close(fd);
	close(pfd[0]);
	close(pfd[1]);
	close(sv[0]);
	close(sv[1]);
	job_spec_free(spec);
	return (0);
}

/* No watcher to take it: the start fails, nothing of the job runs. */
TEST(unannounced_fails)
{
	struct job_spec *spec;
	struct spawn_announce a;
	struct msg m;
	int sv[2];
	char *failed = NULL, mark[sizeof(dir) + 16], cmd[sizeof(mark) + 64];
	pid_t pid;

	snprintf(mark, sizeof(mark), "%s/ran", dir);
	snprintf(cmd, sizeof(cmd), "{\"/bin/sh\", \"-c\", \"touch %s\"}", mark);
	spec = load_job(cmd);
	ASSERT_OK(spec != NULL);
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	close(sv[1]);
	memset(&m, 0, sizeof(m));
	announce_to(&a, sv[0], &m, -1);
	ASSERT_EQ(start(spec, &a, &pid, &failed), 0);
	ASSERT_OK(failed != NULL);
	ASSERT_OK(strncmp(failed, "announce: ", 10) == 0);
	ASSERT_EQ(exit_status(pid), 127);
	ASSERT_EQ(access(mark, F_OK), -1);
	free(failed);
	close(sv[0]);
	job_spec_free(spec);
	return (0);
}

/* A request without one (fd 0) sends nothing. */
TEST(no_announcement)
{
	struct job_spec *spec = load_job("{\"/bin/true\"}");
	struct msg got;
	int sv[2], fd;
	char *failed = NULL;
	pid_t pid;

	ASSERT_OK(spec != NULL);
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	ASSERT_EQ(start(spec, NULL, &pid, &failed), 0);
	ASSERT_OK(failed == NULL);
	ASSERT_EQ(exit_status(pid), 0);
	ASSERT_EQ(receive(sv[1], &got, &fd), -1);
	ASSERT_EQ(errno, EAGAIN);
	close(sv[0]);
	close(sv[1]);
	job_spec_free(spec);
	return (0);
}

int
main(void)
{
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return (1);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	spawn_init();
	RUN(announced_before_exec);
	RUN(unannounced_fails);
	RUN(no_announcement);
	test_rmtree(dir);
	TEST_MAIN_END();
}
