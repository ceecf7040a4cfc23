/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/* Host names looked up off the loop: see resolve.h. */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "evloop.h"
#include "resolve.h"
#include "xmalloc.h"

#define RESOLVE_POLL 5000ULL /* usec between looks at the lookups */
#define RESOLVE_ORPHANS 64

/*
 * Lookups still out when their resolve was cancelled: cancelled if they
 * can be, else left to end on their own and freed then (resolve_reap).
 */
static struct gaicb *resolve_orphans[RESOLVE_ORPHANS];

/* Is s an address libpq takes without a lookup (or a socket path)? */
int
resolve_is_address(const char *s)
{
	unsigned char buf[sizeof(struct in6_addr)];

	return (*s == '\0' || *s == '/' || *s == '@' ||
	    inet_pton(AF_INET, s, buf) == 1 ||
	    inet_pton(AF_INET6, s, buf) == 1);
}

/* A lookup that is over (or abandoned) is freed. */
static void
resolve_gai_free(struct gaicb *g)
{
	if (g->ar_result != NULL)
		freeaddrinfo(g->ar_result);
	free((char *)(uintptr_t)g->ar_name);
	free((void *)(uintptr_t)g->ar_request);
	free(g);
}

static void
resolve_reap(void)
{
	size_t i;

	for (i = 0; i < RESOLVE_ORPHANS; i++)
		if (resolve_orphans[i] != NULL &&
		    gai_error(resolve_orphans[i]) != EAI_INPROGRESS) {
			resolve_gai_free(resolve_orphans[i]);
			resolve_orphans[i] = NULL;
		}
}

/* Stop looking: the lookups out are cancelled, the answers forgotten. */
void
resolve_cancel(struct resolve *r)
{
	size_t i, k;

	r->poll = sd_event_source_disable_unref(r->poll);
	resolve_reap();
	for (i = 0; i < r->n; i++) {
		free(r->addrs[i]);
		r->addrs[i] = NULL;
		if (r->gai[i] == NULL)
			continue;
		if (gai_cancel(r->gai[i]) == EAI_CANCELED ||
		    gai_error(r->gai[i]) != EAI_INPROGRESS)
			resolve_gai_free(r->gai[i]);
		else {
			for (k = 0;
			     k < RESOLVE_ORPHANS && resolve_orphans[k] != NULL;
			     k++)
				;
			if (k < RESOLVE_ORPHANS)
				resolve_orphans[k] = r->gai[i];
			/* else: leaked rather than freed while in use */
		}
		r->gai[i] = NULL;
	}
	r->n = 0;
}

/* The answer of lookup i, as text: into r->addrs[i].  0, or an EAI_*. */
static int
resolve_take(struct resolve *r, size_t i)
{
	const struct addrinfo *ai = r->gai[i]->ar_result;
	char buf[INET6_ADDRSTRLEN];
	int e = gai_error(r->gai[i]);

	if (e != 0 || ai == NULL)
		return (e != 0 ? e : EAI_NONAME);
	if (ai->ai_family == AF_INET6)
		inet_ntop(AF_INET6,
		    &((const struct sockaddr_in6 *)(const void *)ai->ai_addr)
		         ->sin6_addr,
		    buf, sizeof(buf));
	else
		inet_ntop(AF_INET,
		    &((const struct sockaddr_in *)(const void *)ai->ai_addr)
		         ->sin_addr,
		    buf, sizeof(buf));
	r->addrs[i] = xstrdup(buf);
	resolve_gai_free(r->gai[i]);
	r->gai[i] = NULL;
	return (0);
}

/* The lookups are looked at: all done, one failed, or again soon. */
static int
resolve_polled(sd_event_source *src, uint64_t usec, void *arg)
{
	struct resolve *r = arg;
	char *m;
	size_t i;
	int e, out = 0;

	for (i = 0; i < r->n; i++) {
		if (r->gai[i] == NULL)
			continue;
		if (gai_error(r->gai[i]) == EAI_INPROGRESS) {
			out = 1;
			continue;
		}
		if ((e = resolve_take(r, i)) != 0) {
			xasprintf(
			    &m, "host %s: %s", r->names[i], gai_strerror(e));
			r->done(r->arg, m);
			free(m);
			return (0);
		}
	}
	if (out) {
		(void)sd_event_source_set_time(src, usec + RESOLVE_POLL);
		(void)sd_event_source_set_enabled(src, SD_EVENT_ONESHOT);
		return (0);
	}
	r->poll = sd_event_source_disable_unref(r->poll);
	r->done(r->arg, NULL);
	return (0);
}

/* Start the lookup of name, the ith.  0, or an EAI_* error. */
static int
resolve_one(struct resolve *r, size_t i, const char *name)
{
	struct addrinfo *hints;
	int e;

	hints = xcalloc(1, sizeof(*hints));
	hints->ai_socktype = SOCK_STREAM;
	r->gai[i] = xcalloc(1, sizeof(*r->gai[i]));
	r->gai[i]->ar_name = xstrdup(name);
	r->gai[i]->ar_request = hints;
	if ((e = getaddrinfo_a(GAI_NOWAIT, &r->gai[i], 1, NULL)) != 0) {
		resolve_gai_free(r->gai[i]);
		r->gai[i] = NULL;
	}
	return (e);
}

/*
 * Look up names[0..n) (n <= RESOLVE_MAX; they must last until done).  An
 * address or a socket path needs no lookup.  Return 0: done(arg, err)
 * comes once, unless cancelled first; 1: no name needs a lookup (no
 * call, no answer); -1 with *err: a lookup could not start.
 */
int
resolve_start(struct resolve *r, char *const *names, size_t n,
    resolve_done_fn *done, void *arg, char **err)
{
	size_t i;
	int any = 0, e;

	resolve_cancel(r);
	for (i = 0; i < n; i++)
		any |= !resolve_is_address(names[i]);
	if (!any)
		return (1);
	r->n = n;
	r->done = done;
	r->arg = arg;
	for (i = 0; i < n; i++) {
		r->names[i] = names[i];
		if (resolve_is_address(names[i])) {
			/* a socket path takes no address */
			r->addrs[i] = xstrdup(
			    *names[i] == '/' || *names[i] == '@' ? "" :
			                                           names[i]);
		} else if ((e = resolve_one(r, i, names[i])) != 0) {
			xasprintf(
			    err, "host %s: %s", names[i], gai_strerror(e));
			resolve_cancel(r);
			return (-1);
		}
	}
	evloop_timer_in(
	    &r->poll, CLOCK_BOOTTIME, RESOLVE_POLL, 1000, resolve_polled, r);
	return (0);
}

/* The answers as libpq's hostaddr: "A,B,C", or NULL if none were had. */
char *
resolve_hostaddr(const struct resolve *r)
{
	char *s;
	size_t i, len = 0;

	if (r->n == 0 || r->addrs[0] == NULL)
		return (NULL);
	for (i = 0; i < r->n; i++)
		len += strlen(r->addrs[i] != NULL ? r->addrs[i] : "") + 1;
	s = xcalloc(1, len + 1);
	for (i = 0; i < r->n; i++) {
		if (i > 0)
			strlcat(s, ",", len + 1);
		if (r->addrs[i] != NULL)
			strlcat(s, r->addrs[i], len + 1);
	}
	return (s);
}
