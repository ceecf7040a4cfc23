/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/* Unit tests for lib/signame.c. */

#include "config.h"

#include <signal.h>
#include <stdio.h>

#include "signame.h"
#include "test.h"

TEST(names)
{
	ASSERT_EQ(signame_parse("TERM"), SIGTERM);
	ASSERT_EQ(signame_parse("SIGTERM"), SIGTERM);
	ASSERT_EQ(signame_parse("term"), SIGTERM);
	ASSERT_EQ(signame_parse("sigterm"), SIGTERM);
	ASSERT_EQ(signame_parse("15"), SIGTERM);
	ASSERT_EQ(signame_parse("SIGINT"), SIGINT);
	ASSERT_EQ(signame_parse("HUP"), SIGHUP);
	ASSERT_EQ(signame_parse("KILL"), SIGKILL);
	ASSERT_EQ(signame_parse("USR1"), SIGUSR1);
	ASSERT_EQ(signame_parse("usr2"), SIGUSR2);
	ASSERT_EQ(signame_parse("QUIT"), SIGQUIT);
	ASSERT_EQ(signame_parse("WINCH"), SIGWINCH);
	ASSERT_EQ(signame_parse("CHLD"), SIGCHLD);
	ASSERT_EQ(signame_parse("CLD"), SIGCHLD);
	ASSERT_EQ(signame_parse("IOT"), SIGABRT);
	ASSERT_EQ(signame_parse("POLL"), SIGIO);
	ASSERT_EQ(signame_parse("PWR"), SIGPWR);
	ASSERT_EQ(signame_parse("STKFLT"), SIGSTKFLT);
	ASSERT_EQ(signame_parse("SYS"), SIGSYS);
	return (0);
}

TEST(invalid)
{
	ASSERT_EQ(signame_parse(NULL), -1);
	ASSERT_EQ(signame_parse(""), -1);
	ASSERT_EQ(signame_parse("SIG"), -1);
	ASSERT_EQ(signame_parse("FOO"), -1);
	ASSERT_EQ(signame_parse("SIGSIGTERM"), -1);
	ASSERT_EQ(signame_parse("TERM "), -1);
	ASSERT_EQ(signame_parse("0"), -1);
	ASSERT_EQ(signame_parse("-15"), -1);
	ASSERT_EQ(signame_parse("15x"), -1);
	ASSERT_EQ(signame_parse("65"), -1);
	ASSERT_EQ(signame_parse("99999999999"), -1);
	ASSERT_EQ(signame_parse("RTMIN+"), -1);
	ASSERT_EQ(signame_parse("RTMIN-1"), -1);
	ASSERT_EQ(signame_parse("RTMAX+1"), -1);
	ASSERT_EQ(signame_parse("RTMIN+99"), -1);
	ASSERT_EQ(signame_name(0), NULL);
	ASSERT_EQ(signame_name(-1), NULL);
	ASSERT_EQ(signame_name(SIGRTMAX + 1), NULL);
	ASSERT_EQ(signame_name(1000), NULL);
	return (0);
}

TEST(canonical_names)
{
	ASSERT_STREQ(signame_name(SIGTERM), "TERM");
	ASSERT_STREQ(signame_name(SIGINT), "INT");
	ASSERT_STREQ(signame_name(SIGABRT), "ABRT");
	ASSERT_STREQ(signame_name(SIGCHLD), "CHLD");
	ASSERT_STREQ(signame_name(SIGIO), "IO");
	ASSERT_STREQ(signame_name(SIGKILL), "KILL");
	return (0);
}

TEST(realtime)
{
	ASSERT_EQ(signame_parse("RTMIN"), SIGRTMIN);
	ASSERT_EQ(signame_parse("SIGRTMIN+3"), SIGRTMIN + 3);
	ASSERT_EQ(signame_parse("rtmin+3"), SIGRTMIN + 3);
	ASSERT_EQ(signame_parse("RTMAX"), SIGRTMAX);
	ASSERT_EQ(signame_parse("RTMAX-2"), SIGRTMAX - 2);
	ASSERT_STREQ(signame_name(SIGRTMIN), "RTMIN");
	ASSERT_STREQ(signame_name(SIGRTMIN + 3), "RTMIN+3");
	ASSERT_STREQ(signame_name(SIGRTMAX), "RTMAX");
	ASSERT_STREQ(signame_name(SIGRTMAX - 1), "RTMIN+29");
	return (0);
}

TEST(round_trip)
{
	const char *name;
	int signo, named = 0;

	for (signo = 1; signo <= SIGRTMAX; signo++) {
		if ((name = signame_name(signo)) == NULL)
			continue;
		named++;
		ASSERT_EQ(signame_parse(name), signo);
		ASSERT_EQ(signame_parse(name) > 0, 1);
	}
	/* 31 standard signals (all but the unused 32, 33) and RT ones. */
	ASSERT_EQ(named, 31 + SIGRTMAX - SIGRTMIN + 1);
	return (0);
}

int
main(void)
{
	RUN(names);
	RUN(invalid);
	RUN(canonical_names);
	RUN(realtime);
	RUN(round_trip);
	TEST_MAIN_END();
}
