/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Signal names and numbers.  Names are written without "SIG" and in upper
 * case, as kill(1) prints them; parsing also takes the "SIG" prefix, any
 * case, decimal numbers and the real-time forms "RTMIN+N" and "RTMAX-N".
 */

#include "config.h"

#include <ctype.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <strings.h>

#include "signame.h"

static const struct {
	const char *name;
	int signo;
} signame_table[] = {
	/* Canonical names first: signame_name returns the first match. */
	{ "HUP", SIGHUP },
	{ "INT", SIGINT },
	{ "QUIT", SIGQUIT },
	{ "ILL", SIGILL },
	{ "TRAP", SIGTRAP },
	{ "ABRT", SIGABRT },
	{ "BUS", SIGBUS },
	{ "FPE", SIGFPE },
	{ "KILL", SIGKILL },
	{ "USR1", SIGUSR1 },
	{ "SEGV", SIGSEGV },
	{ "USR2", SIGUSR2 },
	{ "PIPE", SIGPIPE },
	{ "ALRM", SIGALRM },
	{ "TERM", SIGTERM },
#ifdef SIGSTKFLT
	{ "STKFLT", SIGSTKFLT },
#endif
	{ "CHLD", SIGCHLD },
	{ "CONT", SIGCONT },
	{ "STOP", SIGSTOP },
	{ "TSTP", SIGTSTP },
	{ "TTIN", SIGTTIN },
	{ "TTOU", SIGTTOU },
	{ "URG", SIGURG },
	{ "XCPU", SIGXCPU },
	{ "XFSZ", SIGXFSZ },
	{ "VTALRM", SIGVTALRM },
	{ "PROF", SIGPROF },
	{ "WINCH", SIGWINCH },
#ifdef SIGIO
	{ "IO", SIGIO },
#endif
#ifdef SIGPWR
	{ "PWR", SIGPWR },
#endif
	{ "SYS", SIGSYS },
/* Aliases. */
#ifdef SIGIOT
	{ "IOT", SIGIOT },
#endif
#ifdef SIGCLD
	{ "CLD", SIGCLD },
#endif
#ifdef SIGPOLL
	{ "POLL", SIGPOLL },
#endif
};

/* "RTMIN+N" for each N a real-time signal can be above SIGRTMIN. */
static const char *const signame_rt[] = {
	"RTMIN",
	"RTMIN+1",
	"RTMIN+2",
	"RTMIN+3",
	"RTMIN+4",
	"RTMIN+5",
	"RTMIN+6",
	"RTMIN+7",
	"RTMIN+8",
	"RTMIN+9",
	"RTMIN+10",
	"RTMIN+11",
	"RTMIN+12",
	"RTMIN+13",
	"RTMIN+14",
	"RTMIN+15",
	"RTMIN+16",
	"RTMIN+17",
	"RTMIN+18",
	"RTMIN+19",
	"RTMIN+20",
	"RTMIN+21",
	"RTMIN+22",
	"RTMIN+23",
	"RTMIN+24",
	"RTMIN+25",
	"RTMIN+26",
	"RTMIN+27",
	"RTMIN+28",
	"RTMIN+29",
	"RTMIN+30",
	"RTMIN+31",
	"RTMIN+32",
};

/* Parse a small decimal number filling all of s; -1 if it is not one. */
static int
signame_number(const char *s)
{
	long v = 0;

	if (*s == '\0')
		return (-1);
	for (; *s != '\0'; s++) {
		if (!isdigit((unsigned char)*s))
			return (-1);
		v = v * 10 + (*s - '0');
		if (v > INT_MAX / 10)
			return (-1);
	}
	return ((int)v);
}

/* Parse "RTMIN", "RTMIN+N", "RTMAX" or "RTMAX-N" (no "SIG"); -1 if not. */
static int
signame_parse_rt(const char *s)
{
	int base, sign, n = 0;

	if (strncasecmp(s, "RTMIN", 5) == 0) {
		base = SIGRTMIN;
		sign = 1;
	} else if (strncasecmp(s, "RTMAX", 5) == 0) {
		base = SIGRTMAX;
		sign = -1;
	} else
		return (-1);
	s += 5;
	if (*s != '\0') {
		if (*s != (sign == 1 ? '+' : '-'))
			return (-1);
		if ((n = signame_number(s + 1)) == -1)
			return (-1);
	}
	if (n > SIGRTMAX - SIGRTMIN)
		return (-1);
	return (base + sign * n);
}

/*
 * Parse a signal: a name with or without "SIG" in any case ("TERM",
 * "SIGTERM", "term"), a real-time name ("RTMIN+3", "RTMAX-1") or a number
 * ("15").  Returns the signal number, or -1 if s names no signal (0 is not
 * a signal here).
 */
int
signame_parse(const char *s)
{
	size_t i;
	int signo;

	if (s == NULL || *s == '\0')
		return (-1);
	if (isdigit((unsigned char)*s)) {
		signo = signame_number(s);
		if (signo == -1 || signame_name(signo) == NULL)
			return (-1);
		return (signo);
	}
	if (strncasecmp(s, "SIG", 3) == 0)
		s += 3;
	for (i = 0; i < sizeof signame_table / sizeof signame_table[0]; i++) {
		if (strcasecmp(s, signame_table[i].name) == 0)
			return (signame_table[i].signo);
	}
	return (signame_parse_rt(s));
}

/*
 * Return the name of signal signo without "SIG" ("TERM", "RTMIN+3"), as a
 * static string, or NULL if signo is not a valid signal.
 */
const char *
signame_name(int signo)
{
	size_t i;

	for (i = 0; i < sizeof signame_table / sizeof signame_table[0]; i++) {
		if (signame_table[i].signo == signo)
			return (signame_table[i].name);
	}
	if (signo == SIGRTMAX)
		return ("RTMAX");
	if (signo >= SIGRTMIN && signo < SIGRTMAX &&
	    (size_t)(signo - SIGRTMIN) <
	        sizeof signame_rt / sizeof signame_rt[0])
		return (signame_rt[signo - SIGRTMIN]);
	return (NULL);
}
