/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

#ifndef VIGIL_PQ_H
#define VIGIL_PQ_H

#ifdef HAVE_LIBPQ

#include <libpq-fe.h>

/*
 * libpq, opened (dlopen) when cluster mode first connects (pq.c): a
 * vigild without a cluster section neither maps it nor what it brings
 * (OpenSSL, Kerberos, LDAP).  pq.PQfoo is libpq's PQfoo.
 */
/* The functions of libpq used, found in the library opened. */
#define PQ_FUNCS(X)                                                            \
	X(PQclear)                                                             \
	X(PQconninfoFree)                                                      \
	X(PQconninfoParse)                                                     \
	X(PQconnectPoll)                                                       \
	X(PQconnectStartParams)                                                \
	X(PQconsumeInput)                                                      \
	X(PQerrorMessage)                                                      \
	X(PQfinish)                                                            \
	X(PQflush)                                                             \
	X(PQfreemem)                                                           \
	X(PQgetResult)                                                         \
	X(PQgetisnull)                                                         \
	X(PQgetvalue)                                                          \
	X(PQhost)                                                              \
	X(PQisBusy)                                                            \
	X(PQnfields)                                                           \
	X(PQnotifies)                                                          \
	X(PQntuples)                                                           \
	X(PQresultErrorMessage)                                                \
	X(PQresultStatus)                                                      \
	X(PQsendQuery)                                                         \
	X(PQsendQueryParams)                                                   \
	X(PQsetNoticeProcessor)                                                \
	X(PQsetnonblocking)                                                    \
	X(PQsocket)                                                            \
	X(PQstatus)

struct pq_lib {
	void *dl;
/* A declarator cannot be parenthesized: f is a name here. */
/* NOLINTNEXTLINE(bugprone-macro-parentheses) */
#define PQ_FIELD(f) __typeof__(f) *f;
	PQ_FUNCS(PQ_FIELD)
#undef PQ_FIELD
};
extern struct pq_lib pq;

int pq_load(char **);
void pq_unload(void);

#endif /* HAVE_LIBPQ */

#endif
