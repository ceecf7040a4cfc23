/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * vigild: options, then configuration, then the runtime directory and its
 * lock, then supervision and the control socket, then the event loop.  It
 * always runs in the foreground and logs to stderr.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "cluster.h"
#include "cmd.h"
#include "conf.h"
#include "daemon.h"
#include "effects.h"
#include "evloop.h"
#include "inst.h"
#include "jobs-view.h"
#include "lock.h"
#include "log.h"
#include "safedir.h"
#include "server.h"
#include "spawn.h"
#include "state.h"
#include "vigild.h"
#include "xmalloc.h"

struct vigild vigild;
/* STATE_DIR/vigild.lock, held while vigild runs; -1 without a state dir. */
static int vigild_state_lock_fd = -1;

struct vigild_options {
	const char *config;
	const char *jobs_dir;
	const char *runtime_dir;
	const char *state_dir;
	const char *log_dir;
	const char *log_level;
	int check;
};

static void __attribute__((noreturn)) vigild_usage(int code)
{
	FILE *f = code == 0 ? stdout : stderr;
	char *path = conf_default_path();

	fprintf(f,
	    "usage: vigild [-t] [-c FILE] [-j DIR] [--runtime-dir DIR]\n"
	    "              [--state-dir DIR] [--log-dir DIR] [--log-level LEVEL]\n"
	    "\n"
	    "Supervise the jobs in a jobs.d directory, in the foreground.\n"
	    "\n"
	    "  -c, --config FILE      main configuration (default %s)\n"
	    "  -j, --jobs-dir DIR     job files NAME.conf\n"
	    "      --runtime-dir DIR  control socket and lock files\n"
	    "      --state-dir DIR    state.db\n"
	    "      --log-dir DIR      job output files\n"
	    "  -t, --check            validate the configuration and exit\n"
	    "      --log-level LEVEL  error, warn, info or debug\n"
	    "      --list-commands    print vigilctl's commands and exit\n"
	    "      --version          print the version and exit\n"
	    "  -h, --help             print this help and exit\n",
	    path);
	free(path);
	exit(code);
}

static void
vigild_parse_args(int argc, char **argv, struct vigild_options *o)
{
	enum {
		OPT_RUNTIME = 256,
		OPT_STATE,
		OPT_LOG,
		OPT_LEVEL,
		OPT_VERSION,
		OPT_COMMANDS
	};
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "jobs-dir", required_argument, NULL, 'j' },
		{ "runtime-dir", required_argument, NULL, OPT_RUNTIME },
		{ "state-dir", required_argument, NULL, OPT_STATE },
		{ "log-dir", required_argument, NULL, OPT_LOG },
		{ "log-level", required_argument, NULL, OPT_LEVEL },
		{ "check", no_argument, NULL, 't' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "list-commands", no_argument, NULL, OPT_COMMANDS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "c:j:th", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			o->config = optarg;
			break;
		case 'j':
			o->jobs_dir = optarg;
			break;
		case OPT_RUNTIME:
			o->runtime_dir = optarg;
			break;
		case OPT_STATE:
			o->state_dir = optarg;
			break;
		case OPT_LOG:
			o->log_dir = optarg;
			break;
		case OPT_LEVEL:
			o->log_level = optarg;
			break;
		case 't':
			o->check = 1;
			break;
		case OPT_VERSION:
			printf("vigild %s\n", PACKAGE_VERSION);
			exit(0);
		case OPT_COMMANDS:
			cmd_print_table(stdout);
			exit(0);
		case 'h':
			vigild_usage(0);
		default:
			vigild_usage(2);
		}
	}
	if (optind != argc)
		vigild_usage(2);
}

/* Replace a configured path with an option's value (made absolute). */
static void
vigild_override(char **slot, const char *value)
{
	char cwd[PATH_MAX];

	if (value == NULL)
		return;
	free(*slot);
	if (value[0] == '/' || getcwd(cwd, sizeof(cwd)) == NULL)
		*slot = xstrdup(value);
	else
		xasprintf(slot, "%s/%s", cwd, value);
}

/*
 * Tidy a configured path for messages and use, without changing what it
 * names: drop empty and "." components, and "NAME/.." where NAME is a
 * directory and not a symbolic link (through a link, ".." is the link
 * target's parent, so it stays).  "/a/b/../run" becomes "/a/run".
 */
static void
vigild_tidy_path(char **slot)
{
	char *in = xstrdup(*slot), *out, *word, *last, *save = NULL;
	size_t len = 0;
	struct stat st;

	out = xcalloc(1, strlen(in) + 2);
	if (in[0] == '/')
		out[len++] = '/';
	for (word = strtok_r(in, "/", &save); word != NULL;
	     word = strtok_r(NULL, "/", &save)) {
		if (strcmp(word, ".") == 0)
			continue;
		last = strrchr(out, '/');
		last = last != NULL ? last + 1 : out;
		if (strcmp(word, "..") == 0 && *last != '\0' &&
		    strcmp(last, "..") != 0 && lstat(out, &st) == 0 &&
		    S_ISDIR(st.st_mode)) {
			len = (size_t)(last - out);
			if (len > 1)
				len--; /* the slash before it, unless the root */
			out[len] = '\0';
			continue;
		}
		if (len > 0 && out[len - 1] != '/')
			out[len++] = '/';
		len += strlcpy(out + len, word, strlen(*slot) + 2 - len);
	}
	if (len == 0)
		strlcpy(out, ".", 2);
	free(in);
	free(*slot);
	*slot = out;
}

/* Print each error and return how many there were. */
static size_t
vigild_print_errors(const struct conf_errors *errs, FILE *f)
{
	size_t i;

	for (i = 0; i < errs->n; i++)
		fprintf(f, "%s\n", errs->msgs[i]);
	return (errs->n);
}

/* Make sure fds 0, 1 and 2 are open, so no job file lands on them. */
static void
vigild_sanitize_stdio(void)
{
	int fd;

	while ((fd = open("/dev/null", O_RDWR)) >= 0 && fd <= 2)
		;
	if (fd > 2)
		close(fd);
}

/*
 * Take STATE_DIR/vigild.lock, or exit naming the vigild that has it: two
 * vigild with one state dir and two runtime dirs would each take state.db
 * for theirs (mark the other's runs lost, run its messages again).  The
 * lock file holds "PID RUNTIME_DIR" of its owner.
 */
static void
vigild_state_lock(void)
{
	char *path, *dir = NULL;
	pid_t pid;

	if (vigild.state_dirfd == -1)
		return;
	xasprintf(&path, "%s/vigild.lock", vigild.state_dir);
	if ((vigild_state_lock_fd =
	            lock_openat(vigild.state_dirfd, "vigild.lock")) == -1)
		fatal("%s", path);
	if (lock_try(vigild_state_lock_fd) == -1) {
		if (errno != EAGAIN)
			fatal("lock %s", path);
		if (lock_owner_read(vigild_state_lock_fd, &pid, &dir) == 0)
			fatalx("another vigild (pid %ld, runtime directory %s) "
			       "is running with state directory %s",
			    (long)pid, dir, vigild.state_dir);
		fatalx("another vigild is running with state directory %s "
		       "(%s is locked)",
		    vigild.state_dir, path);
	}
	if (lock_owner_write(
	        vigild_state_lock_fd, getpid(), vigild.runtime_dir) == -1)
		log_warn("write %s", path);
	free(path);
}

/*
 * Take RUNTIME/vigild.lock, then STATE_DIR/vigild.lock, or exit if another
 * vigild has either.
 */
static void
vigild_lock(void)
{
	struct lock_holder h;
	char *path;

	xasprintf(&path, "%s/vigild.lock", vigild.runtime_dir);
	if ((vigild.lock_fd = lock_open(path)) == -1)
		fatal("%s", path);
	if (lock_try(vigild.lock_fd) == -1) {
		if (errno != EAGAIN)
			fatal("lock %s", path);
		if (lock_holder_read(vigild.lock_fd, &h) == 0)
			fatalx("another vigild (pid %ld) is running with "
			       "runtime directory %s",
			    (long)h.pid, vigild.runtime_dir);
		fatalx("another vigild is running with runtime directory %s "
		       "(%s is locked)",
		    vigild.runtime_dir, path);
	}
	h.pid = getpid();
	h.pgid = getpgrp();
	h.starttime = 0;
	h.vigild = getpid();
	if (lock_holder_write(vigild.lock_fd, &h) == -1)
		log_warn("write %s", path);
	free(path);
	vigild_state_lock();
}

/*
 * vigild -t: warn of each valid job whose command cannot run (not found
 * on its PATH, not executable by its user); a warning, not an error, as
 * the command may be installed before the job starts.  Returns how many.
 */
static size_t
vigild_check_commands(const struct conf_jobs *jobs)
{
	size_t i, n = 0;
	char *why;

	for (i = 0; i < jobs->n; i++) {
		if (spawn_command_check(jobs->specs[i], &why) == 0)
			continue;
		fprintf(stderr, "%s: warning: %s\n", jobs->specs[i]->path, why);
		free(why);
		n++;
	}
	return (n);
}

/* Load jobs.d: report broken files, supervise the rest. */
static int
vigild_load_jobs(int check)
{
	struct conf_jobs jobs;
	struct conf_errors errs;
	size_t i, nerr, nwarn = 0;

	conf_errors_init(&errs);
	memset(&jobs, 0, sizeof(jobs));
	(void)conf_jobs_load(vigild.jobs_dir, &jobs, &errs);
	cluster_jobs_check(&jobs, &errs);
	if (check)
		track_check_init();
	track_jobs_check(&jobs, &errs, check, &nwarn);
	nerr = vigild_print_errors(&errs, stderr);
	if (!check)
		reload_broken_set(vigild.jobs_dir, &errs);
	conf_errors_clear(&errs);
	if (check) {
		nwarn += vigild_check_commands(&jobs);
		printf("%s: %zu job%s valid, %zu error%s", vigild.jobs_dir,
		    jobs.n, jobs.n == 1 ? "" : "s", nerr, nerr == 1 ? "" : "s");
		if (nwarn > 0)
			printf(", %zu warning%s", nwarn, nwarn == 1 ? "" : "s");
		printf("\n");
		conf_jobs_clear(&jobs);
		return (nerr == 0 ? 0 : 1);
	}
	if (nerr > 0)
		log_warnx("%zu error%s in %s: those job files are skipped "
		          "(status shows them BROKEN)",
		    nerr, nerr == 1 ? "" : "s", vigild.jobs_dir);
	for (i = 0; i < jobs.n; i++)
		registry_add(jobs.specs[i]);
	free(jobs.specs);
	return (0);
}

static void
vigild_load_config(const struct vigild_options *o)
{
	struct conf_errors errs;
	enum log_level level;
	char *path = NULL;

	conf_errors_init(&errs);
	if (o->config == NULL)
		path = conf_default_path();
	vigild.conf =
	    conf_load(o->config ? o->config : path, o->config != NULL, &errs);
	free(path);
	if (vigild.conf == NULL) {
		vigild_print_errors(&errs, stderr);
		exit(1);
	}
	conf_errors_clear(&errs);
	vigild_override(&vigild.conf->jobs_dir, o->jobs_dir);
	vigild_override(&vigild.conf->runtime_dir, o->runtime_dir);
	vigild_override(&vigild.conf->state_dir, o->state_dir);
	vigild_override(&vigild.conf->log_dir, o->log_dir);
	vigild_tidy_path(&vigild.conf->jobs_dir);
	vigild_tidy_path(&vigild.conf->runtime_dir);
	vigild_tidy_path(&vigild.conf->state_dir);
	vigild_tidy_path(&vigild.conf->log_dir);
	vigild.jobs_dir = vigild.conf->jobs_dir;
	vigild.runtime_dir = vigild.conf->runtime_dir;
	vigild.state_dir = vigild.conf->state_dir;
	vigild.log_dir = vigild.conf->log_dir;
	if (o->log_level != NULL || vigild.conf->log_level != NULL) {
		if (log_level_parse(
		        o->log_level ? o->log_level : vigild.conf->log_level,
		        &level) == -1)
			fatalx("unknown log level: %s",
			    o->log_level ? o->log_level :
			                   vigild.conf->log_level);
		log_set_level(level);
	}
}

/*
 * Open one of vigild's directories, path at atfd (shown as shown), made
 * with mode if missing, and checked (lib/safedir.c).  A directory that
 * exists but is not safe ends vigild; so does any other error if must is
 * set, else it is a warning and -1 is returned.
 */
static int
vigild_dir(int atfd, const char *path, const char *shown, mode_t mode, int must)
{
	char *cause = NULL;
	int fd;

	if ((fd = safedir_open(atfd, path, mode, &cause)) != -1)
		return (fd);
	if (errno == EPERM)
		fatalx("%s: %s: refusing to use it (vigild, uid %lu, needs a "
		       "directory of its own that no other user or group may "
		       "write to)",
		    shown, cause, (unsigned long)geteuid());
	if (must)
		fatalx("%s: %s", shown, cause);
	log_warnx("%s: %s", shown, cause);
	free(cause);
	return (-1);
}

/* Narrow the mode (and group) of fd, at shown, with a warning if needed. */
static void
vigild_tighten(int fd, const char *shown, mode_t max, gid_t gid)
{
	char *what = NULL;

	switch (safedir_tighten(fd, max, gid, &what)) {
	case -1:
		log_warn("%s: cannot narrow its mode to %04o", shown,
		    (unsigned int)max);
		break;
	case 1:
		log_warnx(
		    "%s: was open to more than it should be: %s", shown, what);
		break;
	}
	free(what);
}

/*
 * With socket_group, the state directory and state.db's files are that
 * group's to read (0750, 0640), also when they were made before, or by
 * systemd's StateDirectoryMode=0700: give fd (at shown) group gid and the
 * group bits of want it lacks, said in the log.  Wider bits are
 * vigild_tighten's.
 */
static void
vigild_share(int fd, const char *shown, mode_t want, gid_t gid)
{
	struct stat st;
	mode_t mode;

	if (gid == (gid_t)-1 || fstat(fd, &st) == -1)
		return;
	mode = (st.st_mode & 07707) | (want & 070);
	if (st.st_gid == gid && (st.st_mode & 07777) == mode)
		return;
	if (fchown(fd, (uid_t)-1, gid) == -1 || fchmod(fd, mode) == -1) {
		log_warn(
		    "%s: cannot make it group %lu's to read (socket_group)",
		    shown, (unsigned long)gid);
		return;
	}
	log_info("%s: mode %04o group %lu, now %04o group %lu "
	         "(socket_group)",
	    shown, (unsigned int)(st.st_mode & 07777), (unsigned long)st.st_gid,
	    (unsigned int)mode, (unsigned long)gid);
}

/*
 * state.db and its -wal and -shm hold queue payloads and output tails:
 * narrow their modes to max (0600, or 0640 with socket_group), one warning
 * for each file changed.  A symbolic link is left alone (store_open
 * refuses it).
 */
static void
vigild_state_files(mode_t max, gid_t gid)
{
	static const char *names[] = { "state.db", "state.db-wal",
		"state.db-shm" };
	struct stat st;
	char *shown;
	size_t i;
	int fd;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		fd = openat(vigild.state_dirfd, names[i],
		    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd == -1)
			continue;
		xasprintf(&shown, "%s/%s", vigild.state_dir, names[i]);
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
			vigild_tighten(fd, shown, max, gid);
			vigild_share(fd, shown, max, gid);
		}
		free(shown);
		close(fd);
	}
}

/*
 * Is the runtime directory in a directory everyone may write to, as
 * /tmp/vigil-UID (the default without XDG_RUNTIME_DIR)?  Then it must be
 * private: mode 0700.
 */
static int
vigild_runtime_is_shared(void)
{
	struct stat st;
	char *parent, *slash;
	int shared = 0;

	parent = xstrdup(vigild.runtime_dir);
	if ((slash = strrchr(parent, '/')) != NULL) {
		slash[slash == parent ? 1 : 0] = '\0';
		shared = stat(parent, &st) == 0 && (st.st_mode & S_IWOTH);
	}
	free(parent);
	return (shared);
}

/* The state directory (0700, or 0750 with socket_group) and its files. */
static void
vigild_state_dir(void)
{
	const struct conf *c = vigild.conf;
	gid_t gid = c->has_socket_gid ? c->socket_gid : (gid_t)-1;
	mode_t mode = c->has_socket_gid ? 0750 : 0700;
	struct stat st;
	int existed;

	existed = lstat(vigild.state_dir, &st) == 0;
	/* state.db is never in the way: without it, vigild goes on. */
	vigild.state_dirfd =
	    vigild_dir(AT_FDCWD, vigild.state_dir, vigild.state_dir, mode, 0);
	if (vigild.state_dirfd == -1)
		return;
	/* A new directory: its group is socket_group, with no warning. */
	if (!existed && gid != (gid_t)-1 &&
	    fchown(vigild.state_dirfd, (uid_t)-1, gid) == -1)
		log_warn("%s: chgrp %lu", vigild.state_dir, (unsigned long)gid);
	vigild_tighten(vigild.state_dirfd, vigild.state_dir, mode, gid);
	vigild_share(vigild.state_dirfd, vigild.state_dir, mode, gid);
	vigild_state_files(mode & 0666, gid);
}

/*
 * Make (if missing), open and check the runtime, locks, state and log
 * directories, keeping their descriptors in vigild.  Files in them are
 * opened relative to those, so no link or swapped directory can send
 * vigild's writes elsewhere.
 */
static void
vigild_make_dirs(void)
{
	char *locks;
	int private = vigild_runtime_is_shared();

	vigild.runtime_dirfd = vigild_dir(AT_FDCWD, vigild.runtime_dir,
	    vigild.runtime_dir, private ? 0700 : 0755, 1);
	if (private)
		vigild_tighten(
		    vigild.runtime_dirfd, vigild.runtime_dir, 0700, (gid_t)-1);
	xasprintf(&locks, "%s/locks", vigild.runtime_dir);
	vigild.locks_dirfd =
	    vigild_dir(vigild.runtime_dirfd, "locks", locks, 0755, 1);
	free(locks);
	vigild_state_dir();
	vigild.log_dirfd =
	    vigild_dir(AT_FDCWD, vigild.log_dir, vigild.log_dir, 0755, 1);
}

/* Close the directories of vigild_make_dirs, at exit. */
static void
vigild_close_dirs(void)
{
	int *fds[] = { &vigild.runtime_dirfd, &vigild.locks_dirfd,
		&vigild.state_dirfd, &vigild.log_dirfd };
	size_t i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] != -1)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

/*
 * Signals whose default action would end vigild without stopping its
 * jobs, and that mean nothing to it: blocked here, read through the loop
 * and ignored there (signals.c), so that a stray kill -USR1 or a
 * power-fail signal does not leave the jobs unsupervised.  Not these:
 * the faults a program raises itself (SEGV, BUS, FPE, ILL, TRAP, ABRT,
 * SYS), which must not be blocked, and QUIT, kept as the deliberate
 * immediate exit (vigild.8, SIGNALS).  Ignoring by SIG_IGN instead would
 * pass on to every job across exec.
 */
static const int vigild_sig_ignored[] = {
	SIGUSR1,
	SIGALRM,
	SIGVTALRM,
	SIGPROF,
	SIGXCPU,
	SIGXFSZ,
#ifdef SIGSTKFLT
	SIGSTKFLT,
#endif
#ifdef SIGIO
	SIGIO,
#endif
#ifdef SIGPWR
	SIGPWR,
#endif
};

/*
 * Reset inherited signal dispositions, block the signals the loop reads
 * through signalfd (those it acts on, and those it ignores: the list
 * above and every real-time signal), and ignore SIGPIPE.  Children get an
 * empty mask and default dispositions back (spawn.c).
 */
static void
vigild_signals(void)
{
	struct sigaction sa;
	sigset_t set;
	size_t i;
	int sig;

	/* Jobs inherit ignored signals: start from default dispositions. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (sig = 1; sig < NSIG; sig++)
		(void)sigaction(sig, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR2);
	for (i = 0; i < sizeof(vigild_sig_ignored) / sizeof(int); i++)
		sigaddset(&set, vigild_sig_ignored[i]);
	for (sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		sigaddset(&set, sig);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1)
		fatal("sigprocmask");
	signal(SIGPIPE, SIG_IGN);
}

static void
vigild_open_socket(void)
{
	char *path, *cause = NULL;
	gid_t gid = (gid_t)-1;

	if (vigild.conf->has_socket_gid)
		gid = vigild.conf->socket_gid;
	xasprintf(&path, "%s/vigild.sock", vigild.runtime_dir);
	if (server_open(path, vigild.conf->socket_mode, gid, cmd_dispatch,
	        &cause) == -1)
		fatalx("control socket %s", cause);
	free(path);
	if (http_open(cmd_dispatch, &cause) == -1)
		fatalx("%s", cause);
}

/*
 * Once every instance had its start: those that were failing when the
 * last vigild stopped go on from their failures (alert.c).
 */
static void
vigild_alerts_resume(void)
{
	struct job *j;
	int i;

	RB_FOREACH(j, job_tree, &vigild.jobs) {
		for (i = 0; i < job_ninsts(j); i++)
			alert_resume(job_inst(j, i));
	}
}

/* The supervision core: its modules, wired together. */
static void
vigild_core_init(void)
{
	static const struct inst_hooks hooks = {
		.held_back = deps_wait,
		.let_go = deps_unwait,
		.fork = run_begin,
		.stage = run_stage,
		.ended = run_end,
		.close_stdin = run_stdin_close,
		.forget = run_clear,
		.nforking = run_spawning,
		.signal = run_signal,
		.alive = run_alive,
		.session_remove = ready_session_remove,
		.probe_sync = prober_sync,
	};

	/*
	 * Who hears of an instance's changes, in this order: systemd's
	 * STATUS=, the dependencies (at shutdown, a job down lets what it
	 * needs stop; a RUNNING one lets waiting starts go), the clients
	 * waiting, the counts kept of an instance that goes, the requests
	 * taken for it by the cluster and its lease, the reload swap and the
	 * end of the shutdown, hooks, alerts.
	 */
	static const struct inst_observer *const observers[] = {
		&sdnotify_observer,
		&deps_observer,
		&waiters_observer,
		&counters_observer,
		&cluster_taken_observer,
		&cluster_lease_observer,
		&registry_observer,
		&hook_observer,
		&alert_observer,
	};
	size_t i;

	inst_hooks = hooks;
	for (i = 0; i < sizeof(observers) / sizeof(observers[0]); i++)
		inst_observe(observers[i]);
	cluster_waiters = waiters_notify;
	signals_init();
	sdnotify_init();
	track_init();
	periodic_init();
	ready_open();
}

static void
vigild_core_free(void)
{
	registry_free_all();
	watch_free();
	deps_free();
	ready_close();
	sdnotify_free();
	signals_free();
	periodic_free();
	track_free();
}

int
main(int argc, char **argv)
{
	struct vigild_options o;
	char *cause = NULL;
	int r;

	memset(&o, 0, sizeof(o));
	log_init("vigild", LOG_LEVEL_INFO);
	vigild_parse_args(argc, argv, &o);
	vigild_sanitize_stdio();
	memset(&vigild, 0, sizeof(vigild));
	RB_INIT(&vigild.jobs);
	vigild.lock_fd = -1;
	vigild.runtime_dirfd = vigild.locks_dirfd = -1;
	vigild.state_dirfd = vigild.log_dirfd = -1;
	vigild_load_config(&o);
	/* The cluster section as libpq reads it: the same for -t. */
	if (cluster_check(&cause) == -1) {
		if (!o.check)
			fatalx("%s", cause);
		fprintf(stderr, "%s\n", cause);
		exit(1);
	}
	if (o.check)
		exit(vigild_load_jobs(1));

	vigild_make_dirs();
	vigild_lock();
	vigild_signals();
	spawn_init();
	if ((r = evloop_open()) < 0)
		fatalx("sd_event_default: %s", strerror(-r));
	vigild_core_init();
	(void)vigild_load_jobs(0);
	state_watch_start();
	state_open();
	state_intents_load();
	state_alerts_load();
	vigild_open_socket();
	if (cluster_open(&cause) == -1)
		fatalx("%s", cause);
	log_info("vigild %s started: %zu jobs from %s", PACKAGE_VERSION,
	    vigild.njobs, vigild.jobs_dir);
	registry_start_all();
	vigild_alerts_resume();
	sdnotify_ready();

	if ((r = sd_event_loop(evloop_event())) < 0)
		log_warnx("sd_event_loop: %s", strerror(-r));
	log_info("all jobs stopped, exiting");
	hook_free_all();
	counters_free_all();
	joblog_free_all();
	http_close();
	server_close();
	cluster_close();
	vigild_core_free();
	reload_broken_set(NULL, NULL);
	state_watch_stop();
	state_close();
	conf_free(vigild.conf);
	evloop_close();
	close(vigild.lock_fd);
	if (vigild_state_lock_fd != -1)
		close(vigild_state_lock_fd);
	vigild_close_dirs();
	return (vigild.exit_code);
}
