/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Cluster mode, the connections: at start-up libpq, the keeper and the
 * two connections (lease and work); on each connection the session's
 * settings, then for the lease connection the schema, the node row, the
 * timeline check and LISTEN, after which the leases are renewed, bid for
 * and given back (cluster.c); the notifications; the end.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster-int.h"
#include "duration.h"
#include "evloop.h"
#include "lease.h"
#include "log.h"
#include "monotime.h"
#include "pgstate.h"
#include "pq.h"
#include "proc.h"
#include "timefmt.h"
#include "vigild.h"
#include "xmalloc.h"

#ifdef HAVE_LIBPQ

static void cluster_seed(void);

/* ---- renew ---- */

/* What a renew sent, to read its answer against. */
struct renew_arg {
	size_t n;
	int64_t *job_ids;
	int64_t *insts;
	int64_t *epochs;
	int64_t *pids;
	int64_t *goods; /* 1: the run lasted min_uptime after failures */
	size_t nmsg;    /* the messages run here */
	int64_t *msgs;
	int64_t *attempts;
};

static void
cluster_renewed(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct renew_arg *a = arg;
	struct lease_slot *s;
	char *seen = NULL, *mseen = NULL, buf[32];
	const char *kind;
	int row, nrows;
	size_t i, held = 0;

	cluster_st.renewing = 0;
	if (res == NULL) {
		if (cluster_st.renew_fails++ == 0)
			log_warnx("cluster: renew failed: %s; leases are "
			          "trusted for %s more at most",
			    err,
			    duration_format(
			        cluster_st.t.ttl - cluster_st.t.margin, buf,
			        sizeof(buf)));
		goto out;
	}
	if (cluster_st.renew_fails > 0)
		log_info("cluster: renewed again after %u failures",
		    cluster_st.renew_fails);
	cluster_st.renew_fails = 0;
	log_debug("cluster: renewed %zu leases in %" PRIu64 " us", a->n,
	    pgconn_now() - sent);
	seen = xcalloc(a->n + 1, 1);
	mseen = xcalloc(a->nmsg + 1, 1);
	nrows = pgres_ntuples(res);
	for (row = 0; row < nrows; row++) {
		kind = pgres_value(res, row, 0);
		if (kind == NULL)
			continue;
		if (strcmp(kind, "m") == 0) {
			for (i = 0; i < a->nmsg; i++)
				if (a->msgs[i] == pgres_int(res, row, 1, -1))
					mseen[i] = 1;
			continue;
		}
		if (strcmp(kind, "n") == 0) {
			if (pgres_int(res, row, 1, 0) == 0)
				log_warnx("cluster: the node row of %s is "
				          "gone",
				    cluster_st.cf->node_name);
			else
				cluster_drained(pgres_bool(res, row, 3));
			continue;
		}
		for (i = 0; i < a->n; i++)
			if (a->job_ids[i] == pgres_int(res, row, 1, -1) &&
			    a->insts[i] == pgres_int(res, row, 2, -1))
				seen[i] = pgres_bool(res, row, 3) ? 2 : 1;
	}
	for (i = 0; i < a->n; i++) {
		s = cluster_find(a->job_ids[i], (int)a->insts[i]);
		if (s == NULL || s->st != LEASE_HELD ||
		    s->epoch != a->epochs[i])
			continue;
		if (!seen[i]) {
			cluster_lost(s);
			continue;
		}
		cluster_trust(s, sent);
		if (a->goods[i] && s->streak) {
			s->streak = 0;
			free(s->failures);
			s->failures = NULL;
			log_info("%s: running for min_uptime: the streak of "
			         "failed starts is over cluster-wide",
			    s->in->label);
		}
		if (seen[i] == 2 && !s->hold_pending) /* notice missed */
			cluster_hold_apply(s->in, 1, NULL);
		held++;
	}
	/* Requests of other nodes whose notice was missed. */
	if (held > 0)
		cluster_requests_take();
	cluster_queue_renewed(a->msgs, a->attempts, mseen, a->nmsg, sent);
out:
	free(seen);
	free(mseen);
	free(a->msgs);
	free(a->attempts);
	free(a->job_ids);
	free(a->insts);
	free(a->epochs);
	free(a->pids);
	free(a->goods);
	free(a);
	if (cluster_st.shutdown_done != NULL &&
	    TAILQ_EMPTY(&cluster_st.releases))
		cluster_shutdown(cluster_st.shutdown_done);
}

/* Renew the node row and every lease held, in one statement. */
static void
cluster_renew_now(void)
{
	struct renew_arg *a;
	struct lease_slot *s;
	char *arr[7];
	const char *p[9];
	size_t n = 0, nmsg = 0, i;
	uint64_t now = monotime_now();

	if (cluster_st.renewing || !pgconn_is_ready(cluster_st.lease))
		return;
	LIST_FOREACH(s, &cluster_st.slots, entry) {
		n += s->st == LEASE_HELD && s->msg == 0;
		nmsg += s->st == LEASE_HELD && s->msg != 0;
	}
	a = xcalloc(1, sizeof(*a));
	a->job_ids = xcalloc(n + 1, sizeof(int64_t));
	a->insts = xcalloc(n + 1, sizeof(int64_t));
	a->epochs = xcalloc(n + 1, sizeof(int64_t));
	a->pids = xcalloc(n + 1, sizeof(int64_t));
	a->goods = xcalloc(n + 1, sizeof(int64_t));
	a->msgs = xcalloc(nmsg + 1, sizeof(int64_t));
	a->attempts = xcalloc(nmsg + 1, sizeof(int64_t));
	LIST_FOREACH(s, &cluster_st.slots, entry) {
		if (s->st != LEASE_HELD)
			continue;
		if (s->msg != 0) {
			a->msgs[a->nmsg] = s->msg;
			a->attempts[a->nmsg++] = s->epoch;
			continue;
		}
		a->job_ids[a->n] = s->in->job->cluster_id;
		a->insts[a->n] = s->in->index;
		a->pids[a->n] = s->in->run.pid > 0 ? s->in->run.pid : 0;
		a->goods[a->n] = s->streak && s->in->run.pid > 0 &&
		    now - s->in->run.started >= s->in->job->spec->min_uptime;
		a->epochs[a->n++] = s->epoch;
	}
	arr[0] = pg_array_int(a->job_ids, a->n);
	arr[1] = pg_array_int(a->insts, a->n);
	arr[2] = pg_array_int(a->epochs, a->n);
	arr[3] = pg_array_int(a->pids, a->n);
	arr[4] = pg_array_int(a->msgs, a->nmsg);
	arr[5] = pg_array_int(a->attempts, a->nmsg);
	arr[6] = pg_array_int(a->goods, a->n);
	p[0] = cluster_st.cf->node_name;
	p[1] = arr[0];
	p[2] = arr[1];
	p[3] = arr[2];
	p[4] = arr[3];
	p[5] = cluster_st.ttl_ms;
	p[6] = arr[4];
	p[7] = arr[5];
	p[8] = arr[6];
	cluster_st.renewing = 1;
	pgconn_query(cluster_st.lease, PGQ_FRONT, pg_lease_renew_all, 9, p,
	    cluster_renewed, a);
	for (i = 0; i < 7; i++)
		free(arr[i]);
}

static int
cluster_renew_tick(sd_event_source *src, uint64_t usec, void *arg)
{
	uint64_t next = usec + cluster_st.t.renew, now = pgconn_now();

	/* After a pause (SIGSTOP, a suspend): on from now, no burst. */
	if (next <= now)
		next = now + cluster_st.t.renew;
	(void)sd_event_source_set_time(src, next);
	(void)sd_event_source_set_enabled(src, SD_EVENT_ON);
	cluster_renew_now();
	cluster_queue_tick();
	cluster_jobs_gc();
	return (0);
}

/* Slots missed while this node was down, now that it is connected. */
static void
cluster_catch_up(void)
{
	struct lease_slot *s;
	int64_t slot;

	LIST_FOREACH(s, &cluster_st.slots, entry) {
		if (s->catch_up == 0 || s->in->job->cluster_id == 0)
			continue;
		slot = s->catch_up;
		s->catch_up = 0;
		if (s->in->life.want)
			cluster_slot_fired(s->in, slot);
	}
}

static void
cluster_seeded(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct job *j;
	const char *name;
	int row, nrows;

	(void)arg;
	cluster_st.seeding = 0;
	if (res == NULL) {
		log_warnx("cluster: registering the jobs: %s", err);
		return; /* again at the next connection or reload */
	}
	nrows = pgres_ntuples(res);
	for (row = 0; row < nrows; row++) {
		if ((name = pgres_value(res, row, 1)) == NULL ||
		    (j = job_find(name)) == NULL || !j->spec->cluster)
			continue;
		j->cluster_id = pgres_int(res, row, 0, 0);
		cluster_holds_apply(j, pgres_value(res, row, 2));
	}
	if (cluster_st.seed_again) {
		cluster_st.seed_again = 0;
		cluster_seed();
	}
	cluster_acquire_all();
	cluster_catch_up();
	cluster_queue_kick(0);
}

static void
cluster_seed_done(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	if (res == NULL) {
		log_warnx("cluster: registering the jobs: %s", err);
		cluster_st.seeding = 0;
	}
}

/*
 * Register the node's cluster jobs: the rows of the job names (no setup
 * step: INSERT ... ON CONFLICT DO NOTHING), the node's files with their
 * hashes, and the ids.
 */
static void
cluster_seed(void)
{
	struct job *j;
	const char **names, **kinds, **hashes, **placed, *p[4];
	char(*hbuf)[24];
	char *an, *ak, *ah, *am, *ap;
	int64_t *maxa;
	size_t n = 0, i = 0;

	if (cluster_st.seeding) {
		cluster_st.seed_again = 1;
		return;
	}
	if (cluster_st.lease == NULL || !pgconn_is_ready(cluster_st.lease))
		return;
	/* A job a reload removed (retiring) is no longer this node's. */
	RB_FOREACH(j, job_tree, &vigild.jobs)
		n += j->spec->cluster != 0 && !j->retiring;
	names = xcalloc(n + 1, sizeof(*names));
	kinds = xcalloc(n + 1, sizeof(*kinds));
	hashes = xcalloc(n + 1, sizeof(*hashes));
	placed = xcalloc(n + 1, sizeof(*placed));
	hbuf = xcalloc(n + 1, sizeof(*hbuf));
	maxa = xcalloc(n + 1, sizeof(*maxa));
	RB_FOREACH(j, job_tree, &vigild.jobs) {
		if (!j->spec->cluster || j->retiring)
			continue;
		names[i] = j->name;
		kinds[i] = cluster_kind_name(j->spec->kind);
		cluster_spec_hash(j->spec, hbuf[i], sizeof(hbuf[i]));
		hashes[i] = hbuf[i];
		placed[i] = cluster_placed(j->spec) ? "t" : "f";
		maxa[i] = j->spec->max_attempts;
		i++;
	}
	an = pg_array_text(names, n);
	ak = pg_array_text(kinds, n);
	ah = pg_array_text(hashes, n);
	am = pg_array_int(maxa, n);
	ap = pg_array_text(placed, n);
	p[0] = an;
	p[1] = ak;
	p[2] = am;
	pgconn_query(
	    cluster_st.lease, 0, pg_job_seed, 3, p, cluster_seed_done, NULL);
	p[0] = cluster_st.cf->node_name;
	p[1] = an;
	p[2] = ah;
	p[3] = ap;
	pgconn_query(
	    cluster_st.lease, 0, pg_node_jobs, 4, p, cluster_seeded, NULL);
	cluster_st.seeding = 1;
	free(an);
	free(ak);
	free(ah);
	free(am);
	free(ap);
	free(placed);
	free(maxa);
	free(names);
	free(kinds);
	free(hashes);
	free(hbuf);
}

/* Jobs came or went (a reload): register them. */
void
cluster_jobs_changed(void)
{
	if (cluster_st.cf != NULL)
		cluster_seed();
}

/* ---- the connections ---- */

/* A set-up step failed: the connection goes, and is made again later. */
static void
cluster_setup_failed(struct pgconn *c, const char *what, const char *err)
{
	char *m;

	xasprintf(&m, "%s: %s", what, err);
	pgconn_drop(c, m);
	free(m);
}

static void
cluster_session_done(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct pgconn *c = arg;

	if (res == NULL)
		cluster_setup_failed(c, "session set-up", err);
	else if (c == cluster_st.work) {
		pgconn_set_ready(c);
		cluster_queue_ready();
	}
}

static void
cluster_schema_done(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	const char *roles;
	long long v;

	if (res == NULL) {
		cluster_setup_failed(
		    cluster_st.lease, "creating schema vigil", err);
		return;
	}
	v = pgres_int(res, 0, 0, 0);
	if (v > PG_SCHEMA_VERSION)
		log_warnx("cluster: schema vigil is at version %lld, newer "
		          "than this vigild's %d",
		    v, PG_SCHEMA_VERSION);
	if ((roles = pgres_value(res, 0, 1)) != NULL)
		log_warnx("cluster: no role %s, and this role may not create "
		          "roles (CREATEROLE): applications and nodes can be "
		          "given no narrower role (enqueue-only, read-only, "
		          "node-only) until a superuser "
		          "runs CREATE ROLE ... NOLOGIN for each (the next "
		          "vigild start grants them their rights; "
		          "docs/cluster.md)",
		    roles);
	cluster_st.schema_done = 1;
}

static void
cluster_registered(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	char *m;

	if (res == NULL) {
		cluster_setup_failed(
		    cluster_st.lease, "registering the node", err);
		return;
	}
	if (pgres_ntuples(res) == 0) {
		xasprintf(&m,
		    "node_name \"%s\" is in use by a live vigild on another "
		    "host",
		    cluster_st.cf->node_name);
		cluster_setup_failed(
		    cluster_st.lease, "registering the node", m);
		free(m);
		return;
	}
	cluster_drained(pgres_bool(res, 0, 1));
}

static void
cluster_guarded(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	char buf[32];

	if (res == NULL) {
		cluster_setup_failed(cluster_st.lease, "timeline check", err);
		return;
	}
	if (pgres_ntuples(res) > 0 && pgres_int(res, 0, 1, 0) > 0)
		log_warnx("cluster: the database is on a new timeline (%lld): "
		          "a failover; no lease changes hands for %s",
		    pgres_int(res, 0, 0, 0),
		    duration_format((uint64_t)pgres_int(res, 0, 1, 0) * 1000,
		        buf, sizeof(buf)));
}

/* The last step of the lease connection's set-up: ready. */
static void
cluster_listening(
    void *arg, const struct pgres *res, const char *err, uint64_t sent)
{
	struct release *r;

	if (res == NULL) {
		cluster_setup_failed(cluster_st.lease, "LISTEN", err);
		return;
	}
	pgconn_set_ready(cluster_st.lease);
	TAILQ_FOREACH(r, &cluster_st.releases, entry)
		r->sent = 0;
	cluster_renew_now();
	cluster_releases_send();
	cluster_queue_flush();
	cluster_seed();
	cluster_acquire_all();
	cluster_hold_reread();
}

/* The session's settings, then (lease) the schema, the node, LISTEN. */
static void
cluster_connected(void *arg)
{
	struct pgconn *c = arg;
	char *sql, boot[80], pid[16], inc[32];
	const char *p[6];
	unsigned long long ms = cluster_st.t.query_timeout / 1000;

	if (c != cluster_st.lease && cluster_st.cf->work_conninfo != NULL) {
		/*
		 * Perhaps a pooler in transaction mode: a session setting
		 * would stay on a server connection others use next.  Every
		 * statement of the work connection is one transaction.
		 */
		pgconn_set_ready(c);
		cluster_queue_ready();
		return;
	}
	sql = pg_session_sql(ms);
	pgconn_query(
	    c, PGQ_SETUP | PGQ_SIMPLE, sql, 0, NULL, cluster_session_done, c);
	free(sql);
	if (c != cluster_st.lease)
		return;
	if (!cluster_st.schema_done) {
		/* Nothing is held yet: the schema may take its time. */
		pgconn_setup_budget(c, PG_SCHEMA_TIMEOUT);
		pgconn_query(c, PGQ_SETUP | PGQ_SIMPLE, pg_schema, 0, NULL,
		    cluster_schema_done, NULL);
	}
	snprintf(boot, sizeof(boot), "%s", cluster_st.boot_id);
	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	snprintf(inc, sizeof(inc), "%lld", cluster_st.incarnation);
	p[0] = cluster_st.cf->node_name;
	p[1] = inc;
	p[2] = boot;
	p[3] = pid;
	p[4] = PACKAGE_VERSION;
	p[5] = cluster_st.ttl_ms;
	pgconn_query(
	    c, PGQ_SETUP, pg_node_register, 6, p, cluster_registered, NULL);
	p[0] = cluster_st.ttl_ms;
	pgconn_query(
	    c, PGQ_SETUP, pg_failover_guard, 1, p, cluster_guarded, NULL);
	pgconn_query(c, PGQ_SETUP | PGQ_SIMPLE, pg_listen, 0, NULL,
	    cluster_listening, NULL);
}

/*
 * A notification on the channel vigil.  Any role that can connect may
 * send one: it is only ever a hint to re-read vigil's own rows, never
 * news in itself.  "q JOB_ID": messages for a queue (its dispatcher
 * claims, one claim at a time); "lease JOB_ID INSTANCE": a lease given
 * back (a standby bids, one bid at a time); "held JOB_ID INSTANCE ...":
 * the operator's stop or start (its row is re-read; the rest of the text
 * is ignored).
 */
static void
cluster_notify(void *arg, const char *channel, const char *payload)
{
	struct lease_slot *s;
	long long job_id;
	int instance;

	(void)arg;
	(void)channel;
	if (sscanf(payload, "q %lld", &job_id) == 1) {
		if (job_id > 0) /* 0 would be every queue */
			cluster_queue_kick(job_id);
	} else if (sscanf(payload, "lease %lld %d", &job_id, &instance) == 2) {
		s = cluster_find(job_id, instance);
		if (s != NULL && s->want && s->st == LEASE_NONE &&
		    s->in->life.phase == LIFE_LEASE)
			cluster_acquire(s);
	} else if (sscanf(payload, "held %lld %d", &job_id, &instance) == 2)
		cluster_hold_hint(job_id, instance);
	else if (sscanf(payload, "ask %lld %d", &job_id, &instance) == 2) {
		s = cluster_find(job_id, instance);
		if (s != NULL && s->st == LEASE_HELD)
			cluster_requests_take();
	} else if (strncmp(payload, "answer ", 7) == 0)
		cluster_answers_check();
	else if (strncmp(payload, "drain ", 6) == 0 &&
	    strcmp(payload + 6, cluster_st.cf->node_name) == 0)
		cluster_renew_now(); /* a hint: the renew's answer says */
}

/*
 * The node row says whether this node is drained (at registration, at
 * each renew).  Drained: every cluster instance held here is handed over
 * (its run stops as for a fence, the lease goes back and wakes the
 * standbys, and the start waits as a standby that does not bid); no slot
 * is fired, no message claimed.  Undrained: bids and claims again.
 */
void
cluster_drained(int drained)
{
	struct lease_slot *s;
	unsigned int n = 0;

	if (drained == cluster_st.drained)
		return;
	cluster_st.drained = drained;
	if (!drained) {
		log_info(
		    "cluster: node %s undrained: taking cluster work again",
		    cluster_st.cf->node_name);
		cluster_acquire_all();
		cluster_queue_ready();
		return;
	}
	LIST_FOREACH(s, &cluster_st.slots, entry) {
		if (s->msg != 0)
			continue; /* a message finishes; no new one comes */
		if (s->want && s->st == LEASE_NONE &&
		    s->in->life.phase == LIFE_LEASE) {
			cluster_waiting(s, NULL);
			continue;
		}
		if (s->st != LEASE_HELD && s->st != LEASE_EXPIRED)
			continue;
		n++;
		inst_reason(s->in, "handed over: node %s is drained",
		    cluster_st.cf->node_name);
		inst_feed(s->in, LIFE_EV_FENCE);
	}
	log_info("cluster: node %s drained: %u cluster instance%s handed over; "
	         "no cluster work here until vigilctl cluster undrain",
	    cluster_st.cf->node_name, n, n == 1 ? "" : "s");
}

/* The lease connection is down: bids wait; held leases stay trusted. */
static void
cluster_down(void *arg, const char *why)
{
	struct lease_slot *s;

	cluster_st.seeding = 0;
	LIST_FOREACH(s, &cluster_st.slots, entry)
		if (s->want && s->st == LEASE_NONE &&
		    s->in->life.phase == LIFE_LEASE)
			cluster_waiting(s, why);
}

/* The cluster's timings and the node's identity. */
static void
cluster_identity(void)
{
	int fd;
	ssize_t n;
	uint64_t r;

	memset(cluster_st.boot_id, 0, sizeof(cluster_st.boot_id));
	if ((fd = open("/proc/sys/kernel/random/boot_id",
	         O_RDONLY | O_CLOEXEC)) != -1) {
		n = read(
		    fd, cluster_st.boot_id, sizeof(cluster_st.boot_id) - 1);
		if (n > 0 && cluster_st.boot_id[n - 1] == '\n')
			cluster_st.boot_id[n - 1] = '\0';
		close(fd);
	}
	if (cluster_st.boot_id[0] == '\0')
		strlcpy(
		    cluster_st.boot_id, "unknown", sizeof(cluster_st.boot_id));
	arc4random_buf(&r, sizeof(r));
	cluster_st.incarnation = (long long)(r >> 1);
}

/*
 * One conninfo of the cluster section, at line of vigil.conf (path):
 * what libpq refuses is an error; a password in a file that others may
 * read is a warning (passfile or PGPASSFILE are the way).
 */
static int
cluster_check_conninfo(const char *path, int line, const char *name,
    const char *conninfo, int exposed, char **cause)
{
	char *why = NULL;
	const char *p;
	int password;

	if (pgconn_check(conninfo, &password, &why) == -1) {
		p = strncmp(why, "cluster: conninfo: ", 19) == 0 ? why + 19 :
		                                                   why;
		xasprintf(cause, "%s:%d: cluster: %s: %s", path, line, name, p);
		free(why);
		return (-1);
	}
	if (password && exposed)
		log_warnx("%s:%d: cluster: %s holds a password and %s may be "
		          "read by others than its owner: use a password file "
		          "(passfile=... in the conninfo, or PGPASSFILE) of "
		          "mode 0600",
		    path, line, name, path);
	return (0);
}

/*
 * The cluster section as libpq reads it, the same for vigild -t as at
 * start: libpq, each conninfo.  0, or -1 with cause (naming file and
 * line).
 */
int
cluster_check(char **cause)
{
	const struct conf_cluster *cf = &vigild.conf->cluster;
	const char *path = vigild.conf->path != NULL ? vigild.conf->path : "-";
	struct stat st;
	int exposed;

	if (!cf->enabled)
		return (0);
	if (pq_load(cause) == -1)
		return (-1);
	exposed = vigild.conf->path == NULL ||
	    stat(vigild.conf->path, &st) == -1 ||
	    (st.st_mode & (S_IRGRP | S_IROTH)) != 0;
	if (cluster_check_conninfo(path, cf->conninfo_line, "conninfo",
	        cf->conninfo, exposed, cause) == -1)
		return (-1);
	if (cf->work_conninfo != NULL &&
	    cluster_check_conninfo(path, cf->work_conninfo_line,
	        "work_conninfo", cf->work_conninfo, exposed, cause) == -1)
		return (-1);
	return (0);
}

/*
 * At start-up, before the jobs start (after cluster_check): libpq, the keeper, the two
 * connections (they connect in the background; cluster jobs wait for
 * their leases, local jobs start at once).  0, or -1 with cause.
 */
int
cluster_open(char **cause)
{
	struct pgconn_cfg cfg;
	const struct conf_cluster *cf = &vigild.conf->cluster;

	if (!cf->enabled)
		return (0);
	/* cluster_check has been called (vigild.c). */
	if (pq_load(cause) == -1)
		return (-1);
	cluster_st.cf = cf;
	cluster_st.t.ttl = cf->lease_ttl;
	cluster_st.t.renew = cf->renew_interval;
	cluster_st.t.query_timeout = cf->query_timeout;
	cluster_st.t.margin = cf->fence_margin;
	snprintf(cluster_st.ttl_ms, sizeof(cluster_st.ttl_ms), "%llu",
	    (unsigned long long)(cf->lease_ttl / 1000));
	LIST_INIT(&cluster_st.slots);
	TAILQ_INIT(&cluster_st.releases);
	TAILQ_INIT(&cluster_st.outbox);
	cluster_identity();
	if (keeper_start(cluster_keeper_resend) == -1) {
		xasprintf(cause, "cluster: cannot start the fence keeper: %s",
		    strerror(errno));
		return (-1);
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.conninfo = cf->conninfo;
	cfg.connect_timeout = cf->connect_timeout;
	cfg.query_timeout = cf->query_timeout;
	cfg.retry_max = cf->renew_interval;
	cfg.connected = cluster_connected;
	cfg.notify = cluster_notify;
	cfg.down = cluster_down;
	cluster_st.lease = pgconn_new("lease", &cfg);
	cfg.notify = NULL;
	cfg.down = NULL;
	if (cf->work_conninfo != NULL)
		cfg.conninfo = cf->work_conninfo;
	cluster_st.work = pgconn_new("work", &cfg);
	/* pgconn_new connects at once; the callbacks know which one. */
	evloop_timer_in(&cluster_st.renew, CLOCK_BOOTTIME, cluster_st.t.renew,
	    1000, cluster_renew_tick, NULL);
	(void)sd_event_source_set_enabled(cluster_st.renew, SD_EVENT_ON);
	log_info("cluster: node %s, lease_ttl %llums, renew every %llums",
	    cf->node_name, (unsigned long long)(cf->lease_ttl / 1000),
	    (unsigned long long)(cf->renew_interval / 1000));
	return (0);
}

void
cluster_close(void)
{
	struct release *r;

	if (cluster_st.cf == NULL)
		return;
	keeper_stop();
	cluster_st.renew = sd_event_source_disable_unref(cluster_st.renew);
	cluster_st.shutdown_timer =
	    sd_event_source_disable_unref(cluster_st.shutdown_timer);
	pgconn_free(cluster_st.lease);
	pgconn_free(cluster_st.work);
	cluster_st.lease = cluster_st.work = NULL;
	cluster_st.watch = sd_event_source_disable_unref(cluster_st.watch);
	cluster_requests_close();
	while ((r = TAILQ_FIRST(&cluster_st.releases)) != NULL) {
		TAILQ_REMOVE(&cluster_st.releases, r, entry);
		free(r);
	}
	cluster_queue_close();
	pq_unload();
	cluster_st.cf = NULL;
}

#endif /* HAVE_LIBPQ */
