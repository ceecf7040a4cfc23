/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * A connection to PostgreSQL on vigild's loop, never blocking it: libpq's
 * asynchronous calls only (PQconnectStartParams and PQconnectPoll, then
 * PQsendQuery(Params), PQflush, PQconsumeInput, PQgetResult, PQnotifies)
 * on a non-blocking socket watched by sd-event.  A queue of requests, one
 * on the wire at a time; the query timeout is armed when a request is
 * sent (never before: a frozen peer is found one timeout after the send);
 * past it, or on any error of the connection, the connection is dropped,
 * every request waiting fails, and a new connection follows, soon at
 * first, then more and more slowly.  The timers are on CLOCK_BOOTTIME.
 *
 * libpq is opened (dlopen) when the first connection is made: a vigild
 * without a cluster section neither maps it nor what it brings (OpenSSL,
 * Kerberos, LDAP; pq.c).  Host names in the conninfo are resolved before
 * each connection, off the loop (resolve.c), and given to libpq as
 * hostaddr: libpq itself would resolve them with a blocking getaddrinfo.
 */

#include "config.h"

#ifdef HAVE_LIBPQ

#include <sys/types.h>

#include <bsd/sys/queue.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

#include "cluster.h"
#include "evloop.h"
#include "log.h"
#include "pq.h"
#include "resolve.h"
#include "xmalloc.h"

#define PGCONN_RETRY_MIN 100000ULL /* the first reconnection delay, usec */
#define PGCONN_MAX_HOSTS RESOLVE_MAX

/* What a request's callback reads through pgres_*(). */
struct pgres {
	PGresult *res;
};

/* One request: its statement, its parameters, what is done with the answer. */
struct pgreq {
	TAILQ_ENTRY(pgreq) entry;
	int flags; /* PGQ_* */
	char *sql; /* owned */
	int nparams;
	char **params; /* owned, each may be NULL (SQL NULL) */
	pgconn_done_fn done;
	void *arg;
	uint64_t sent; /* CLOCK_BOOTTIME usec of the send, 0: not yet */
};
TAILQ_HEAD(pgreq_list, pgreq);

enum pgconn_state {
	PGCONN_DOWN = 0,   /* no connection; retry armed */
	PGCONN_RESOLVING,  /* host names being resolved */
	PGCONN_CONNECTING, /* PQconnectPoll under way */
	PGCONN_SETUP,      /* connected: only PGQ_SETUP requests go */
	PGCONN_READY,      /* everything goes */
};

struct pgconn {
	char *name; /* "lease", "work": for messages */
	struct pgconn_cfg cfg;
	enum pgconn_state state;
	PGconn *pg;
	int fd;
	sd_event_source *io;
	sd_event_source *timer; /* connect or query timeout */
	sd_event_source *retry; /* the next connection */
	uint64_t retry_delay;   /* usec, doubled up to cfg.retry_max */
	struct pgreq_list reqs; /* the first is on the wire when busy */
	int busy;               /* a request was sent, not answered */
	PGresult *res;          /* its answer so far */
	char *err;              /* its error so far */
	int want_write;         /* PQflush left data to send */
	unsigned int fails;     /* connections failed in a row */
	char *why;              /* why the last one failed, or NULL */
	/* the hosts of the conninfo, and their lookups (resolve.c) */
	char *hosts[PGCONN_MAX_HOSTS]; /* the names */
	size_t nhosts;
	int has_hostaddr; /* the conninfo gives hostaddr itself */
	struct resolve lookup;
	int closing; /* pgconn_free: nothing new, nothing again */
};

static void pgconn_connect(struct pgconn *);
static void pgconn_send_next(struct pgconn *);
static void pgconn_watch(struct pgconn *, uint32_t);

/* CLOCK_BOOTTIME now, usec. */
uint64_t
pgconn_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ((uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000);
}

/*
 * Check a conninfo without connecting (PQconninfoParse is pure): 0, or -1
 * with cause.  *password: whether it holds a password (not NULL).
 */
int
pgconn_check(const char *conninfo, int *password, char **cause)
{
	PQconninfoOption *opts, *o;
	char *err = NULL;

	if (pq_load(cause) == -1)
		return (-1);
	if ((opts = pq.PQconninfoParse(conninfo, &err)) == NULL) {
		xasprintf(cause, "cluster: conninfo: %s",
		    err != NULL ? err : "out of memory");
		if (err != NULL)
			pq.PQfreemem(err);
		return (-1);
	}
	*password = 0;
	for (o = opts; o->keyword != NULL; o++)
		if (strcmp(o->keyword, "password") == 0 && o->val != NULL &&
		    o->val[0] != '\0')
			*password = 1;
	for (o = opts; o->keyword != NULL; o++)
		if (strcmp(o->keyword, "host") == 0 && o->val != NULL &&
		    strchr(o->val, ',') != NULL) {
			size_t n = 1;
			const char *p;

			for (p = o->val; *p != '\0'; p++)
				n += *p == ',';
			if (n > PGCONN_MAX_HOSTS) {
				xasprintf(cause,
				    "cluster: conninfo: more than %d hosts",
				    PGCONN_MAX_HOSTS);
				pq.PQconninfoFree(opts);
				return (-1);
			}
		}
	pq.PQconninfoFree(opts);
	return (0);
}

/* ---- requests ---- */

static void
pgreq_free(struct pgreq *r)
{
	int i;

	for (i = 0; i < r->nparams; i++)
		free(r->params[i]);
	free(r->params);
	free(r->sql);
	free(r);
}

/* Answer request r (res NULL: failed with err) and free it. */
static void
pgreq_finish(struct pgconn *c, struct pgreq *r, PGresult *res, const char *err)
{
	struct pgres pr;

	TAILQ_REMOVE(&c->reqs, r, entry);
	pr.res = res;
	if (r->done != NULL)
		r->done(r->arg, res != NULL ? &pr : NULL, err, r->sent);
	pgreq_free(r);
}

/*
 * Queue a statement.  flags: PGQ_FRONT (before whatever waits: a renew),
 * PGQ_SETUP (may go before the connection is ready: the set-up of a new
 * session), PGQ_SIMPLE (several statements, no parameters: the simple
 * query protocol).  done is called once, with the answer or an error.
 */
void
pgconn_query(struct pgconn *c, int flags, const char *sql, int nparams,
    const char *const *params, pgconn_done_fn done, void *arg)
{
	struct pgreq *r, *first;
	int i;

	if (c->closing) {
		if (done != NULL)
			done(arg, NULL, "closed", 0);
		return;
	}
	r = xcalloc(1, sizeof(*r));
	r->flags = flags;
	r->sql = xstrdup(sql);
	r->nparams = nparams;
	if (nparams > 0) {
		r->params = xcalloc((size_t)nparams, sizeof(char *));
		for (i = 0; i < nparams; i++)
			r->params[i] =
			    params[i] != NULL ? xstrdup(params[i]) : NULL;
	}
	r->done = done;
	r->arg = arg;
	/*
	 * Set-up goes after the set-up queued and the request on the wire,
	 * before anything else; PGQ_FRONT goes after those too.
	 */
	if (flags & (PGQ_SETUP | PGQ_FRONT)) {
		first = TAILQ_FIRST(&c->reqs);
		while (first != NULL &&
		    (first->sent != 0 || (first->flags & PGQ_SETUP)))
			first = TAILQ_NEXT(first, entry);
		if (first != NULL)
			TAILQ_INSERT_BEFORE(first, r, entry);
		else
			TAILQ_INSERT_TAIL(&c->reqs, r, entry);
	} else
		TAILQ_INSERT_TAIL(&c->reqs, r, entry);
	pgconn_send_next(c);
}

/* How many requests wait or are on the wire. */
size_t
pgconn_pending(const struct pgconn *c)
{
	const struct pgreq *r;
	size_t n = 0;

	TAILQ_FOREACH(r, &c->reqs, entry)
		n++;
	return (n);
}

int
pgconn_is_ready(const struct pgconn *c)
{
	return (c != NULL && c->state == PGCONN_READY);
}

/* The connection's set-up is done: everything may go now. */
void
pgconn_set_ready(struct pgconn *c)
{
	if (c->state != PGCONN_SETUP)
		return;
	c->state = PGCONN_READY;
	c->fails = 0;
	c->retry_delay = 0;
	free(c->why);
	c->why = NULL;
	c->timer = sd_event_source_disable_unref(c->timer);
	pgconn_send_next(c);
}

/* Why the connection is not ready, or NULL. */
const char *
pgconn_why(const struct pgconn *c)
{
	return (c != NULL ? c->why : NULL);
}

/* ---- the answer ---- */

int
pgres_ntuples(const struct pgres *r)
{
	return (pq.PQntuples(r->res));
}

/* The value at (row, col) as text, or NULL for SQL NULL. */
const char *
pgres_value(const struct pgres *r, int row, int col)
{
	if (row >= pq.PQntuples(r->res) || col >= pq.PQnfields(r->res) ||
	    pq.PQgetisnull(r->res, row, col))
		return (NULL);
	return (pq.PQgetvalue(r->res, row, col));
}

/* The value at (row, col) as a boolean: 1 for true, 0 else (NULL too). */
int
pgres_bool(const struct pgres *r, int row, int col)
{
	const char *s = pgres_value(r, row, col);

	return (s != NULL && strcmp(s, "t") == 0);
}

/* The value at (row, col) as a number, or def for NULL or garbage. */
long long
pgres_int(const struct pgres *r, int row, int col, long long def)
{
	const char *s = pgres_value(r, row, col);
	char *end;
	long long v;

	if (s == NULL)
		return (def);
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0')
		return (def);
	return (v);
}

/*
 * A message of libpq on one line (its lines joined by "; ", no "ERROR:"
 * prefix), into an owned string.
 */
static char *
pgconn_msg(const char *s)
{
	char *m, *out;
	size_t len = 0;

	if (s == NULL || *s == '\0')
		s = "unknown error";
	if (strncmp(s, "ERROR:  ", 8) == 0)
		s += 8;
	out = m = xmalloc(2 * strlen(s) + 1);
	for (; *s != '\0'; s++) {
		if (*s == '\n' || *s == '\t') {
			while (s[1] == '\n' || s[1] == '\t' || s[1] == ' ')
				s++;
			if (s[1] != '\0' && len > 0) {
				out[len++] = ';';
				out[len++] = ' ';
			}
			continue;
		}
		out[len++] = *s;
	}
	while (len > 0 && out[len - 1] == ' ')
		len--;
	out[len] = '\0';
	return (m);
}

/* ---- connection ---- */

/* The timer of the connection: connect or query timeout, relative. */
static int pgconn_timeout(sd_event_source *, uint64_t, void *);

static void
pgconn_timer_arm(struct pgconn *c, uint64_t usec)
{
	evloop_timer_in(
	    &c->timer, CLOCK_BOOTTIME, usec, 1000, pgconn_timeout, c);
}

static void
pgconn_timer_stop(struct pgconn *c)
{
	if (c->timer != NULL)
		(void)sd_event_source_set_enabled(c->timer, SD_EVENT_OFF);
}

static int
pgconn_retry_cb(sd_event_source *s, uint64_t usec, void *arg)
{
	struct pgconn *c = arg;

	c->retry = sd_event_source_disable_unref(c->retry);
	pgconn_connect(c);
	return (0);
}

/*
 * Drop the connection: every request fails with why, the next connection
 * is armed (soon the first time, then more and more slowly).
 */
void
pgconn_drop(struct pgconn *c, const char *why)
{
	struct pgreq *r;
	enum pgconn_state was = c->state;

	if (was == PGCONN_DOWN || c->closing)
		return;
	if (c->why == NULL || strcmp(c->why, why) != 0) {
		if (was >= PGCONN_SETUP)
			log_warnx(
			    "cluster: %s connection lost: %s", c->name, why);
		else
			log_warnx(
			    "cluster: %s connection failed: %s", c->name, why);
	}
	xsetf(&c->why, "%s", why);
	c->io = sd_event_source_disable_unref(c->io);
	pgconn_timer_stop(c);
	resolve_cancel(&c->lookup);
	if (c->res != NULL)
		pq.PQclear(c->res);
	c->res = NULL;
	free(c->err);
	c->err = NULL;
	if (c->pg != NULL)
		pq.PQfinish(c->pg); /* non-blocking: never waits */
	c->pg = NULL;
	c->fd = -1;
	c->busy = 0;
	c->want_write = 0;
	c->state = PGCONN_DOWN;
	c->fails++;
	while ((r = TAILQ_FIRST(&c->reqs)) != NULL)
		pgreq_finish(c, r, NULL, why);
	if (c->cfg.down != NULL)
		c->cfg.down(c->cfg.arg, why);
	if (c->state != PGCONN_DOWN || c->retry != NULL)
		return; /* the callback connected again */
	evloop_timer_in(&c->retry, CLOCK_BOOTTIME, c->retry_delay, 1000,
	    pgconn_retry_cb, c);
	c->retry_delay =
	    c->retry_delay == 0 ? PGCONN_RETRY_MIN : c->retry_delay * 2;
	if (c->retry_delay > c->cfg.retry_max)
		c->retry_delay = c->cfg.retry_max;
}

static int
pgconn_timeout(sd_event_source *s, uint64_t usec, void *arg)
{
	struct pgconn *c = arg;

	pgconn_drop(c,
	    c->state == PGCONN_READY && c->busy ?
	        "query timeout: no answer in time" :
	        "connect timeout");
	return (0);
}

/* Notifications that came with the input. */
static void
pgconn_notifies(struct pgconn *c)
{
	PGnotify *n;

	while (c->pg != NULL && (n = pq.PQnotifies(c->pg)) != NULL) {
		if (c->cfg.notify != NULL)
			c->cfg.notify(c->cfg.arg, n->relname, n->extra);
		pq.PQfreemem(n);
	}
}

/* Results of the request on the wire, as they come. */
static void
pgconn_results(struct pgconn *c)
{
	struct pgreq *r;
	PGresult *res;
	ExecStatusType st;
	char *err;

	while (c->pg != NULL && c->busy && !pq.PQisBusy(c->pg)) {
		if ((res = pq.PQgetResult(c->pg)) != NULL) {
			st = pq.PQresultStatus(res);
			if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK &&
			    c->err == NULL)
				c->err =
				    pgconn_msg(pq.PQresultErrorMessage(res));
			if (c->res != NULL)
				pq.PQclear(c->res);
			c->res = res; /* the last statement's answer */
			continue;
		}
		/* NULL: the request's answer is complete. */
		r = TAILQ_FIRST(&c->reqs);
		res = c->res;
		err = c->err;
		c->res = NULL;
		c->err = NULL;
		c->busy = 0;
		pgconn_timer_stop(c);
		if (err != NULL)
			pgreq_finish(c, r, NULL, err);
		else
			pgreq_finish(c, r, res, NULL);
		if (res != NULL)
			pq.PQclear(res);
		free(err);
		pgconn_send_next(c);
	}
}

/* Send what libpq holds; keep EPOLLOUT while some is left. */
static int
pgconn_flush(struct pgconn *c)
{
	int r = pq.PQflush(c->pg);

	if (r == -1) {
		char *m = pgconn_msg(pq.PQerrorMessage(c->pg));

		pgconn_drop(c, m);
		free(m);
		return (-1);
	}
	if ((r == 1) != c->want_write) {
		c->want_write = r == 1;
		pgconn_watch(c, EPOLLIN | (c->want_write ? EPOLLOUT : 0));
	}
	return (0);
}

/* Send the first request if none is on the wire and it may go. */
static void
pgconn_send_next(struct pgconn *c)
{
	struct pgreq *r = TAILQ_FIRST(&c->reqs);
	int ok;

	if (r == NULL || c->busy || c->pg == NULL ||
	    (c->state != PGCONN_READY &&
	        !(c->state == PGCONN_SETUP && (r->flags & PGQ_SETUP))))
		return;
	if (r->flags & PGQ_SIMPLE)
		ok = pq.PQsendQuery(c->pg, r->sql);
	else
		ok = pq.PQsendQueryParams(c->pg, r->sql, r->nparams, NULL,
		    (const char *const *)r->params, NULL, NULL, 0);
	if (!ok) {
		char *m = pgconn_msg(pq.PQerrorMessage(c->pg));

		pgconn_drop(c, m);
		free(m);
		return;
	}
	c->busy = 1;
	r->sent = pgconn_now();
	/* The timeout runs from the send (after it, never before). */
	if (c->state == PGCONN_READY)
		pgconn_timer_arm(c, c->cfg.query_timeout);
	(void)pgconn_flush(c);
}

/*
 * The set-up may take usec from now, not the connect timeout: the first
 * one makes the schema, after the other nodes' (an advisory lock).
 */
void
pgconn_setup_budget(struct pgconn *c, uint64_t usec)
{
	if (c->state == PGCONN_SETUP)
		pgconn_timer_arm(c, usec);
}

static int pgconn_io(sd_event_source *, int, uint32_t, void *);

/* Watch the connection's socket for events (it may change: multi-host). */
static void
pgconn_watch(struct pgconn *c, uint32_t events)
{
	int fd = pq.PQsocket(c->pg);

	if (fd != c->fd)
		c->io = sd_event_source_disable_unref(c->io);
	c->fd = fd;
	if (fd < 0)
		return;
	if (c->io != NULL) {
		(void)sd_event_source_set_io_events(c->io, events);
		return;
	}
	evloop_io(&c->io, fd, events, pgconn_io, c);
}

/* One step of PQconnectPoll; connected: the set-up. */
static void
pgconn_poll(struct pgconn *c)
{
	char *m;

	switch (pq.PQconnectPoll(c->pg)) {
	case PGRES_POLLING_READING:
		pgconn_watch(c, EPOLLIN);
		return;
	case PGRES_POLLING_WRITING:
		pgconn_watch(c, EPOLLOUT);
		return;
	case PGRES_POLLING_OK:
		break;
	default:
		m = pgconn_msg(pq.PQerrorMessage(c->pg));
		pgconn_drop(c, m);
		free(m);
		return;
	}
	if (pq.PQsetnonblocking(c->pg, 1) == -1) {
		pgconn_drop(c, "cannot make the connection non-blocking");
		return;
	}
	c->state = PGCONN_SETUP;
	c->want_write = 0;
	pgconn_watch(c, EPOLLIN);
	log_info("cluster: %s connection up (%s)", c->name,
	    pq.PQhost(c->pg) != NULL ? pq.PQhost(c->pg) : "?");
	if (c->cfg.connected != NULL)
		c->cfg.connected(c->cfg.arg);
	else
		pgconn_set_ready(c);
}

static int
pgconn_io(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	struct pgconn *c = arg;
	char *m;

	if (c->state == PGCONN_CONNECTING) {
		pgconn_poll(c);
		return (0);
	}
	if ((revents & EPOLLOUT) && pgconn_flush(c) == -1)
		return (0);
	if (revents & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
		if (!pq.PQconsumeInput(c->pg)) {
			m = pgconn_msg(pq.PQerrorMessage(c->pg));
			pgconn_drop(c, m);
			free(m);
			return (0);
		}
		pgconn_results(c);
		pgconn_notifies(c);
	}
	return (0);
}

/* A notice of the server (or of libpq), at debug level. */
static void
pgconn_notice(void *arg, const char *message)
{
	struct pgconn *c = arg;
	char *m = pgconn_msg(message);

	log_debug("cluster: %s connection: %s", c->name, m);
	free(m);
}

/* Start the connection, with the addresses found for the host names. */
static void
pgconn_start(struct pgconn *c)
{
	const char *keys[4], *vals[4];
	char *hostaddr = resolve_hostaddr(&c->lookup);
	int n = 0;

	keys[n] = "dbname";
	vals[n++] = c->cfg.conninfo;
	keys[n] = "fallback_application_name";
	vals[n++] = "vigild";
	if (hostaddr != NULL) {
		keys[n] = "hostaddr";
		vals[n++] = hostaddr;
	}
	keys[n] = NULL;
	vals[n] = NULL;
	c->state = PGCONN_CONNECTING;
	c->pg = pq.PQconnectStartParams(keys, vals, 1);
	free(hostaddr);
	if (c->pg == NULL) {
		pgconn_drop(c, "out of memory");
		return;
	}
	/* The server's notices go to vigild's log, not to its stderr. */
	(void)pq.PQsetNoticeProcessor(c->pg, pgconn_notice, c);
	if (pq.PQstatus(c->pg) == CONNECTION_BAD) {
		char *m = pgconn_msg(pq.PQerrorMessage(c->pg));

		pgconn_drop(c, m);
		free(m);
		return;
	}
	pgconn_watch(c, EPOLLOUT);
	pgconn_poll(c);
}

/* The host names are looked up (err NULL), or one could not be. */
static void
pgconn_resolved(void *arg, const char *err)
{
	struct pgconn *c = arg;

	if (err != NULL)
		pgconn_drop(c, err);
	else
		pgconn_start(c);
}

/*
 * The hosts of the conninfo: those that are names are looked up off the
 * loop; addresses and socket paths stand for themselves.
 */
static void
pgconn_hosts(struct pgconn *c)
{
	PQconninfoOption *opts, *o;
	char *err = NULL, *list = NULL, *p, *h;

	for (; c->nhosts > 0; c->nhosts--)
		free(c->hosts[c->nhosts - 1]);
	c->has_hostaddr = 0;
	if ((opts = pq.PQconninfoParse(c->cfg.conninfo, &err)) == NULL) {
		if (err != NULL)
			pq.PQfreemem(err);
		return; /* libpq will say why */
	}
	for (o = opts; o->keyword != NULL; o++) {
		if (strcmp(o->keyword, "hostaddr") == 0 && o->val != NULL &&
		    *o->val != '\0')
			c->has_hostaddr = 1;
		if (strcmp(o->keyword, "host") == 0 && o->val != NULL)
			list = xstrdup(o->val);
	}
	pq.PQconninfoFree(opts);
	if (list == NULL || c->has_hostaddr) {
		free(list);
		return;
	}
	for (p = list;
	     (h = strsep(&p, ",")) != NULL && c->nhosts < PGCONN_MAX_HOSTS;)
		c->hosts[c->nhosts++] = xstrdup(h);
	free(list);
}

/* Begin a connection: look the names up first if there are any. */
static void
pgconn_connect(struct pgconn *c)
{
	char *m = NULL;
	int r;

	if (c->state != PGCONN_DOWN)
		return;
	c->retry = sd_event_source_disable_unref(c->retry);
	pgconn_timer_arm(c, c->cfg.connect_timeout);
	r = resolve_start(
	    &c->lookup, c->hosts, c->nhosts, pgconn_resolved, c, &m);
	if (r == 1) {
		pgconn_start(c); /* nothing to look up: no hostaddr */
		return;
	}
	c->state = PGCONN_RESOLVING;
	if (r == -1) {
		pgconn_drop(c, m);
		free(m);
	}
}

/* A new connection to the database of cfg; it connects from the loop. */
struct pgconn *
pgconn_new(const char *name, const struct pgconn_cfg *cfg)
{
	struct pgconn *c = xcalloc(1, sizeof(*c));

	c->name = xstrdup(name);
	c->cfg = *cfg;
	c->cfg.conninfo = xstrdup(cfg->conninfo);
	if (c->cfg.arg == NULL)
		c->cfg.arg = c; /* the callbacks' argument: the connection */
	c->fd = -1;
	TAILQ_INIT(&c->reqs);
	pgconn_hosts(c);
	c->state = PGCONN_DOWN;
	/* From the loop, so that the caller has its pointer first. */
	evloop_timer_in(&c->retry, CLOCK_BOOTTIME, 0, 0, pgconn_retry_cb, c);
	return (c);
}

void
pgconn_free(struct pgconn *c)
{
	struct pgreq *r;
	size_t i;

	if (c == NULL)
		return;
	c->cfg.down = NULL;
	c->cfg.notify = NULL;
	c->closing = 1;
	/*
	 * Each request's owner frees what it gave with it.  The analyzer
	 * takes the callback for one that may free the list's head.
	 */
	while ((r = TAILQ_FIRST(&c->reqs)) != NULL)
		/* NOLINTNEXTLINE(clang-analyzer-unix.Malloc) */
		pgreq_finish(c, r, NULL, "closed");
	resolve_cancel(&c->lookup);
	c->io = sd_event_source_disable_unref(c->io);
	c->timer = sd_event_source_disable_unref(c->timer);
	c->retry = sd_event_source_disable_unref(c->retry);
	if (c->res != NULL)
		pq.PQclear(c->res);
	if (c->pg != NULL)
		pq.PQfinish(c->pg);
	for (i = 0; i < c->nhosts; i++)
		free(c->hosts[i]);
	free(c->err);
	free(c->why);
	free(c->cfg.conninfo);
	free(c->name);
	free(c);
}

#endif /* HAVE_LIBPQ */
