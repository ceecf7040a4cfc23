/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/* Unit tests for lib/probe.c: the probe forms, and HTTP answers. */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdlib.h>
#include <string.h>

#include "probe.h"
#include "test.h"

static struct probe_spec p;

/* Parse s; the port of the address (host order), or -1 on an error. */
static int
port_of(const char *s)
{
	char *cause = NULL;

	if (probe_parse(s, &p, &cause) == -1) {
		free(cause);
		return (-1);
	}
	if (p.addr.ss_family == AF_INET)
		return (ntohs(((struct sockaddr_in *)&p.addr)->sin_port));
	if (p.addr.ss_family == AF_INET6)
		return (ntohs(((struct sockaddr_in6 *)&p.addr)->sin6_port));
	return (0);
}

/* The error of s, or "" if it parses. */
static const char *
error_of(const char *s)
{
	static char buf[256];
	char *cause = NULL;

	buf[0] = '\0';
	if (probe_parse(s, &p, &cause) == 0) {
		probe_spec_free(&p);
		return (buf);
	}
	snprintf(buf, sizeof(buf), "%s", cause);
	free(cause);
	return (buf);
}

static int
is_addr(int family, const char *want)
{
	char buf[64];
	const void *a = family == AF_INET ?
	    (const void *)&((struct sockaddr_in *)&p.addr)->sin_addr :
	    (const void *)&((struct sockaddr_in6 *)&p.addr)->sin6_addr;

	return (p.addr.ss_family == family &&
	    inet_ntop(family, a, buf, sizeof(buf)) != NULL &&
	    strcmp(buf, want) == 0);
}

TEST(tcp_forms)
{
	ASSERT_EQ(port_of("tcp:8080"), 8080);
	ASSERT_EQ(p.kind, PROBE_TCP);
	ASSERT_OK(is_addr(AF_INET, "127.0.0.1")); /* localhost */
	ASSERT_OK(strcmp(p.text, "tcp:8080") == 0);
	probe_spec_free(&p);
	ASSERT_EQ(port_of("tcp:10.1.2.3:5432"), 5432);
	ASSERT_OK(is_addr(AF_INET, "10.1.2.3"));
	probe_spec_free(&p);
	ASSERT_EQ(port_of("tcp:[::1]:6379"), 6379);
	ASSERT_OK(is_addr(AF_INET6, "::1"));
	ASSERT_EQ(p.addrlen, sizeof(struct sockaddr_in6));
	probe_spec_free(&p);
	ASSERT_EQ(port_of("tcp:localhost:1"), 1);
	probe_spec_free(&p);
	return (0);
}

TEST(http_forms)
{
	ASSERT_EQ(port_of("http:http://127.0.0.1:8000/healthz?x=1"), 8000);
	ASSERT_EQ(p.kind, PROBE_HTTP);
	ASSERT_OK(strcmp(p.path, "/healthz?x=1") == 0);
	ASSERT_OK(strcmp(p.host, "127.0.0.1:8000") == 0);
	probe_spec_free(&p);
	ASSERT_EQ(port_of("http:http://localhost"), 80);
	ASSERT_OK(strcmp(p.path, "/") == 0);
	probe_spec_free(&p);
	ASSERT_EQ(port_of("http:http://[::1]/"), 80);
	ASSERT_OK(is_addr(AF_INET6, "::1"));
	probe_spec_free(&p);
	ASSERT_EQ(port_of("http:http://[::1]:81/a"), 81);
	probe_spec_free(&p);
	/* The URL alone is the same probe. */
	ASSERT_EQ(port_of("http://127.0.0.1:8081/up"), 8081);
	ASSERT_EQ(p.kind, PROBE_HTTP);
	ASSERT_OK(strcmp(p.path, "/up") == 0);
	probe_spec_free(&p);
	return (0);
}

TEST(exec_form)
{
	char *cause = NULL;

	ASSERT_EQ(
	    probe_parse("exec:pg_isready -h /tmp -p 5432", &p, &cause), 0);
	ASSERT_EQ(p.kind, PROBE_EXEC);
	ASSERT_OK(strcmp(p.argv[0], "pg_isready") == 0);
	ASSERT_OK(strcmp(p.argv[4], "5432") == 0);
	ASSERT_OK(p.argv[5] == NULL);
	probe_spec_free(&p);
	return (0);
}

TEST(bad_forms)
{
	ASSERT_OK(strstr(error_of("tcp:notaport"), "not a port") != NULL);
	ASSERT_OK(strstr(error_of("tcp:0"), "not a port") != NULL);
	ASSERT_OK(strstr(error_of("tcp:65536"), "not a port") != NULL);
	ASSERT_OK(strstr(error_of("tcp:db.example:5432"),
	              "not an IP address or localhost") != NULL);
	ASSERT_OK(strstr(error_of("http:"), "not an http:// URL") != NULL);
	ASSERT_OK(strstr(error_of("http:https://x/"), "no TLS") != NULL);
	ASSERT_OK(strstr(error_of("https://127.0.0.1/"), "no TLS") != NULL);
	ASSERT_OK(strstr(error_of("http:http:///x"), "no host") != NULL);
	ASSERT_OK(strstr(error_of("exec:"), "needs a command") != NULL);
	ASSERT_OK(strstr(error_of("udp:53"), "not a probe") != NULL);
	ASSERT_OK(strstr(error_of("http:http://1.2.3.4/a b"), "space") != NULL);
	return (0);
}

TEST(http_answers)
{
	char req[512];
	size_t n;

	ASSERT_EQ(probe_http_status("HTTP/1.1 200 OK\r\n", 17), 200);
	ASSERT_EQ(probe_http_status("HTTP/1.0 302 Found\r\n", 20), 302);
	ASSERT_EQ(probe_http_status("HTTP/1.1 503", 12), 503);
	ASSERT_EQ(probe_http_status("HTTP/1.1 20", 11), 0); /* more needed */
	ASSERT_EQ(probe_http_status("HTT", 3), 0);
	ASSERT_EQ(probe_http_status("SSH-2.0-OpenSSH", 15), -1);
	ASSERT_EQ(probe_http_status("HTTP/1.1 2x0 OK", 15), -1);
	ASSERT_EQ(probe_http_status("HTTP/1.1 999 No", 15), -1);
	ASSERT_EQ(port_of("http:http://127.0.0.1:8000/h"), 8000);
	n = probe_http_request(&p, req, sizeof(req));
	ASSERT_OK(n > 0 && strlen(req) == n);
	ASSERT_OK(strncmp(req, "GET /h HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n",
	              39) == 0);
	ASSERT_OK(strstr(req, "Connection: close\r\n\r\n") != NULL);
	ASSERT_EQ(probe_http_request(&p, req, 10), 0);
	probe_spec_free(&p);
	return (0);
}

int
main(void)
{
	RUN(tcp_forms);
	RUN(http_forms);
	RUN(exec_form);
	RUN(bad_forms);
	RUN(http_answers);
	TEST_MAIN_END();
}
