/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/* libpq opened on demand: see pq.h. */

#include "config.h"

#ifdef HAVE_LIBPQ

#include <dlfcn.h>
#include <stddef.h>

#include "pq.h"
#include "xmalloc.h"

struct pq_lib pq;

/* Open libpq and find its functions.  Return 0, or -1 with cause. */
int
pq_load(char **cause)
{
	const char *name = "";

	if (pq.dl != NULL)
		return (0);
	/*
	 * Never unmapped: libpq's libraries (OpenSSL, Kerberos) keep
	 * thread-local data that LeakSanitizer scans at exit.
	 */
	if ((pq.dl = dlopen(
	         PQ_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)) == NULL) {
		xasprintf(cause,
		    "cluster: %s (cluster mode needs libpq: apt install "
		    "libpq5)",
		    dlerror());
		return (-1);
	}
#define PQ_LOAD(f)                                                             \
	if ((pq.f = (__typeof__(f) *)dlsym(pq.dl, #f)) == NULL)                \
		name = #f;
	PQ_FUNCS(PQ_LOAD)
#undef PQ_LOAD
	if (*name != '\0') {
		xasprintf(cause, "cluster: %s: no %s", PQ_SONAME, name);
		dlclose(pq.dl);
		pq.dl = NULL;
		return (-1);
	}
	return (0);
}

void
pq_unload(void)
{
	if (pq.dl != NULL)
		dlclose(pq.dl);
	pq.dl = NULL;
}

#endif /* HAVE_LIBPQ */
