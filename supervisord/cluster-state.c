/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Cluster mode, the state (cluster-int.h): the node's leases' slots and
 * how they are found, the run of a slot killed, the keeper's records,
 * why a start waits, the run history in vigil.run, and what the rest of
 * vigild asks of cluster mode (status, the child's environment, the job
 * checks, vigilctl cluster).  The operator's stops and starts
 * cluster-wide are cluster-hold.c's.  It calls nothing of cluster.c,
 * cluster-conn.c or cluster-hold.c.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster-int.h"
#include "cluster.h"
#include "duration.h"
#include "effects.h"
#include "jobs-view.h"
#include "jobs.h"
#include "lease.h"
#include "log.h"
#include "pgstate.h"
#include "proc.h"
#include "timefmt.h"
#include "vigild.h"
#include "xmalloc.h"

/* Wakes the clients waiting on an instance (vigild.c: waiters.c's). */
void (*cluster_waiters)(struct inst *);

#ifdef HAVE_LIBPQ

struct cluster_state cluster_st;

int
cluster_enabled(void)
{
	return (cluster_st.cf != NULL);
}

/* The slot of a cluster instance, made on first use. */
struct lease_slot *
cluster_slot(struct inst *in)
{
	struct lease_slot *s = in->lease;

	if (s != NULL)
		return (s);
	s = xcalloc(1, sizeof(*s));
	s->in = in;
	s->ms_left = -1;
	s->placeable = -1;
	s->key = ++cluster_st.next_key;
	TAILQ_INIT(&s->taken);
	LIST_INSERT_HEAD(&cluster_st.slots, s, entry);
	in->lease = s;
	return (s);
}

/* The slot of (job id, instance), or NULL. */
struct lease_slot *
cluster_find(int64_t job_id, int instance)
{
	struct lease_slot *s;

	LIST_FOREACH(s, &cluster_st.slots, entry)
		if (s->in->job->cluster_id == job_id &&
		    s->in->index == instance)
			return (s);
	return (NULL);
}

/* The instance of (job id, instance) here, slot or not, or NULL. */
struct inst *
cluster_inst_find(int64_t job_id, int instance)
{
	struct job *j;

	RB_FOREACH(j, job_tree, &vigild.jobs)
		if (j->cluster_id == job_id && j->spec->cluster &&
		    instance >= 0 && instance < j->ninsts && !j->retiring)
			return (j->insts[instance]);
	return (NULL);
}

/* Kill whatever is left of the instance's run, now. */
void
cluster_kill_run(struct inst *in)
{
	pid_t pgid = in->run.pgid != 0 ? in->run.pgid : in->run.pid;

	if (in->cg_fd != -1)
		track_signal(in, SIGKILL);
	if (pgid > 1)
		(void)proc_group_signal(pgid, SIGKILL);
	if (in->run.pid > 1)
		(void)kill(in->run.pid, SIGKILL);
}

/* Is a run of the instance there? */
int
cluster_has_run(const struct inst *in)
{
	return (in->run.pid != 0 || in->life.run != LIFE_RUN_NONE);
}

void
cluster_timers_off(struct lease_slot *s)
{
	if (s->stop != NULL)
		(void)sd_event_source_set_enabled(s->stop, SD_EVENT_OFF);
	if (s->kill != NULL)
		(void)sd_event_source_set_enabled(s->kill, SD_EVENT_OFF);
}

/* When the keeper kills the run on s: trust, 0 (never), 1 (now). */
static uint64_t
cluster_keeper_deadline(const struct lease_slot *s)
{
	if (s->st != LEASE_HELD)
		return (1); /* not ours any more: now */
	return (cluster_st.cf->on_db_loss == CONF_DB_LOSS_KEEP ? 0 : s->trust);
}

/*
 * The keeper's record of the run: killed at trust unless renewed (with
 * the run's cgroup, cg_fd, for a new keeper: cluster_keeper_resend).
 */
void
cluster_keeper_record(struct lease_slot *s, int cg_fd)
{
	if (s->pgid <= 1)
		return;
	keeper_set(s->key, s->pgid, cluster_keeper_deadline(s), cg_fd);
}

/*
 * A run is about to be spawned on the held lease s: its child tells the
 * keeper its group (and cgroup) itself, before it execs.
 */
void
cluster_keeper_announce(
    struct lease_slot *s, int cg_fd, struct spawn_announce *a)
{
	keeper_announce(s->key, cluster_keeper_deadline(s), cg_fd, a);
}

void
cluster_keeper_update(struct lease_slot *s)
{
	cluster_keeper_record(s, -1);
}

/* A new keeper: every run's record again. */
void
cluster_keeper_resend(void)
{
	struct lease_slot *s;

	LIST_FOREACH(s, &cluster_st.slots, entry)
		cluster_keeper_record(s, s->in->cg_fd);
}

/* Is the lease s held and trusted for a whole stop time of its run? */
int
cluster_trusted(const struct lease_slot *s)
{
	uint64_t stop;

	if (s == NULL || s->st != LEASE_HELD)
		return (0);
	if (cluster_st.cf->on_db_loss == CONF_DB_LOSS_KEEP)
		return (1);
	stop = inst_kind_stop_time(s->in->job->spec);
	return (pgconn_now() < lease_stop_at(s->trust, stop));
}

/* ---- acquire ---- */

/* Why a standby waits, in its reason. */
void
cluster_waiting(struct lease_slot *s, const char *why)
{
	char buf[32];

	if (why == NULL && !cluster_placed(s->in->job->spec)) {
		if (s->placeable == 0)
			inst_reason(s->in,
			    "not placed on this node (cluster_nodes); no live "
			    "node may run it");
		else if (s->holder != NULL)
			inst_reason(s->in,
			    "not placed on this node (cluster_nodes); held by "
			    "%s",
			    s->holder);
		else
			inst_reason(
			    s->in, "not placed on this node (cluster_nodes)");
		return;
	}
	if (why == NULL && s->placeable == 0 && s->holder == NULL) {
		inst_reason(s->in, "no live node may run it (cluster_nodes)");
		return;
	}
	if (why == NULL && cluster_st.drained) {
		inst_reason(s->in,
		    "standing by: node %s is drained (vigilctl cluster "
		    "undrain)",
		    cluster_st.cf->node_name);
		return;
	}
	if (why == NULL && s->failures != NULL) {
		/* "failing on n1 (exit 3); next try in 4s" */
		if (s->holder != NULL)
			inst_reason(s->in, "failing on %s; now held by %s",
			    s->failures, s->holder);
		else if (s->wait_ms > 0)
			inst_reason(s->in, "failing on %s; next try here in %s",
			    s->failures,
			    duration_format(
			        (uint64_t)s->wait_ms * 1000, buf, sizeof(buf)));
		else
			inst_reason(
			    s->in, "failing on %s; trying again", s->failures);
		return;
	}
	if (why != NULL)
		inst_reason(s->in, "waiting for cluster lease: %s", why);
	else if (s->holder != NULL && s->ms_left >= 0)
		inst_reason(s->in,
		    "waiting for cluster lease (held by %s, %s left)",
		    s->holder,
		    duration_format(
		        (uint64_t)s->ms_left * 1000, buf, sizeof(buf)));
	else if (s->holder != NULL)
		inst_reason(
		    s->in, "waiting for cluster lease (held by %s)", s->holder);
	else
		inst_reason(s->in, "waiting for cluster lease");
}

/*
 * A statement for a command (vigilctl cluster, the verbs on cluster
 * queues), n parameters p, on the work connection:
 * 0, or -1 with cause when cluster mode is off or the database is out of
 * reach.
 */
int
cluster_ask(const char *sql, int n, const char *const *p, pgconn_done_fn done,
    void *arg, char **cause)
{
	if (cluster_st.cf == NULL) {
		*cause = xstrdup("cluster mode is off (no cluster section in "
		                 "vigil.conf)");
		return (-1);
	}
	if (!pgconn_is_ready(cluster_st.work)) {
		xasprintf(cause, "the database is out of reach: %s",
		    pgconn_why(cluster_st.work) != NULL ?
		        pgconn_why(cluster_st.work) :
		        "connecting");
		return (-1);
	}
	pgconn_query(cluster_st.work, 0, sql, n, p, done, arg);
	return (0);
}

/* This node's name, or NULL. */
const char *
cluster_node_name(void)
{
	return (cluster_st.cf != NULL ? cluster_st.cf->node_name : NULL);
}

/*
 * Is in a cluster instance that stands by: it waits for a lease another
 * node holds and runs (a start of it is settled)?
 */
int
cluster_standby(const struct inst *in)
{
	const struct lease_slot *s = in->lease;

	return (s != NULL && s->want && s->st == LEASE_NONE &&
	    s->holder != NULL && in->life.phase == LIFE_LEASE);
}

/* Is in a periodic job whose slots the cluster decides? */
int
cluster_periodic(const struct inst *in)
{
	return (cluster_st.cf != NULL && in->job->spec->cluster &&
	    in->job->spec->kind == CONF_KIND_PERIODIC);
}

/* ---- jobs ---- */

/* A short hash of a job file, to see drift between nodes. */
void
cluster_spec_hash(const struct job_spec *spec, char *buf, size_t len)
{
	uint64_t h = 14695981039346656037ULL;
	unsigned char b[4096];
	ssize_t n, k;
	int fd;

	if ((fd = open(spec->path, O_RDONLY | O_CLOEXEC)) != -1) {
		while ((n = read(fd, b, sizeof(b))) > 0)
			for (k = 0; k < n; k++) {
				h ^= b[k];
				h *= 1099511628211ULL;
			}
		close(fd);
	}
	snprintf(buf, len, "%016" PRIx64, h);
}

/* May this node run the job (its cluster_nodes, globs over node_name)? */
int
cluster_placed(const struct job_spec *spec)
{
	char **g;

	if (spec->cluster_nodes == NULL || cluster_st.cf == NULL)
		return (1);
	for (g = spec->cluster_nodes; *g != NULL; g++)
		if (fnmatch(*g, cluster_st.cf->node_name, 0) == 0)
			return (1);
	return (0);
}

const char *
cluster_kind_name(enum conf_kind k)
{
	return (k == CONF_KIND_PERIODIC ? "periodic" :
	        k == CONF_KIND_QUEUE    ? "queue" :
	                                  "service");
}

/* An instance goes away: its slot with it (its lease was given back). */
static void
cluster_inst_free(struct inst *in)
{
	struct lease_slot *s = in->lease;
	struct taken *t;

	if (s == NULL)
		return;
	if (s->msg != 0 && s->pgid > 1)
		keeper_del(s->key); /* a message: no lease to give back */
	else if (s->msg == 0 && (s->st == LEASE_HELD || s->st == LEASE_EXPIRED))
		claim_cluster.release(in);
	LIST_REMOVE(s, entry);
	s->stop = sd_event_source_disable_unref(s->stop);
	s->kill = sd_event_source_disable_unref(s->kill);
	s->retry = sd_event_source_disable_unref(s->retry);
	s->taken_timer = sd_event_source_disable_unref(s->taken_timer);
	while ((t = TAILQ_FIRST(&s->taken)) != NULL) {
		TAILQ_REMOVE(&s->taken, t, entry);
		free(t); /* the next holder answers */
	}
	free(s->holder);
	free(s->failures);
	free(s->failed);
	free(s);
	in->lease = NULL;
}

/*
 * The reason status shows for in: a standby's "(held by n1, 2.1s left)"
 * counted down from what its last bid saw, not frozen at it; else
 * in->reason.
 */
const char *
cluster_reason(const struct inst *in, char *buf, size_t len)
{
	static const char held[] = "waiting for cluster lease (held by ";
	const struct lease_slot *s = in->lease;
	uint64_t now;
	char d[32];

	if (s == NULL || cluster_st.cf == NULL || in->reason == NULL ||
	    s->st == LEASE_HELD || s->holder == NULL || s->holder_until == 0 ||
	    strncmp(in->reason, held, sizeof(held) - 1) != 0)
		return (in->reason);
	now = pgconn_now();
	snprintf(buf, len, "%s%s, %s left)", held, s->holder,
	    duration_format(s->holder_until > now ? s->holder_until - now : 0,
	        d, sizeof(d)));
	return (buf);
}

/*
 * What status shows of a cluster instance: the node that runs it (this
 * one, or the holder at the last bid), the fencing token when it is this
 * node's, how long the lease is trusted (ours) or could last (theirs).
 * 0, or -1 for an instance that is not a cluster one.
 */
int
cluster_view(const struct inst *in, struct cluster_view *v)
{
	const struct lease_slot *s = in->lease;
	uint64_t now = pgconn_now();

	memset(v, 0, sizeof(*v));
	v->expires_ms = -1;
	if (cluster_st.cf == NULL || !in->job->spec->cluster)
		return (-1);
	if (s == NULL)
		return (0);
	if (s->st == LEASE_HELD) {
		v->node = cluster_st.cf->node_name;
		/* a message: no token */
		v->epoch = s->msg != 0 ? 0 :
		    s->token != 0      ? s->token :
		                         s->epoch;
		v->expires_ms =
		    s->trust > now ? (int64_t)(s->trust - now) / 1000 : 0;
	} else if (s->holder != NULL && s->want) {
		v->node = s->holder;
		if (s->holder_until > now)
			v->expires_ms = (int64_t)(s->holder_until - now) / 1000;
	}
	return (0);
}

/* The child's environment: its fencing token and the node's name. */
void
cluster_env(struct inst *in, char **env, size_t n)
{
	size_t i;

	if (in->lease == NULL || in->lease->st != LEASE_HELD)
		return;
	for (i = 0; i + 2 < n && env[i] != NULL; i++)
		;
	if (i + 2 >= n)
		return;
	xasprintf(&env[i], "VIGIL_NODE=%s", cluster_st.cf->node_name);
	/*
	 * Each run its own token, above every earlier run's anywhere (the
	 * next holding's epoch is above them).  A message's token is
	 * (VIGIL_MESSAGE_ID, VIGIL_ATTEMPT).
	 */
	if (in->lease->msg == 0) {
		in->lease->token = in->lease->epoch + in->lease->runs++;
		xasprintf(&env[i + 1], "VIGIL_FENCING_TOKEN=%" PRId64,
		    in->lease->token);
	}
}

/*
 * A cluster job with a stop time the lease cannot cover (the rule of
 * lease_check), or without a cluster section: 0, or -1 with cause.
 */
int
cluster_job_check(const struct job_spec *spec, char **cause)
{
	const struct conf_cluster *cf = &vigild.conf->cluster;
	struct lease_timing t;

	if (!spec->cluster)
		return (0);
	if (!cf->enabled) {
		*cause = xstrdup("cluster = true, but vigil.conf has no "
		                 "cluster section");
		return (-1);
	}
	t.ttl = cf->lease_ttl;
	t.renew = cf->renew_interval;
	t.query_timeout = cf->query_timeout;
	t.margin = cf->fence_margin;
	return (lease_check(&t, inst_kind_stop_time(spec),
	    spec->kind == CONF_KIND_QUEUE ? "drain_timeout + stop_timeout" :
	                                    "stop_timeout",
	    cause));
}

/* What a run's row in vigil.run is for, until its id comes. */
struct run_arg {
	char *job;
	int instance;
	char run_id[17];
};

static void
cluster_run_begun(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct run_arg *a = arg;
	struct job *j = job_find(a->job);
	struct lease_slot *s;

	if (res != NULL && j != NULL && a->instance < j->ninsts &&
	    (s = j->insts[a->instance]->lease) != NULL &&
	    strcmp(s->run_id, a->run_id) == 0)
		s->run_row = pgres_int(res, 0, 0, 0);
	free(a->job);
	free(a);
}

/* A new run of a cluster instance: on record cluster-wide. */
void
cluster_run_begin(struct lease_slot *s, pid_t pid)
{
	struct inst *in = s->in;
	struct run_arg *a;
	const char *p[6];
	char id[32], idx[16], ep[32], ps[16], keep[16];

	if (strcmp(s->run_id, in->run.id) == 0)
		return; /* the same run (a MAINPID= move) */
	strlcpy(s->run_id, in->run.id, sizeof(s->run_id));
	s->run_row = 0;
	if (!pgconn_is_ready(cluster_st.work))
		return;
	snprintf(id, sizeof(id), "%" PRId64, in->job->cluster_id);
	snprintf(idx, sizeof(idx), "%d", in->index);
	snprintf(
	    ep, sizeof(ep), "%" PRId64, s->token != 0 ? s->token : s->epoch);
	snprintf(ps, sizeof(ps), "%ld", (long)pid);
	snprintf(keep, sizeof(keep), "%d", vigild.conf->history_keep);
	p[0] = id;
	p[1] = idx;
	p[2] = cluster_st.cf->node_name;
	p[3] = ep;
	p[4] = ps;
	p[5] = keep;
	a = xcalloc(1, sizeof(*a));
	a->job = xstrdup(in->job->name);
	a->instance = in->index;
	strlcpy(a->run_id, in->run.id, sizeof(a->run_id));
	pgconn_query(
	    cluster_st.work, 0, pg_run_begin, 6, p, cluster_run_begun, a);
}

/* A cluster run ended (its wait status, and how it ended in words): on record. */
void
cluster_run_end(struct inst *in, int status, const char *what)
{
	struct lease_slot *s = in->lease;
	const char *p[4];
	char id[32], code[16], sig[16];

	if (s == NULL || s->run_row == 0 || !pgconn_is_ready(cluster_st.work))
		return;
	snprintf(id, sizeof(id), "%" PRId64, s->run_row);
	snprintf(code, sizeof(code), "%d",
	    WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	snprintf(
	    sig, sizeof(sig), "%d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	p[0] = id;
	p[1] = WIFEXITED(status) ? code : NULL;
	p[2] = WIFSIGNALED(status) ? sig : NULL;
	p[3] = what;
	s->run_row = 0;
	pgconn_query(cluster_st.work, 0, pg_run_end, 4, p, NULL, NULL);
}

const struct inst_observer cluster_lease_observer = {
	.gone = cluster_inst_free,
};

#endif /* HAVE_LIBPQ */

/*
 * The cluster jobs of a loaded jobs.d that this vigild cannot run as such
 * are errors, named by file (status shows them BROKEN; a reload with one
 * changes nothing); they are taken out of jobs.
 */
void
cluster_jobs_check(struct conf_jobs *jobs, struct conf_errors *errs)
{
	char *cause = NULL;
	size_t i, k = 0;

	for (i = 0; i < jobs->n; i++) {
		if (cluster_job_check(jobs->specs[i], &cause) == 0) {
			jobs->specs[k++] = jobs->specs[i];
			continue;
		}
		conf_errors_add(
		    errs, "%s: cluster: %s", jobs->specs[i]->path, cause);
		free(cause);
		cause = NULL;
		job_spec_free(jobs->specs[i]);
	}
	jobs->n = k;
}
