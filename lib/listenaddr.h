/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The address of a listening socket as vigil.conf writes it (http_listen):
 * "unix:/path", "IPV4:PORT", "[IPV6]:PORT" or "localhost:PORT".  Numeric
 * addresses only (no name lookup at start); port 0 lets the kernel choose.
 * And which Host headers a request to such a socket may carry
 * (http_allowed_hosts).
 */

#ifndef VIGIL_LISTENADDR_H
#define VIGIL_LISTENADDR_H

#include <sys/types.h>
#include <sys/socket.h>

struct listen_addr {
	struct sockaddr_storage ss; /* AF_INET, AF_INET6 or AF_UNIX */
	socklen_t len;
};

int listen_addr_parse(const char *, struct listen_addr *, char **);
char *listen_addr_format(const struct sockaddr *, socklen_t, char *, size_t);
int listen_addr_host_valid(const char *);
int listen_addr_host_allowed(const char *, char *const *);

#endif
