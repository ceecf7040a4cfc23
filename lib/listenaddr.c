/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <netinet/in.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "listenaddr.h"
#include "xmalloc.h"

/* The longest name a Host header or http_allowed_hosts may give. */
#define LISTEN_ADDR_HOST_MAX 253

/* A port: 0 to 65535, decimal digits only. */
static int
listen_addr_port(const char *s, in_port_t *port)
{
	unsigned long v = 0;

	if (*s == '\0' || strlen(s) > 5)
		return (-1);
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return (-1);
		v = v * 10 + (unsigned long)(*s - '0');
	}
	if (v > 65535)
		return (-1);
	*port = htons((in_port_t)v);
	return (0);
}

static int
listen_addr_unix(const char *path, struct listen_addr *a, char **cause)
{
	struct sockaddr_un *sun = (struct sockaddr_un *)&a->ss;

	if (path[0] != '/') {
		xasprintf(cause, "\"unix:%s\": not an absolute path", path);
		return (-1);
	}
	if (strlen(path) >= sizeof(sun->sun_path)) {
		xasprintf(cause, "\"unix:%s\": path longer than %zu bytes",
		    path, sizeof(sun->sun_path) - 1);
		return (-1);
	}
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path, path, strlen(path) + 1);
	a->len = (socklen_t)sizeof(*sun);
	return (0);
}

/*
 * Parse s into a.  Return 0, or -1 with *cause set (the text says what
 * is wrong and what is accepted).
 */
int
listen_addr_parse(const char *s, struct listen_addr *a, char **cause)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&a->ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&a->ss;
	const char *colon;
	char host[INET6_ADDRSTRLEN + 2];
	size_t hlen;
	in_port_t port;

	memset(a, 0, sizeof(*a));
	if (strncmp(s, "unix:", 5) == 0)
		return (listen_addr_unix(s + 5, a, cause));
	if ((colon = strrchr(s, ':')) == NULL ||
	    listen_addr_port(colon + 1, &port) == -1)
		goto bad;
	hlen = (size_t)(colon - s);
	if (hlen == 0 || hlen >= sizeof(host))
		goto bad;
	memcpy(host, s, hlen);
	host[hlen] = '\0';
	if (host[0] == '[') {
		if (hlen < 3 || host[hlen - 1] != ']')
			goto bad;
		host[hlen - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &sin6->sin6_addr) != 1)
			goto bad;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = port;
		a->len = (socklen_t)sizeof(*sin6);
		return (0);
	}
	if (strcmp(host, "localhost") == 0)
		strlcpy(host, "127.0.0.1", sizeof(host));
	if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
		goto bad;
	sin->sin_family = AF_INET;
	sin->sin_port = port;
	a->len = (socklen_t)sizeof(*sin);
	return (0);
bad:
	xasprintf(cause,
	    "\"%s\": not an address (\"127.0.0.1:9560\", \"[::1]:9560\", "
	    "\"localhost:9560\" or \"unix:/path\")",
	    s);
	return (-1);
}

/* Write sa as "1.2.3.4:80", "[::1]:80" or "unix:/path" into buf. */
char *
listen_addr_format(
    const struct sockaddr *sa, socklen_t len, char *buf, size_t size)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;
	const struct sockaddr_un *sun = (const struct sockaddr_un *)sa;
	char host[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET &&
	    inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host)) != NULL)
		snprintf(buf, size, "%s:%u", host, ntohs(sin->sin_port));
	else if (sa->sa_family == AF_INET6 &&
	    inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof(host)) != NULL)
		snprintf(buf, size, "[%s]:%u", host, ntohs(sin6->sin6_port));
	else if (sa->sa_family == AF_UNIX &&
	    len > (socklen_t)offsetof(struct sockaddr_un, sun_path) &&
	    sun->sun_path[0] != '\0')
		snprintf(buf, size, "unix:%.*s",
		    (int)(len - offsetof(struct sockaddr_un, sun_path)),
		    sun->sun_path);
	else
		snprintf(buf, size, "unix");
	return (buf);
}

/*
 * Return 1 if s is a host name (letters, digits, '-', '_' and '.', at
 * most 253 bytes, not empty), as http_allowed_hosts takes one.
 */
int
listen_addr_host_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > LISTEN_ADDR_HOST_MAX)
		return (0);
	for (; *s != '\0'; s++) {
		if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_' &&
		    *s != '.')
			return (0);
	}
	return (1);
}

/*
 * Split a Host header's value into its host (lower case, without
 * brackets) in buf, and its port, which is dropped.  Return 0, or -1 if
 * it is not host[:port] nor [v6]:port.
 */
static int
listen_addr_host_split(const char *h, char *buf, size_t size)
{
	const char *end, *colon;
	size_t n, i;

	if (h[0] == '[') {
		if ((end = strchr(h, ']')) == NULL)
			return (-1);
		colon = end[1] == ':' ? end + 1 : NULL;
		if (end[1] != '\0' && colon == NULL)
			return (-1);
		h++;
	} else {
		colon = strchr(h, ':');
		end = colon != NULL ? colon : h + strlen(h);
	}
	if (colon != NULL &&
	    (colon[1] == '\0' ||
	        strspn(colon + 1, "0123456789") != strlen(colon + 1)))
		return (-1);
	if ((n = (size_t)(end - h)) == 0 || n >= size)
		return (-1);
	for (i = 0; i < n; i++)
		buf[i] = (char)tolower((unsigned char)h[i]);
	buf[n] = '\0';
	return (0);
}

/*
 * May a request with Host header h be answered?  Yes for an address
 * (IPv4, or IPv6 in brackets: a browser sends one only to the address it
 * connected to, which no DNS rebinding can forge), "localhost" and names
 * under ".localhost", and the names of allowed (NULL-terminated, or
 * NULL), case aside; any port.  A missing header (h NULL) is allowed: no
 * browser omits it.  Return 1 or 0.
 */
int
listen_addr_host_allowed(const char *h, char *const *allowed)
{
	char host[LISTEN_ADDR_HOST_MAX + 1];
	struct in6_addr a6;
	struct in_addr a4;
	size_t n;

	if (h == NULL)
		return (1);
	if (listen_addr_host_split(h, host, sizeof(host)) == -1)
		return (0);
	if (h[0] == '[')
		return (inet_pton(AF_INET6, host, &a6) == 1);
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (1);
	if (!listen_addr_host_valid(host))
		return (0);
	n = strlen(host);
	if (strcmp(host, "localhost") == 0 ||
	    (n > 10 && strcmp(host + n - 10, ".localhost") == 0))
		return (1);
	for (; allowed != NULL && *allowed != NULL; allowed++) {
		if (strcasecmp(*allowed, host) == 0)
			return (1);
	}
	return (0);
}
