/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Unit tests for lib/listenaddr.c: every form http_listen takes, back
 * to text again, and the words it refuses with the message that says
 * what it takes.
 */

#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <netinet/in.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "listenaddr.h"
#include "test.h"

/* Parse s and format it again; "" when refused. */
static const char *
round_trip(const char *s)
{
	static char buf[160];
	struct listen_addr a;
	char *cause = NULL;

	if (listen_addr_parse(s, &a, &cause) == -1) {
		free(cause);
		return ("");
	}
	return (listen_addr_format(
	    (const struct sockaddr *)&a.ss, a.len, buf, sizeof(buf)));
}

TEST(forms)
{
	ASSERT_STREQ(round_trip("127.0.0.1:9560"), "127.0.0.1:9560");
	ASSERT_STREQ(round_trip("0.0.0.0:0"), "0.0.0.0:0");
	ASSERT_STREQ(round_trip("localhost:80"), "127.0.0.1:80");
	ASSERT_STREQ(round_trip("[::1]:9560"), "[::1]:9560");
	ASSERT_STREQ(round_trip("[::]:65535"), "[::]:65535");
	ASSERT_STREQ(round_trip("[fe80::1:2]:8080"), "[fe80::1:2]:8080");
	ASSERT_STREQ(round_trip("unix:/run/vigil/http.sock"),
	    "unix:/run/vigil/http.sock");
	return (0);
}

TEST(family)
{
	struct listen_addr a;
	char *cause = NULL;

	ASSERT_EQ(listen_addr_parse("[::1]:1", &a, &cause), 0);
	ASSERT_EQ(a.ss.ss_family, AF_INET6);
	ASSERT_EQ(a.len, sizeof(struct sockaddr_in6));
	ASSERT_EQ(listen_addr_parse("10.1.2.3:1", &a, &cause), 0);
	ASSERT_EQ(a.ss.ss_family, AF_INET);
	ASSERT_EQ(listen_addr_parse("unix:/x", &a, &cause), 0);
	ASSERT_EQ(a.ss.ss_family, AF_UNIX);
	return (0);
}

TEST(hosts)
{
	static char *const allowed[] = { "vigil.example.org", "Box", NULL };
	static const char *const yes[] = { "127.0.0.1", "127.0.0.1:9560",
		"10.1.2.3:80", "[::1]:9560", "[::1]", "localhost",
		"LOCALHOST:80", "dash.localhost:1", "vigil.example.org",
		"VIGIL.example.org:443", "box", NULL };
	static const char *const no[] = { "", "evil.example", "evil.example:80",
		"localhost.evil.example", "xlocalhost", ".localhost",
		"vigil.example.org.evil", "[evil]:80", "[::1]x", "[::1]:8a",
		"localhost:80x", "a b", "a/b", "127.0.0.1:", NULL };
	int i;

	ASSERT_EQ(listen_addr_host_allowed(NULL, NULL), 1);
	for (i = 0; yes[i] != NULL; i++) {
		if (!listen_addr_host_allowed(yes[i], allowed))
			TEST_FAIL_("Host \"%s\" refused", yes[i]);
	}
	for (i = 0; no[i] != NULL; i++) {
		if (listen_addr_host_allowed(no[i], allowed))
			TEST_FAIL_("Host \"%s\" allowed", no[i]);
	}
	ASSERT_EQ(listen_addr_host_allowed("vigil.example.org", NULL), 0);
	ASSERT_EQ(listen_addr_host_valid("vigil.example.org"), 1);
	ASSERT_EQ(listen_addr_host_valid("vigil.example.org:80"), 0);
	ASSERT_EQ(listen_addr_host_valid(""), 0);
	return (0);
}

TEST(refused)
{
	static const char *const bad[] = { "", "9560", ":9560", "127.0.0.1",
		"127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1",
		"127.0.0.1:80a", "127.0.0.1:123456", "::1:80", "[::1]",
		"[::1:80", "[127.0.0.1]:80", "example.com:80", "*:80",
		"256.0.0.1:80", "unix:", "unix:relative/path", NULL };
	struct listen_addr a;
	char *cause;
	char longpath[200];
	int i;

	for (i = 0; bad[i] != NULL; i++) {
		cause = NULL;
		if (listen_addr_parse(bad[i], &a, &cause) != -1) {
			fprintf(stderr, "took \"%s\"\n", bad[i]);
			return (1);
		}
		ASSERT_OK(cause != NULL);
		free(cause);
	}
	cause = NULL;
	ASSERT_EQ(listen_addr_parse("nowhere", &a, &cause), -1);
	ASSERT_STREQ(cause,
	    "\"nowhere\": not an address (\"127.0.0.1:9560\", "
	    "\"[::1]:9560\", \"localhost:9560\" or \"unix:/path\")");
	free(cause);
	/* "unix:/aaa...": a path longer than sun_path holds. */
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = '\0';
	memcpy(longpath, "unix:/", 6);
	cause = NULL;
	ASSERT_EQ(listen_addr_parse(longpath, &a, &cause), -1);
	ASSERT_OK(strstr(cause, "path longer than") != NULL);
	free(cause);
	return (0);
}

int
main(void)
{
	RUN(forms);
	RUN(family);
	RUN(refused);
	RUN(hosts);
	TEST_MAIN_END();
}
