/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Signals to vigild, read from the loop (sd-event's signalfd): CHLD reaps
 * runs, TERM and INT shut down, HUP reloads jobs.d, USR2 reopens the log
 * files; every other signal that vigild blocks (so that nothing can end
 * it by surprise) is read and ignored, said once.
 */

#include "config.h"

#include <sys/prctl.h>

#include <signal.h>
#include <stdint.h>
#include <string.h>

#include "child.h"
#include "daemon.h"
#include "effects.h"
#include "evloop.h"
#include "inst.h"
#include "log.h"
#include "signame.h"
#include "state.h"
#include "vigild.h"

/*
 * Children reaped per turn of the loop; the rest wait for the next turn
 * (signals_more), after the signals, timers and clients that are due.  A
 * defer source stays pending from its creation, so at the signals'
 * priority it would always come first and TERM would never be read; below
 * the output pipes (10), a job that writes without pause would hold the
 * reaping up.
 */
#define SIGNALS_REAP_BATCH 8
#define SIGNALS_MORE_PRIORITY (SD_EVENT_PRIORITY_NORMAL + 1)

static sd_event_source *signals_clock; /* keeps sd-event's timerfd */
static sd_event_source *signals_more;  /* reaps left for the next turn */

/* Reap a batch of children; if more may wait, come back next turn. */
static int
signals_reap(void)
{
	int more;

	state_batch_begin(); /* one commit for every run that ended */
	more = child_reap_all(SIGNALS_REAP_BATCH);
	inst_check_groups();
	state_batch_end();
	(void)sd_event_source_set_enabled(
	    signals_more, more ? SD_EVENT_ONESHOT : SD_EVENT_OFF);
	return (0);
}

static int
signals_chld(sd_event_source *s, const struct signalfd_siginfo *si, void *arg)
{
	return (signals_reap());
}

static int
signals_chld_more(sd_event_source *s, void *arg)
{
	return (signals_reap());
}

static int
signals_term(sd_event_source *s, const struct signalfd_siginfo *si, void *arg)
{
	log_info("received %s", signame_name((int)si->ssi_signo));
	registry_shutdown();
	return (0);
}

static int
signals_hup(sd_event_source *s, const struct signalfd_siginfo *si, void *arg)
{
	struct reload_report r;
	size_t i;

	log_info("received HUP: reloading %s", vigild.jobs_dir);
	if (reload_run(0, &r) == -1) {
		for (i = 0; i < r.errors.n; i++)
			log_warnx("%s", r.errors.msgs[i]);
	}
	reload_report_clear(&r);
	return (0);
}

static int
signals_usr2(sd_event_source *s, const struct signalfd_siginfo *si, void *arg)
{
	log_info("received USR2: reopening log files");
	(void)joblog_reopen_all();
	return (0);
}

static int
signals_never(sd_event_source *s, uint64_t usec, void *arg)
{
	return (0);
}

/* A signal blocked only to be ignored: say so the first time it comes. */
static int
signals_ignore(sd_event_source *s, const struct signalfd_siginfo *si, void *arg)
{
	static unsigned char seen[_NSIG];
	int sig = (int)si->ssi_signo;
	const char *name = signame_name(sig);

	if (sig <= 0 || sig >= _NSIG || seen[sig]) {
		log_debug(
		    "ignoring signal %d from pid %ld", sig, (long)si->ssi_pid);
		return (0);
	}
	seen[sig] = 1;
	if (name != NULL)
		log_info("ignoring SIG%s (from pid %ld); not logged again",
		    name, (long)si->ssi_pid);
	else
		log_info("ignoring signal %d (from pid %ld); not logged again",
		    sig, (long)si->ssi_pid);
	return (0);
}

/*
 * Read every other blocked signal through the loop too, and ignore it: a
 * blocked signal left unread would stay pending for ever.
 */
static void
signals_ignore_rest(void)
{
	sigset_t blocked;
	int sig, r;

	if (sigprocmask(SIG_BLOCK, NULL, &blocked) == -1)
		fatal("sigprocmask");
	for (sig = 1; sig < _NSIG; sig++) {
		if (sigismember(&blocked, sig) != 1 || sig == SIGCHLD ||
		    sig == SIGTERM || sig == SIGINT || sig == SIGHUP ||
		    sig == SIGUSR2)
			continue;
		if ((r = sd_event_add_signal(
		         evloop_event(), NULL, sig, signals_ignore, NULL)) < 0)
			fatalx("sd_event_add_signal %d: %s", sig, strerror(-r));
	}
}

/*
 * Become a child subreaper and route the signals (blocked at start)
 * through the loop.
 */
void
signals_init(void)
{
	int r;

	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		log_warn("prctl(PR_SET_CHILD_SUBREAPER)");
	/*
	 * sd-event makes its CLOCK_MONOTONIC timerfd with the first timer.
	 * Make it now: a stop timeout must never fail later for want of a
	 * file descriptor.
	 */
	if ((r = sd_event_add_time(evloop_event(), &signals_clock,
	         CLOCK_MONOTONIC, UINT64_MAX, 0, signals_never, NULL)) < 0 ||
	    (r = sd_event_source_set_enabled(signals_clock, SD_EVENT_OFF)) < 0)
		fatalx("sd_event_add_time: %s", strerror(-r));
	if ((r = sd_event_add_defer(
	         evloop_event(), &signals_more, signals_chld_more, NULL)) < 0 ||
	    (r = sd_event_source_set_priority(
	         signals_more, SIGNALS_MORE_PRIORITY)) < 0 ||
	    (r = sd_event_source_set_enabled(signals_more, SD_EVENT_OFF)) < 0)
		fatalx("sd_event_add_defer: %s", strerror(-r));
	if ((r = sd_event_add_signal(
	         evloop_event(), NULL, SIGCHLD, signals_chld, NULL)) < 0 ||
	    (r = sd_event_add_signal(
	         evloop_event(), NULL, SIGTERM, signals_term, NULL)) < 0 ||
	    (r = sd_event_add_signal(
	         evloop_event(), NULL, SIGINT, signals_term, NULL)) < 0 ||
	    (r = sd_event_add_signal(
	         evloop_event(), NULL, SIGHUP, signals_hup, NULL)) < 0 ||
	    (r = sd_event_add_signal(
	         evloop_event(), NULL, SIGUSR2, signals_usr2, NULL)) < 0)
		fatalx("sd_event_add_signal: %s", strerror(-r));
	signals_ignore_rest();
}

void
signals_free(void)
{
	signals_clock = sd_event_source_disable_unref(signals_clock);
	signals_more = sd_event_source_disable_unref(signals_more);
}
