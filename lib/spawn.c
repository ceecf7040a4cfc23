/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * vfork+exec of one job instance.  All allocation (environment, user
 * lookup, env_file) happens in the parent before the child is made, so the
 * child only makes system calls; it shares vigild's memory and writes none
 * of it that vigild reads afterwards, except the outcome in its plan (and
 * its pid into the announcement it sends, which vigild does not read).
 *
 * The outcome: the child marks the plan when it starts, and writes a
 * failure before exec there as one line of text.  When vfork returns, the
 * child has exec'd or exited, so a marked plan tells at once.  Where vfork
 * is a fork (valgrind runs it so), the mark never shows: then the same
 * line comes on a close-on-exec pipe, whose EOF means exec succeeded.
 *
 * The descriptors: a vfork'd child gets a copy of vigild's table, three
 * descriptors a job (lock, log, output pipe), and closes all but its own;
 * with 1000 jobs that copy and those closes were most of a start.  Once a
 * first vfork has shown shared memory, children are made by clone(2)
 * sharing the table too, and unshare it with close_range(2), which copies
 * only the descriptors below the range: the parent puts what the child
 * needs into four low "slots" first (see spawn_slots_fill()).
 *
 * PR_SET_PDEATHSIG is tied to the thread that forked, and is cleared by
 * exec of a set-uid or set-gid program: vigild stays single-threaded, and a
 * set-uid job does not die with vigild (the lock record catches it).
 */

#include "config.h"

#include <sys/types.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(SYS_clone3) && __has_include(<linux/sched.h>)
#include <linux/sched.h> /* struct clone_args, CLONE_INTO_CGROUP */
#endif

#include "conf.h"
#include "proc.h"
#include "sendfd.h"
#include "spawn-env.h"
#include "spawn.h"
#include "xmalloc.h"

#if defined(__SANITIZE_ADDRESS__)
#define SPAWN_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SPAWN_ASAN 1
#endif
#endif
#ifndef SPAWN_ASAN
#define SPAWN_ASAN 0
#endif

/*
 * How children are made.  PROBE: by vfork, to see whether it shares
 * memory; VFORK: by vfork only (it does not: valgrind runs vfork as fork;
 * or no close_range; or AddressSanitizer, which takes the child's stack of
 * our own for an overflow); CLONE: clone(2) sharing memory and the
 * descriptor table.
 */
static enum {
	SPAWN_PROBE,
	SPAWN_VFORK,
	SPAWN_CLONE
} spawn_mode;

/* CLONE: what becomes the child's 0, 1, 2 and 3; /dev/null when idle. */
#define SPAWN_NSLOTS 4
static int spawn_slot[SPAWN_NSLOTS] = { -1, -1, -1, -1 };
static int spawn_slot_top; /* the highest of them */
static int spawn_null = -1;
#define SPAWN_STACK_SIZE (256 * 1024)
static char *spawn_stack; /* the clone child's; one child at a time */

/* vigild's RLIMIT_NOFILE as it started, given back to every child. */
static struct rlimit spawn_nofile;
static int spawn_nofile_raised;

/* What the child needs, prepared by the parent. */
struct spawn_plan {
	const struct spawn_request *req;
	struct spawn_user user;
	char **envp;
	const char *path; /* PATH used to find argv[0] */
	pid_t parent;
	int report;       /* -1: none (CLONE) */
	int shared_files; /* CLONE: the table is vigild's until unshared */
	volatile sig_atomic_t ran;    /* set by the child: memory is shared */
	volatile sig_atomic_t failed; /* set by the child: fail holds why */
	int born_in_cgroup; /* clone3 put the child in req->cgroup_fd */
	char fail[PATH_MAX + 128];
};

/*
 * In the child: tell the parent "what: strerror(err)", in the plan and on
 * the report pipe, and exit.
 */
static void __attribute__((noreturn))
spawn_child_fail(struct spawn_plan *p, const char *what, int err)
{
	int n;

	n = snprintf(p->fail, sizeof(p->fail), "%s: %s", what, strerror(err));
	if (n > 0)
		(void)!write(p->report, p->fail,
		    (size_t)n < sizeof(p->fail) ? (size_t)n :
		                                  sizeof(p->fail) - 1);
	p->failed = 1;
	_exit(127);
}

/* In the child: exec argv[0], searching PATH when it has no slash. */
static void __attribute__((noreturn)) spawn_child_exec(struct spawn_plan *p)
{
	char *const *argv =
	    p->req->argv != NULL ? p->req->argv : p->req->spec->argv;
	char full[PATH_MAX], what[PATH_MAX + 8];
	const char *dirs = p->path;
	int err = ENOENT;

	if (strchr(argv[0], '/') != NULL) {
		execve(argv[0], argv, p->envp);
		snprintf(what, sizeof(what), "exec %s", argv[0]);
		spawn_child_fail(p, what, errno);
	}
	while (spawn_path_next(&dirs, argv[0], full, sizeof(full)) == 0) {
		execve(full, argv, p->envp);
		if (errno != ENOENT && errno != ENOTDIR)
			err = errno;
	}
	snprintf(what, sizeof(what), "exec %s", argv[0]);
	spawn_child_fail(p, what, err);
}

/* In the child: close fd and every one above it but keep (-1: none). */
static void
spawn_child_close_from(int fd, int keep)
{
#ifdef HAVE_CLOSE_RANGE
	if (keep < fd) {
		if (close_range((unsigned int)fd, ~0U, 0) == 0)
			return;
	} else if ((fd == keep ||
	               close_range(
	                   (unsigned int)fd, (unsigned int)keep - 1, 0) == 0) &&
	    close_range((unsigned int)keep + 1, ~0U, 0) == 0)
		return;
#endif
	for (; fd < 65536; fd++) {
		if (fd != keep)
			(void)close(fd);
	}
}

#ifdef HAVE_CLOSE_RANGE
/*
 * In the child, CLONE: a table of its own holding only what is below the
 * slots' end (vigild's stdio and a few of its own), then the slots onto
 * 0..3 and the rest closed.  Nothing before this touches the table.
 */
static void
spawn_child_fds_shared(struct spawn_plan *p)
{
	int i, n = p->req->lock_fd != -1 ? 4 : 3;

	if (close_range((unsigned int)spawn_slot_top + 1, ~0U,
	        CLOSE_RANGE_UNSHARE) == -1 &&
	    unshare(CLONE_FILES) == -1)
		spawn_child_fail(p, "unshare", errno);
	for (i = 0; i < n; i++) {
		if (dup2(spawn_slot[i], i) == -1)
			spawn_child_fail(p, "dup2", errno);
	}
	spawn_child_close_from(n, -1);
}
#endif

/* In the child: stdio and the lock on fd 3; close everything else. */
static void
spawn_child_fds(struct spawn_plan *p)
{
	const struct spawn_request *r = p->req;
	int fd;

#ifdef HAVE_CLOSE_RANGE
	if (p->shared_files) {
		spawn_child_fds_shared(p);
		return;
	}
#endif

	/* Keep the report pipe clear of 0..3 while fds move. */
	if ((fd = fcntl(p->report, F_DUPFD_CLOEXEC, 4)) == -1)
		_exit(127);
	p->report = fd;
	if (r->stdin_fd > 0) {
		if (dup2(r->stdin_fd, 0) == -1)
			spawn_child_fail(p, "dup2 stdin", errno);
	} else if ((fd = open("/dev/null", O_RDONLY)) == -1 ||
	    (fd != 0 && dup2(fd, 0) == -1))
		spawn_child_fail(p, "open /dev/null", errno);
	if (r->stdout_fd != -1 && dup2(r->stdout_fd, 1) == -1)
		spawn_child_fail(p, "dup2 stdout", errno);
	if (r->stderr_fd != -1 && dup2(r->stderr_fd, 2) == -1)
		spawn_child_fail(p, "dup2 stderr", errno);
	if (r->lock_fd != -1) {
		if (r->lock_fd != 3 && dup2(r->lock_fd, 3) == -1)
			spawn_child_fail(p, "dup2 lock", errno);
		if (fcntl(3, F_SETFD, 0) == -1)
			spawn_child_fail(p, "fcntl lock", errno);
		fd = 4;
	} else
		fd = 3;
	spawn_child_close_from(fd, p->report);
}

/* In the child: limits, priority, umask, credentials, directory. */
static void
spawn_child_attrs(struct spawn_plan *p)
{
	const struct job_spec *s = p->req->spec;
	char what[PATH_MAX + 16];
	int i;

	if (spawn_nofile_raised &&
	    setrlimit(RLIMIT_NOFILE, &spawn_nofile) == -1)
		spawn_child_fail(p, "setrlimit", errno);
	for (i = 0; i < CONF_LIMIT_COUNT; i++) {
		if (s->limits[i].set &&
		    setrlimit(s->limits[i].resource, &s->limits[i].rl) == -1)
			spawn_child_fail(p, "setrlimit", errno);
	}
	if (s->has_nice && setpriority(PRIO_PROCESS, 0, s->nice) == -1)
		spawn_child_fail(p, "setpriority", errno);
	if (s->umask != -1)
		umask((mode_t)s->umask);
	if (s->has_gid || s->has_uid) {
		if (setgroups((size_t)p->user.ngroups, p->user.groups) == -1)
			spawn_child_fail(p, "setgroups", errno);
		if (p->user.has_gid && setgid(p->user.gid) == -1)
			spawn_child_fail(p, "setgid", errno);
		if (s->has_uid && setuid(s->uid) == -1)
			spawn_child_fail(p, "setuid", errno);
		/*
		 * A change of credentials clears the parent-death signal:
		 * set it again, and check again that the parent is alive.
		 */
		if (prctl(PR_SET_PDEATHSIG, s->pdeath_signal) == -1)
			spawn_child_fail(p, "prctl", errno);
		if (getppid() != p->parent)
			_exit(127);
	}
	if (chdir(s->directory) == -1) {
		snprintf(what, sizeof(what), "chdir %s", s->directory);
		spawn_child_fail(p, what, errno);
	}
}

/*
 * Enter the run's cgroup before anything else happens: every process the
 * job will ever make is born in it.
 */
static void
spawn_child_cgroup(struct spawn_plan *p)
{
	int fd;

	fd = openat(p->req->cgroup_fd, "cgroup.procs",
	    O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd == -1 || write(fd, "0", 1) != 1)
		spawn_child_fail(p, "cgroup", errno);
	close(fd);
}

/*
 * In the child, its own group and session made and the descriptor table
 * still vigild's: the announcement, if the request has one.  It goes
 * without waiting: a watcher that does not take it fails the start.
 */
static void
spawn_child_announce(struct spawn_plan *p)
{
	const struct spawn_announce *a = &p->req->announce;
	int32_t pid = (int32_t)getpid();

	if (a->fd <= 0)
		return;
	memcpy((char *)a->buf + a->pid_off, &pid, sizeof(pid));
	if (sendfd(a->fd, a->buf, a->len, a->pass_fd,
	        MSG_NOSIGNAL | MSG_DONTWAIT) == -1)
		spawn_child_fail(p, "announce", errno);
}

/*
 * The child side of spawn_start(); never returns.  Everything that needs
 * allocation or NSS was done by the parent: the child only makes system
 * calls.
 */
static void __attribute__((noreturn)) spawn_child(struct spawn_plan *p)
{
	const struct job_spec *s = p->req->spec;
	struct sigaction sa;
	sigset_t none;

	p->ran = 1;
	if (prctl(PR_SET_PDEATHSIG, s->pdeath_signal) == -1)
		_exit(127);
	/* The parent may have died before prctl: then nobody would tell. */
	if (getppid() != p->parent)
		_exit(127);
	/*
	 * exec resets caught signals; only ignored ones stay ignored.  vigild
	 * resets every disposition at start-up and then ignores SIGPIPE alone.
	 */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	(void)sigaction(SIGPIPE, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (p->req->cgroup_fd > 0 && !p->born_in_cgroup)
		spawn_child_cgroup(p);
	if (setsid() == -1)
		spawn_child_fail(p, "setsid", errno);
	spawn_child_announce(p);
	spawn_child_fds(p);
	spawn_child_attrs(p);
	spawn_child_exec(p);
}

/*
 * Start the child sharing vigild's memory, vigild suspended until the
 * child has called execve (or exited): no page tables to copy and no
 * copy-on-write faults in vigild afterwards, as posix_spawn(3) does.
 */
static pid_t
spawn_vfork(struct spawn_plan *volatile p)
{
	pid_t pid;

	/*
	 * Decided: the child calls functions of ours before it execs, all of
	 * them system calls only on memory prepared by the parent (see the
	 * top of this file); the analyzer allows only exec and _exit.
	 */
	if ((pid = vfork()) == 0)
		spawn_child(p); /* NOLINT(clang-analyzer-unix.Vfork) */
	return (pid);
}

#ifdef HAVE_CLOSE_RANGE
static int
spawn_clone_child(void *arg)
{
	spawn_child(arg);
}

/*
 * Fill the slots with what the child's 0..3 will be: the request's
 * descriptors, else /dev/null for stdin and vigild's own 1 and 2.
 */
static int
spawn_slots_fill(const struct spawn_request *r)
{
	int src[SPAWN_NSLOTS], i;

	src[0] = r->stdin_fd > 0 ? r->stdin_fd : -1;
	src[1] = r->stdout_fd != -1 ? r->stdout_fd : 1;
	src[2] = r->stderr_fd != -1 ? r->stderr_fd : 2;
	src[3] = r->lock_fd;
	for (i = 0; i < SPAWN_NSLOTS; i++) {
		if (src[i] != -1 &&
		    dup3(src[i], spawn_slot[i], O_CLOEXEC) == -1)
			return (-1);
	}
	return (0);
}

/* Back to /dev/null: a pipe's write end must not live on in vigild. */
static void
spawn_slots_reset(void)
{
	int i;

	for (i = 0; i < SPAWN_NSLOTS; i++)
		(void)dup3(spawn_null, spawn_slot[i], O_CLOEXEC);
}

/*
 * The slots of a child that shares vigild's descriptor table, filled;
 * on failure they are reset and -1 is returned (errno kept).
 */
static int
spawn_slots_ready(struct spawn_plan *p)
{
	int err;

	if (spawn_slots_fill(p->req) == -1) {
		err = errno;
		spawn_slots_reset();
		errno = err;
		return (-1);
	}
	p->shared_files = 1;
	return (0);
}

/* Start the child sharing vigild's memory and descriptor table. */
static pid_t
spawn_clone(struct spawn_plan *p)
{
	pid_t pid;
	int err;

	if (spawn_slots_ready(p) == -1)
		return (-1);
	pid = clone(spawn_clone_child, spawn_stack + SPAWN_STACK_SIZE,
	    CLONE_VM | CLONE_VFORK | CLONE_FILES | SIGCHLD, p);
	err = errno;
	spawn_slots_reset();
	errno = err;
	return (pid);
}

#ifdef CLONE_INTO_CGROUP
static int spawn_clone3_broken; /* ENOSYS (valgrind), EPERM (seccomp)... */

#if defined(__x86_64__) && defined(HAVE_CLOSE_RANGE)
/*
 * clone3 for a child that shares vigild's memory and runs on its own
 * stack: spawn_clone3_vm(args, size, fn, arg) returns the child's pid (or
 * -errno) in vigild; the child calls fn(arg) and exits with its value.
 * glibc 2.36 has no clone3 wrapper, and C cannot come back from a system
 * call onto another stack, so the child's side is written here in
 * assembly, as glibc's clone is: fn and arg wait in r12 and r13 (kept
 * across the call), the kernel starts the child on args->stack.
 */
long spawn_clone3_vm(struct clone_args *, size_t, int (*)(void *), void *);
__asm__(".text\n"
        ".type spawn_clone3_vm, @function\n"
        "spawn_clone3_vm:\n"
        "	push %r12\n"
        "	push %r13\n"
        "	mov %rdx, %r12\n"
        "	mov %rcx, %r13\n"
        "	mov $435, %eax\n" /* SYS_clone3 */
        "	syscall\n"
        "	test %rax, %rax\n"
        "	jz 1f\n"
        "	pop %r13\n"
        "	pop %r12\n"
        "	ret\n"
        "1:	xor %ebp, %ebp\n"
        "	mov %r13, %rdi\n"
        "	call *%r12\n"
        "	mov %eax, %edi\n"
        "	mov $60, %eax\n" /* SYS_exit */
        "	syscall\n"
        "	hlt\n"
        ".size spawn_clone3_vm, .-spawn_clone3_vm\n");

/*
 * As spawn_clone (memory and descriptor table shared, vigild suspended
 * until the exec), the child born in its cgroup.  Return its pid, or -1.
 */
static pid_t
spawn_clone3_shared(struct spawn_plan *p)
{
	struct clone_args a;
	long pid;
	int err;

	if (spawn_slots_ready(p) == -1)
		return (-1);
	p->born_in_cgroup = 1;
	p->report = -1; /* the child says how it went in p->fail */
	memset(&a, 0, sizeof(a));
	a.flags = CLONE_VM | CLONE_VFORK | CLONE_FILES | CLONE_INTO_CGROUP;
	a.exit_signal = SIGCHLD;
	a.stack = (uint64_t)(uintptr_t)spawn_stack;
	a.stack_size = SPAWN_STACK_SIZE;
	a.cgroup = (uint64_t)p->req->cgroup_fd;
	pid = spawn_clone3_vm(&a, sizeof(a), spawn_clone_child, p);
	err = pid < 0 ? (int)-pid : 0;
	spawn_slots_reset();
	if (pid < 0) {
		p->shared_files = 0;
		p->born_in_cgroup = 0;
		errno = err;
		return (-1);
	}
	return ((pid_t)pid);
}
#endif

/*
 * Start the child in its cgroup from birth (clone3 CLONE_INTO_CGROUP), as
 * fork does, vigild suspended until the exec: no move through
 * cgroup.procs, which takes a kernel lock with an RCU wait per spawn.
 * The child has its own memory: its exec outcome comes through the report
 * pipe.  Return the pid, 0 when clone3 cannot do it (then never again),
 * or -1.
 */
static pid_t
spawn_clone3(struct spawn_plan *p)
{
	struct clone_args a;
	long pid;

	if (spawn_clone3_broken)
		return (0);
#if defined(__x86_64__) && defined(HAVE_CLOSE_RANGE)
	if (spawn_mode == SPAWN_CLONE) {
		int report = p->report;

		if ((pid = spawn_clone3_shared(p)) > 0)
			return ((pid_t)pid);
		p->report = report;
		if (errno == ENOSYS || errno == EPERM || errno == EINVAL ||
		    errno == E2BIG) {
			spawn_clone3_broken = 1;
			return (0);
		}
		return (-1);
	}
#endif
	memset(&a, 0, sizeof(a));
	a.flags = CLONE_VFORK | CLONE_INTO_CGROUP;
	a.exit_signal = SIGCHLD;
	a.cgroup = (uint64_t)p->req->cgroup_fd;
	pid = syscall(SYS_clone3, &a, sizeof(a));
	if (pid == 0) {
		p->born_in_cgroup = 1; /* the child's own copy */
		spawn_child(p);
	}
	if (pid == -1 &&
	    (errno == ENOSYS || errno == EPERM || errno == EINVAL ||
	        errno == E2BIG)) {
		spawn_clone3_broken = 1;
		return (0);
	}
	return ((pid_t)pid);
}
#else
static pid_t
spawn_clone3(struct spawn_plan *p)
{
	(void)p;
	return (0);
}
#endif

/* Open the slots, above 3 so that moving them onto 0..3 clobbers none. */
static int
spawn_slots_open(void)
{
	int fd, i;

	if ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1)
		return (-1);
	spawn_null = fcntl(fd, F_DUPFD_CLOEXEC, SPAWN_NSLOTS);
	close(fd);
	if (spawn_null == -1)
		return (-1);
	for (i = 0; i < SPAWN_NSLOTS; i++) {
		if ((spawn_slot[i] = fcntl(
		         spawn_null, F_DUPFD_CLOEXEC, SPAWN_NSLOTS)) == -1)
			return (-1);
		if (spawn_slot[i] > spawn_slot_top)
			spawn_slot_top = spawn_slot[i];
	}
	spawn_stack = mmap(NULL, SPAWN_STACK_SIZE, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (spawn_stack == MAP_FAILED) {
		spawn_stack = NULL;
		return (-1);
	}
	return (0);
}
#endif

/*
 * Raise the soft limit on open files to the hard limit: vigild holds a
 * lock, a pipe and a log file per job.  Children get the limit vigild
 * started with (select(2) users break above 1024), unless limit_nofile
 * says otherwise.
 */
void
spawn_init(void)
{
	struct rlimit rl;

	spawn_mode = SPAWN_VFORK;
#ifdef HAVE_CLOSE_RANGE
	if (!SPAWN_ASAN && spawn_slots_open() == 0)
		spawn_mode = SPAWN_PROBE;
#endif
	if (getrlimit(RLIMIT_NOFILE, &spawn_nofile) == -1 ||
	    spawn_nofile.rlim_cur >= spawn_nofile.rlim_max)
		return;
	rl = spawn_nofile;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
		spawn_nofile_raised = 1;
}

/* Start the child sharing vigild's memory: clone where it works, else vfork. */
static pid_t
spawn_shared(struct spawn_plan *p)
{
#ifdef HAVE_CLOSE_RANGE
	if (spawn_mode == SPAWN_CLONE)
		return (spawn_clone(p));
#endif
	return (spawn_vfork(p));
}

/*
 * Read the child's report from fd.  Return 0 when exec succeeded (EOF
 * without text), 1 with *cause set to the failure text, or -1 with errno
 * (EAGAIN: nothing yet on a non-blocking fd).
 */
int
spawn_report_read(int fd, char **cause)
{
	char buf[PATH_MAX + 128];
	ssize_t n, len = 0;

	for (;;) {
		n = read(fd, buf + len, sizeof(buf) - 1 - (size_t)len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && len == 0)
			return (-1);
		if (n <= 0)
			break;
		len += n;
		if ((size_t)len >= sizeof(buf) - 1)
			break;
	}
	if (len == 0)
		return (0);
	buf[len] = '\0';
	*cause = xstrdup(buf);
	return (1);
}

static void
spawn_fd_close(int fd)
{
	if (fd != -1)
		close(fd);
}

static void
spawn_plan_clear(struct spawn_plan *p)
{
	spawn_env_free(p->envp);
	spawn_user_clear(&p->user);
}

/*
 * Start and exec the instance described by req.  Signals vigild handles
 * are blocked by the caller; the child restores an empty mask.
 *
 * vigild waits, suspended, until the child has called execve: as
 * posix_spawn(3) and s6's spawning do, this costs no page-table copy and
 * no copy-on-write faults afterwards, which made fork the largest cost of
 * a short queue run.  The price: a child that hangs before exec (a chdir
 * into, or an exec from, a dead NFS mount) stalls vigild with it.
 *
 * Return -1 with *cause set when nothing was started.  Otherwise return 0
 * with res->pid set, and either res->done (exec succeeded, or failed with
 * res->cause, the caller's to free, and the child exits 127), or
 * res->report_fd: the caller owns that read end and reads it with
 * spawn_report_read() once it is readable.
 */
int
spawn_start(
    const struct spawn_request *req, struct spawn_result *res, char **cause)
{
	struct spawn_plan plan;
	uint64_t before, after;
	int pfd[2], via3;
	pid_t pid;

	memset(&plan, 0, sizeof(plan));
	plan.req = req;
	if (spawn_user_init(&plan.user, req->spec, cause) == -1 ||
	    (plan.envp = spawn_environment(req, &plan.user, cause)) == NULL) {
		spawn_plan_clear(&plan);
		return (-1);
	}
	plan.path = spawn_env_get(plan.envp, "PATH");
	if (plan.path == NULL)
		plan.path = SPAWN_DEFAULT_PATH;
	pfd[0] = pfd[1] = -1;
	if ((spawn_mode != SPAWN_CLONE || req->cgroup_fd > 0) &&
	    pipe2(pfd, O_CLOEXEC) == -1) {
		xasprintf(cause, "pipe: %s", strerror(errno));
		spawn_plan_clear(&plan);
		return (-1);
	}
	plan.parent = getpid();
	plan.report = pfd[1];
	before = proc_boot_ticks();
	/* The first spawn finds out whether clone works (the probe). */
	pid = req->cgroup_fd > 0 && spawn_mode != SPAWN_PROBE ?
	    spawn_clone3(&plan) :
	    0;
	via3 = pid != 0;
	if (!via3) {
		if (spawn_mode == SPAWN_CLONE) { /* no report pipe there */
			spawn_fd_close(pfd[0]);
			spawn_fd_close(pfd[1]);
			pfd[0] = pfd[1] = plan.report = -1;
		}
		pid = spawn_shared(&plan);
	}
	after = proc_boot_ticks();
	if (pid == -1) {
		xasprintf(cause, "fork: %s", strerror(errno));
		spawn_fd_close(pfd[0]);
		spawn_fd_close(pfd[1]);
		spawn_plan_clear(&plan);
		return (-1);
	}
	spawn_fd_close(pfd[1]);
	spawn_plan_clear(&plan);
	memset(res, 0, sizeof(*res));
	res->pid = pid;
	res->starttime = before != 0 && before == after ? before : 0;
	res->report_fd = pfd[0];
	/* What the child wrote to the plan, read after it: no stale copy. */
	__asm__ __volatile__("" ::: "memory");
	if (spawn_mode == SPAWN_PROBE && !via3)
		spawn_mode = plan.ran ? SPAWN_CLONE : SPAWN_VFORK;
	if (plan.ran) {
		res->done = 1;
		if (plan.failed)
			res->cause = xstrdup(plan.fail);
		spawn_fd_close(pfd[0]);
		res->report_fd = -1;
	}
	return (0);
}
