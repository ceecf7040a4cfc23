/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * What jobs say on NOTIFY_SOCKET (RUNTIME/notify.sock): READY=1,
 * WATCHDOG=1, WATCHDOG=trigger, STATUS=, ERRNO=, MAINPID=.  A datagram
 * counts only if its sender (by the kernel's SCM_CREDENTIALS) is in the
 * session of a running instance: as root, systemd-notify reports its
 * parent's pid, and forking daemons send from grandchildren, so the whole
 * session is accepted, as systemd's NotifyAccess=all within a service's
 * cgroup.  Whether READY=1 makes an instance RUNNING is the lifecycle's
 * call (lib/life.c, row SPAWNED, column READY).
 */

#include "config.h"

#include <sys/types.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "effects.h"
#include "evloop.h"
#include "inst.h"
#include "jobs.h"
#include "log.h"
#include "notify.h"
#include "vigild.h"
#include "xmalloc.h"

static int
ready_sid_cmp(struct inst *a, struct inst *b)
{
	return (a->run.pgid < b->run.pgid ? -1 : a->run.pgid > b->run.pgid);
}
RB_HEAD(sid_tree, inst);
RB_PROTOTYPE(sid_tree, inst, sid_entry, ready_sid_cmp)
RB_GENERATE(sid_tree, inst, sid_entry, ready_sid_cmp)
static struct sid_tree ready_sids = RB_INITIALIZER(&ready_sids);

/* RUNTIME/notify.sock: its descriptor, its watch, its path. */
static int ready_fd = -1;
static sd_event_source *ready_src;
static char *ready_path;
static uint64_t ready_garbage; /* datagrams ignored */

/* The NOTIFY_SOCKET of ready = "notify" jobs. */
const char *
ready_notify_path(void)
{
	return (ready_path);
}

/* The run of in has its own session (its pgid): accept its datagrams. */
void
ready_session_add(struct inst *in)
{
	if (RB_INSERT(sid_tree, &ready_sids, in) != NULL)
		log_warnx("%s: session %ld already known", in->label,
		    (long)in->run.pgid);
}

/* Its session is over. */
void
ready_session_remove(struct inst *in)
{
	struct inst key;

	if (in->run.pgid == 0)
		return;
	memset(&key, 0, sizeof(key));
	key.run.pgid = in->run.pgid;
	if (RB_FIND(sid_tree, &ready_sids, &key) == in)
		RB_REMOVE(sid_tree, &ready_sids, in);
}

/* The instance whose run has session sid, or NULL. */
struct inst *
ready_session_find(pid_t sid)
{
	struct inst key;

	if (sid <= 1)
		return (NULL);
	memset(&key, 0, sizeof(key));
	key.run.pgid = sid;
	return (RB_FIND(sid_tree, &ready_sids, &key));
}

/* Forget what the job said during its last run. */
void
ready_forget(struct inst *in)
{
	in->run.notify_errno = 0;
	in->run.mainpid = 0;
	free(in->run.status);
	in->run.status = NULL;
	in->watchdog = sd_event_source_disable_unref(in->watchdog);
}

/* Apply one message of an instance's processes. */
static void
ready_apply(struct inst *in, const struct notify_msg *m)
{
	if (m->status != NULL) {
		free(in->run.status);
		in->run.status = xstrdup(m->status);
	}
	if (m->has_errno)
		in->run.notify_errno = m->errnum;
	if (m->mainpid != 0) {
		if (getsid(m->mainpid) == in->run.pgid) {
			in->run.mainpid = m->mainpid;
			log_debug("%s: MAINPID is now %ld", in->label,
			    (long)m->mainpid);
		} else
			log_warnx("%s: MAINPID=%ld is not one of its "
			          "processes; ignored",
			    in->label, (long)m->mainpid);
	}
	if (m->ready)
		inst_feed(in, LIFE_EV_READY);
	if (m->watchdog && in->watchdog != NULL)
		inst_watchdog_arm(in);
	if (m->watchdog_trigger)
		inst_watchdog_trigger(in);
	if (m->stopping)
		log_debug("%s: says it is stopping", in->label);
}

/* Which instance a datagram came from: its sender's session, or NULL. */
static struct inst *
ready_sender(pid_t pid)
{
	struct inst key;
	pid_t sid;

	if (pid <= 0 || (sid = getsid(pid)) <= 0)
		return (NULL);
	memset(&key, 0, sizeof(key));
	key.run.pgid = sid;
	return (RB_FIND(sid_tree, &ready_sids, &key));
}

/* Datagrams on notify.sock: each from a running instance, or ignored. */
static int
ready_event(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	char buf[NOTIFY_MAX_DATAGRAM + 1];
	struct notify_msg m;
	struct inst *in;
	ssize_t n;
	pid_t pid;
	uid_t uid;

	for (;;) {
		n = notify_recv(fd, buf, sizeof(buf), &pid, &uid);
		if (n == -1) {
			if (errno != EAGAIN && errno != EINTR)
				log_warn("notify socket");
			return (0);
		}
		if ((in = ready_sender(pid)) == NULL ||
		    notify_parse(buf, (size_t)n, &m) == -1) {
			ready_garbage++;
			log_debug("notify: datagram from pid %ld ignored "
			          "(%llu so far)",
			    (long)pid, (unsigned long long)ready_garbage);
			continue;
		}
		ready_apply(in, &m);
		notify_msg_clear(&m);
	}
}

/* Bind RUNTIME/notify.sock, the NOTIFY_SOCKET of ready = "notify" jobs. */
void
ready_open(void)
{
	char *cause = NULL;

	xasprintf(&ready_path, "%s/notify.sock", vigild.runtime_dir);
	if ((ready_fd = notify_open(ready_path, &cause)) == -1)
		fatalx("readiness socket %s", cause);
	evloop_io(&ready_src, ready_fd, EPOLLIN, ready_event, NULL);
}

/* Close notify.sock. */
void
ready_close(void)
{
	ready_src = sd_event_source_disable_unref(ready_src);
	if (ready_fd != -1)
		close(ready_fd);
	ready_fd = -1;
	free(ready_path);
	ready_path = NULL;
}
