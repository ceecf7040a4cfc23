/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Probes as written in a job file, and the one HTTP request and answer
 * they need.  An http: probe speaks plain HTTP/1.1 (no TLS: a service
 * behind https answers its plain port, or is probed with tcp: or exec:).
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"
#include "words.h"
#include "xmalloc.h"

/* A port, 1 to 65535, all of s. */
static int
probe_port(const char *s, size_t n)
{
	long v = 0;
	size_t i;

	if (n == 0 || n > 5)
		return (-1);
	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return (-1);
		v = v * 10 + (s[i] - '0');
	}
	return (v >= 1 && v <= 65535 ? (int)v : -1);
}

/*
 * HOST (n bytes: an IPv4 address, [IPv6] or "localhost", which is
 * 127.0.0.1) and port into p's address.
 */
static int
probe_addr(
    struct probe_spec *p, const char *host, size_t n, int port, char **cause)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)&p->addr;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&p->addr;
	char buf[64];

	if (n >= sizeof(buf))
		goto bad;
	memcpy(buf, host, n);
	buf[n] = '\0';
	memset(&p->addr, 0, sizeof(p->addr));
	if (strcmp(buf, "localhost") == 0)
		strcpy(buf, "127.0.0.1");
	if (inet_pton(AF_INET, buf, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		p->addrlen = sizeof(*in4);
		return (0);
	}
	if (n > 2 && buf[0] == '[' && buf[n - 1] == ']') {
		buf[n - 1] = '\0';
		if (inet_pton(AF_INET6, buf + 1, &in6->sin6_addr) == 1) {
			in6->sin6_family = AF_INET6;
			in6->sin6_port = htons((uint16_t)port);
			p->addrlen = sizeof(*in6);
			return (0);
		}
	}
bad:
	xasprintf(cause,
	    "\"%.*s\" is not an IP address or localhost (vigild looks up no "
	    "host names)",
	    (int)n, host);
	return (-1);
}

/* "[HOST:]PORT" of s (up to end) into p; HOST defaults to localhost. */
static int
probe_hostport(
    struct probe_spec *p, const char *s, const char *end, char **cause)
{
	const char *colon = NULL, *c;
	int port;

	for (c = s; c < end; c++) {
		if (*c == ':' && (c == s || s[0] != '[' || c[-1] == ']'))
			colon = c;
	}
	port = probe_port(
	    colon ? colon + 1 : s, (size_t)(end - (colon ? colon + 1 : s)));
	if (port == -1) {
		xasprintf(cause, "\"%.*s\": not a port (1-65535)",
		    (int)(end - (colon ? colon + 1 : s)),
		    colon ? colon + 1 : s);
		return (-1);
	}
	if (colon == NULL)
		return (probe_addr(p, "localhost", 9, port, cause));
	return (probe_addr(p, s, (size_t)(colon - s), port, cause));
}

/* "http://HOST[:PORT][/PATH]". */
static int
probe_parse_http(struct probe_spec *p, const char *url, char **cause)
{
	const char *h, *slash, *end;

	if (strncmp(url, "https://", 8) == 0) {
		xasprintf(cause,
		    "https is not supported (no TLS): probe the "
		    "plain port, or use tcp: or exec:");
		return (-1);
	}
	if (strncmp(url, "http://", 7) != 0) {
		xasprintf(cause, "\"%s\": not an http:// URL", url);
		return (-1);
	}
	h = url + 7;
	slash = strchr(h, '/');
	end = slash ? slash : h + strlen(h);
	if (end == h) {
		xasprintf(cause, "\"%s\": no host", url);
		return (-1);
	}
	/* No port: 80. */
	if (memchr(h, ':', (size_t)(end - h)) == NULL ||
	    (h[0] == '[' && end[-1] == ']')) {
		if (probe_addr(p, h, (size_t)(end - h), 80, cause) == -1)
			return (-1);
	} else if (probe_hostport(p, h, end, cause) == -1)
		return (-1);
	p->host = xstrndup(h, (size_t)(end - h));
	p->path = xstrdup(slash ? slash : "/");
	if (strpbrk(p->path, " \r\n") != NULL) {
		xasprintf(
		    cause, "\"%s\": a space or line break in the path", url);
		return (-1);
	}
	return (0);
}

/*
 * Parse s ("tcp:PORT", "tcp:HOST:PORT", "http:URL" or the URL alone,
 * "exec:COMMAND") into
 * *p.  Return 0, or -1 with *cause (p then holds nothing to free).
 */
int
probe_parse(const char *s, struct probe_spec *p, char **cause)
{
	size_t n;
	int r = -1;

	memset(p, 0, sizeof(*p));
	if (strncmp(s, "tcp:", 4) == 0) {
		p->kind = PROBE_TCP;
		r = probe_hostport(p, s + 4, s + strlen(s), cause);
	} else if (strncmp(s, "http://", 7) == 0 ||
	    strncmp(s, "https://", 8) == 0) {
		p->kind = PROBE_HTTP; /* the URL itself */
		r = probe_parse_http(p, s, cause);
	} else if (strncmp(s, "http:", 5) == 0) {
		p->kind = PROBE_HTTP;
		r = probe_parse_http(p, s + 5, cause);
	} else if (strncmp(s, "exec:", 5) == 0) {
		p->kind = PROBE_EXEC;
		p->argv = words_split(s + 5, &n, cause);
		r = p->argv == NULL ? -1 : 0;
		if (r == 0 && n == 0) {
			xasprintf(cause, "exec: needs a command");
			r = -1;
		}
	} else
		xasprintf(cause,
		    "\"%s\": not a probe (tcp:PORT, tcp:HOST:PORT, "
		    "http:URL or exec:COMMAND)",
		    s);
	if (r == -1) {
		probe_spec_free(p);
		return (-1);
	}
	p->text = xstrdup(s);
	return (0);
}

/* Free what p holds; it is then PROBE_NONE. */
void
probe_spec_free(struct probe_spec *p)
{
	free(p->text);
	free(p->host);
	free(p->path);
	words_free(p->argv);
	memset(p, 0, sizeof(*p));
}

/* Do a and b probe the same thing? */
int
probe_spec_equal(const struct probe_spec *a, const struct probe_spec *b)
{
	if (a->kind != b->kind)
		return (0);
	if (a->kind == PROBE_NONE)
		return (1);
	return (strcmp(a->text, b->text) == 0);
}

/* The GET request of an http: probe into buf; its length (0: no room). */
size_t
probe_http_request(const struct probe_spec *p, char *buf, size_t len)
{
	int n = snprintf(buf, len,
	    "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: vigild-probe\r\n"
	    "Accept: */*\r\nConnection: close\r\n\r\n",
	    p->path, p->host);

	return (n < 0 || (size_t)n >= len ? 0 : (size_t)n);
}

/*
 * The status code of an HTTP answer whose first len bytes are in buf:
 * 100-599, 0 when more is needed to tell, -1 when it is not HTTP.
 */
int
probe_http_status(const char *buf, size_t len)
{
	static const char v[] = "HTTP/1.";
	size_t i;
	int code = 0;

	for (i = 0; i < len && i < sizeof(v) - 1; i++) {
		if (buf[i] != v[i])
			return (-1);
	}
	if (len < 12)
		return (0);
	if (!isdigit((unsigned char)buf[7]) || buf[8] != ' ')
		return (-1);
	for (i = 9; i < 12; i++) {
		if (!isdigit((unsigned char)buf[i]))
			return (-1);
		code = code * 10 + (buf[i] - '0');
	}
	return (code >= 100 && code <= 599 ? code : -1);
}
