/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Unit tests for lib/conf.c: job files and vigil.conf written into a
 * temporary directory, loaded, and checked value by value and error by
 * error.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "duration.h"
#include "test.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif
#ifndef LOCALSTATEDIR
#define LOCALSTATEDIR "/var"
#endif
#ifndef RUNSTATEDIR
#define RUNSTATEDIR "/run"
#endif

#define SEC DURATION_USEC_PER_SEC
#define MSEC DURATION_USEC_PER_MSEC

static char tmpdir[] = "/tmp/test-conf.XXXXXX";
static char path[4096];
static struct conf_errors errs;

/* Remove every file in dir, then dir. */
static void
rm_dir(const char *dir)
{
	DIR *d;
	struct dirent *de;
	char p[1024];

	if ((d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
		if (unlink(p) != 0)
			rm_dir(p);
	}
	closedir(d);
	rmdir(dir);
}

/* Write text to dir/name; the path is left in path. */
static void
write_in(const char *dir, const char *name, const char *text)
{
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if ((f = fopen(path, "w")) == NULL || fputs(text, f) == EOF ||
	    fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

/* Make an empty directory under tmpdir; its path is left in path. */
static const char *
make_dir(const char *name)
{
	static char dir[4096];

	snprintf(dir, sizeof dir, "%s/%s", tmpdir, name);
	rm_dir(dir);
	if (mkdir(dir, 0700) != 0) {
		perror(dir);
		exit(1);
	}
	return (dir);
}

/* Write a job file "job.conf" in tmpdir and load it. */
static struct job_spec *
load(const char *text)
{
	conf_errors_clear(&errs);
	write_in(tmpdir, "job.conf", text);
	return (job_spec_load(path, "job", &errs));
}

/* Print the current errors, to explain a failure. */
static void
dump_errors(void)
{
	size_t i;

	for (i = 0; i < errs.n; i++)
		fprintf(stderr, "    error: %s\n", errs.msgs[i]);
}

/* Is there an error equal to the formatted string? */
static int __attribute__((format(printf, 1, 2))) has_error(const char *fmt, ...)
{
	va_list ap;
	char want[8192];
	size_t i;

	va_start(ap, fmt);
	vsnprintf(want, sizeof want, fmt, ap);
	va_end(ap);
	for (i = 0; i < errs.n; i++) {
		if (strcmp(errs.msgs[i], want) == 0)
			return (1);
	}
	fprintf(stderr, "    no error \"%s\"\n", want);
	dump_errors();
	return (0);
}

/* Load a job file text that must fail with exactly the error want. */
static int
fails_with(const char *text, const char *want)
{
	struct job_spec *spec;
	char full[16384];

	if ((spec = load(text)) != NULL) {
		fprintf(stderr, "    loaded: %s", text);
		job_spec_free(spec);
		return (0);
	}
	snprintf(full, sizeof full, "%s:%s", path, want);
	if (errs.n != 1 || strcmp(errs.msgs[0], full) != 0) {
		fprintf(stderr, "    want \"%s\"\n", full);
		dump_errors();
		return (0);
	}
	return (1);
}

TEST(defaults)
{
	struct job_spec *spec;
	size_t i;
	int code;

	spec = load("command = \"/bin/sleep 10\"\n");
	if (spec == NULL)
		dump_errors();
	ASSERT_OK(spec != NULL);
	ASSERT_STREQ(spec->name, "job");
	ASSERT_STREQ(spec->path, path);
	ASSERT_EQ(spec->argc, 2);
	ASSERT_STREQ(spec->argv[0], "/bin/sleep");
	ASSERT_STREQ(spec->argv[1], "10");
	ASSERT_OK(spec->argv[2] == NULL);
	ASSERT_EQ(spec->kind, CONF_KIND_SERVICE);
	ASSERT_EQ(spec->instances, 1);
	ASSERT_EQ(spec->autostart, 1);
	ASSERT_EQ(spec->restart, CONF_RESTART_ALWAYS);
	for (code = 0; code < 256; code++)
		ASSERT_EQ(job_spec_is_success(spec, code), code == 0);
	ASSERT_EQ(spec->min_uptime, SEC);
	ASSERT_EQ(spec->restart_delay, 100 * MSEC);
	ASSERT_EQ(spec->restart_delay_max, 30 * SEC);
	ASSERT_EQ(spec->max_restarts, 0);
	ASSERT_EQ(spec->ready, CONF_READY_EXEC);
	ASSERT_EQ(spec->ready_timeout, 90 * SEC);
	ASSERT_EQ(spec->ndepends, 0);
	ASSERT_EQ(spec->stop_signal, SIGTERM);
	ASSERT_EQ(spec->stop_timeout, 10 * SEC);
	ASSERT_EQ(spec->kill_group, 1);
	ASSERT_EQ(spec->pdeath_signal, SIGTERM);
	ASSERT_OK(spec->user == NULL && spec->group == NULL);
	ASSERT_EQ(spec->has_uid, 0);
	ASSERT_EQ(spec->has_gid, 0);
	ASSERT_STREQ(spec->directory, "/");
	ASSERT_EQ(spec->nenvironment, 0);
	ASSERT_OK(spec->env_file == NULL);
	ASSERT_EQ(spec->umask, -1);
	ASSERT_EQ(spec->has_nice, 0);
	for (i = 0; i < CONF_LIMIT_COUNT; i++)
		ASSERT_EQ(spec->limits[i].set, 0);
	ASSERT_EQ(spec->limits[CONF_LIMIT_NOFILE].resource, RLIMIT_NOFILE);
	ASSERT_EQ(spec->limits[CONF_LIMIT_MEMLOCK].resource, RLIMIT_MEMLOCK);
	ASSERT_EQ(spec->out, CONF_OUTPUT_FILE);
	ASSERT_EQ(spec->err, CONF_OUTPUT_FILE);
	ASSERT_EQ(spec->log_max_size, 10 * 1024 * 1024);
	ASSERT_EQ(spec->log_keep, 5);
	ASSERT_EQ(spec->log_timestamps, 0);
	ASSERT_EQ(spec->watchdog, 0);
	ASSERT_EQ(spec->cluster, 0);
	ASSERT_EQ(spec->every, 0);
	ASSERT_OK(spec->schedule == NULL);
	ASSERT_EQ(spec->catch_up, 0);
	ASSERT_EQ(spec->random_delay, 0);
	ASSERT_EQ(spec->timeout, 0);
	ASSERT_EQ(spec->concurrency, 1);
	ASSERT_EQ(spec->max_attempts, 5);
	ASSERT_EQ(spec->retry_delay, SEC);
	ASSERT_EQ(spec->retry_delay_max, 600 * SEC);
	ASSERT_OK(spec->failure_argv == NULL);
	ASSERT_EQ(spec->hook_timeout, 30 * SEC);
	job_spec_free(spec);
	ASSERT_EQ(errs.n, 0);
	return (0);
}

/* on_failure and hook_timeout, for every kind. */
TEST(hooks)
{
	static const char *const kinds[] = { "",
		"kind = periodic\nevery = 1m\n", "kind = queue\n" };
	struct job_spec *spec;
	char text[256];
	size_t i;

	for (i = 0; i < 3; i++) {
		snprintf(text, sizeof text,
		    "command = x\n%son_failure = \"/bin/alert --job x\"\n"
		    "hook_timeout = 5s\n",
		    kinds[i]);
		if ((spec = load(text)) == NULL)
			dump_errors();
		ASSERT_OK(spec != NULL);
		ASSERT_STREQ(spec->failure_argv[0], "/bin/alert");
		ASSERT_STREQ(spec->failure_argv[2], "x");
		ASSERT_OK(spec->failure_argv[3] == NULL);
		ASSERT_EQ(spec->hook_timeout, 5 * SEC);
		job_spec_free(spec);
	}
	spec = load("command = x\non_failure = {\"/bin/a b\", \"c\"}\n");
	ASSERT_OK(spec != NULL);
	ASSERT_STREQ(spec->failure_argv[0], "/bin/a b");
	job_spec_free(spec);
	ASSERT_OK(fails_with("command = x\non_failure = \"\"\n",
	    "2: on_failure: empty command"));
	ASSERT_OK(fails_with("command = x\nhook_timeout = 5\n",
	    "2: hook_timeout: invalid duration \"5\": missing unit"));
	return (0);
}

/* A service with every option it accepts set away from its default. */
static const char service_text[] =
    "# every service option\n"
    "command = { \"/usr/bin/my server\", \"--port\", \"80\" }\n"
    "kind = service\n"
    "instances = 3\n"
    "autostart = false\n"
    "restart = on-failure\n"
    "success_exit_codes = { 0, 2, 255 }\n"
    "min_uptime = \"2s\"\n"
    "restart_delay = \"250ms\"\n"
    "restart_delay_max = \"1m\"\n"
    "max_restarts = 7\n"
    "ready = notify\n"
    "ready_timeout = \"20s\"\n"
    "depends = { \"db\", \"cache-1\", \"db\" }\n"
    "stop_signal = SIGINT\n"
    "stop_timeout = \"3s\"\n"
    "kill_group = no\n"
    "parent_death_signal = \"KILL\"\n"
    "user = root\n"
    "group = \"0\"\n"
    "directory = \"/srv/app\"\n"
    "environment = { \"A=1\", \"_B=x=y\", \"EMPTY=\" }\n"
    "env_file = \"/etc/default/app\"\n"
    "umask = \"027\"\n"
    "nice = -5\n"
    "limit_nofile = \"1024:4096\"\n"
    "limit_core = infinity\n"
    "limit_nproc = 100\n"
    "limit_as = \"1G\"\n"
    "limit_data = \"512M:unlimited\"\n"
    "limit_stack = \"8M\"\n"
    "limit_fsize = \"10K\"\n"
    "limit_cpu = 60\n"
    "limit_memlock = \"64K:64K\"\n"
    "stdout = journal\n"
    "stderr = null\n"
    "log_max_size = \"1M\"\n"
    "log_keep = 0\n"
    "log_timestamps = true\n"
    "watchdog = \"30s\"\n"
    "cluster = true\n";

TEST(service_options)
{
	struct job_spec *spec;
	struct conf_rlimit *l;

	if ((spec = load(service_text)) == NULL)
		dump_errors();
	ASSERT_OK(spec != NULL);
	ASSERT_EQ(spec->argc, 3);
	ASSERT_STREQ(spec->argv[0], "/usr/bin/my server");
	ASSERT_STREQ(spec->argv[2], "80");
	ASSERT_EQ(spec->instances, 3);
	ASSERT_EQ(spec->autostart, 0);
	ASSERT_EQ(spec->restart, CONF_RESTART_ON_FAILURE);
	ASSERT_OK(job_spec_is_success(spec, 0) && job_spec_is_success(spec, 2));
	ASSERT_OK(job_spec_is_success(spec, 255));
	ASSERT_OK(
	    !job_spec_is_success(spec, 1) && !job_spec_is_success(spec, 3));
	ASSERT_OK(!job_spec_is_success(spec, 256));
	ASSERT_OK(!job_spec_is_success(spec, -1));
	ASSERT_EQ(spec->min_uptime, 2 * SEC);
	ASSERT_EQ(spec->restart_delay, 250 * MSEC);
	ASSERT_EQ(spec->restart_delay_max, 60 * SEC);
	ASSERT_EQ(spec->max_restarts, 7);
	ASSERT_EQ(spec->ready, CONF_READY_NOTIFY);
	ASSERT_EQ(spec->ready_timeout, 20 * SEC);
	ASSERT_EQ(spec->ndepends, 2);
	ASSERT_STREQ(spec->depends[0], "db");
	ASSERT_STREQ(spec->depends[1], "cache-1");
	ASSERT_OK(spec->depends[2] == NULL);
	ASSERT_EQ(spec->stop_signal, SIGINT);
	ASSERT_EQ(spec->stop_timeout, 3 * SEC);
	ASSERT_EQ(spec->kill_group, 0);
	ASSERT_EQ(spec->pdeath_signal, SIGKILL);
	ASSERT_STREQ(spec->user, "root");
	ASSERT_OK(spec->has_uid && spec->uid == 0);
	ASSERT_STREQ(spec->group, "0");
	ASSERT_OK(spec->has_gid && spec->gid == 0);
	ASSERT_STREQ(spec->directory, "/srv/app");
	ASSERT_EQ(spec->nenvironment, 3);
	ASSERT_STREQ(spec->environment[1], "_B=x=y");
	ASSERT_STREQ(spec->environment[2], "EMPTY=");
	ASSERT_OK(spec->environment[3] == NULL);
	ASSERT_STREQ(spec->env_file, "/etc/default/app");
	ASSERT_EQ(spec->umask, 027);
	ASSERT_OK(spec->has_nice && spec->nice == -5);
	l = spec->limits;
	ASSERT_OK(l[CONF_LIMIT_NOFILE].set);
	ASSERT_EQ(l[CONF_LIMIT_NOFILE].rl.rlim_cur, 1024);
	ASSERT_EQ(l[CONF_LIMIT_NOFILE].rl.rlim_max, 4096);
	ASSERT_OK(l[CONF_LIMIT_CORE].rl.rlim_cur == RLIM_INFINITY);
	ASSERT_OK(l[CONF_LIMIT_CORE].rl.rlim_max == RLIM_INFINITY);
	ASSERT_EQ(l[CONF_LIMIT_NPROC].rl.rlim_max, 100);
	ASSERT_EQ(l[CONF_LIMIT_AS].rl.rlim_cur, 1024 * 1024 * 1024);
	ASSERT_EQ(l[CONF_LIMIT_DATA].rl.rlim_cur, 512 * 1024 * 1024);
	ASSERT_OK(l[CONF_LIMIT_DATA].rl.rlim_max == RLIM_INFINITY);
	ASSERT_EQ(l[CONF_LIMIT_STACK].rl.rlim_cur, 8 * 1024 * 1024);
	ASSERT_EQ(l[CONF_LIMIT_FSIZE].rl.rlim_cur, 10 * 1024);
	ASSERT_EQ(l[CONF_LIMIT_CPU].rl.rlim_cur, 60);
	ASSERT_EQ(l[CONF_LIMIT_CPU].resource, RLIMIT_CPU);
	ASSERT_EQ(l[CONF_LIMIT_MEMLOCK].rl.rlim_max, 64 * 1024);
	ASSERT_EQ(spec->out, CONF_OUTPUT_JOURNAL);
	ASSERT_EQ(spec->err, CONF_OUTPUT_NULL);
	ASSERT_EQ(spec->log_max_size, 1024 * 1024);
	ASSERT_EQ(spec->log_keep, 0);
	ASSERT_EQ(spec->log_timestamps, 1);
	ASSERT_EQ(spec->watchdog, 30 * SEC);
	ASSERT_EQ(spec->cluster, 1);
	job_spec_free(spec);
	return (0);
}

TEST(periodic_and_queue_options)
{
	struct job_spec *spec;

	spec = load("command = \"backup\"\nkind = periodic\n"
	            "schedule = \"*/5 * * * 1-5\"\ncatch_up = yes\n"
	            "random_delay = \"30s\"\ntimeout = \"1h\"\n"
	            "stdout = inherit\n");
	if (spec == NULL)
		dump_errors();
	ASSERT_OK(spec != NULL);
	ASSERT_EQ(spec->kind, CONF_KIND_PERIODIC);
	ASSERT_STREQ(spec->schedule, "*/5 * * * 1-5");
	ASSERT_EQ(spec->every, 0);
	ASSERT_EQ(spec->catch_up, 1);
	ASSERT_EQ(spec->random_delay, 30 * SEC);
	ASSERT_EQ(spec->timeout, 3600 * SEC);
	ASSERT_EQ(spec->out, CONF_OUTPUT_INHERIT);
	ASSERT_EQ(spec->input, CONF_STDIN_NULL);
	job_spec_free(spec);

	spec = load("command = \"tick\"\nkind = \"periodic\"\nevery = 10s\n"
	            "stdin = pipe\n");
	ASSERT_OK(spec != NULL);
	ASSERT_EQ(spec->input, CONF_STDIN_PIPE);
	ASSERT_EQ(spec->every, 10 * SEC);
	ASSERT_OK(spec->schedule == NULL);
	job_spec_free(spec);

	spec = load("command = \"work\"\nkind = queue\nconcurrency = 4\n"
	            "max_attempts = 9\nretry_delay = \"2s\"\n"
	            "retry_delay_max = \"1h\"\ntimeout = \"5m\"\n");
	if (spec == NULL)
		dump_errors();
	ASSERT_OK(spec != NULL);
	ASSERT_EQ(spec->kind, CONF_KIND_QUEUE);
	ASSERT_EQ(spec->concurrency, 4);
	ASSERT_EQ(spec->max_attempts, 9);
	ASSERT_EQ(spec->retry_delay, 2 * SEC);
	ASSERT_EQ(spec->retry_delay_max, 3600 * SEC);
	ASSERT_EQ(spec->timeout, 300 * SEC);
	ASSERT_EQ(spec->drain_timeout, 10 * SEC); /* stop_timeout's */
	job_spec_free(spec);

	spec = load("command = \"work\"\nkind = queue\nstop_timeout = 7s\n");
	ASSERT_OK(spec != NULL);
	ASSERT_EQ(spec->drain_timeout, 7 * SEC);
	job_spec_free(spec);
	spec = load("command = \"work\"\nkind = queue\ndrain_timeout = 0s\n");
	ASSERT_OK(spec != NULL);
	ASSERT_EQ(spec->drain_timeout, 0);
	ASSERT_EQ(spec->stop_timeout, 10 * SEC);
	job_spec_free(spec);
	return (0);
}

TEST(command_forms)
{
	struct job_spec *spec;

	/* A string is split with quotes and no expansion. */
	spec = load("command = 'sh -c \"echo $HOME\" x\\ y'\n");
	ASSERT_OK(spec != NULL);
	ASSERT_EQ(spec->argc, 4);
	ASSERT_STREQ(spec->argv[2], "echo $HOME");
	ASSERT_STREQ(spec->argv[3], "x y");
	job_spec_free(spec);

	/* A list of one word is that word, spaces included. */
	spec = load("command = { \"/opt/my app/run\" }\n");
	ASSERT_OK(spec != NULL);
	ASSERT_EQ(spec->argc, 1);
	ASSERT_STREQ(spec->argv[0], "/opt/my app/run");
	job_spec_free(spec);

	/* The last assignment wins, in either form. */
	spec = load("command = { \"a b\" }\ncommand = \"c d\"\n");
	ASSERT_OK(spec != NULL);
	ASSERT_EQ(spec->argc, 2);
	ASSERT_STREQ(spec->argv[0], "c");
	job_spec_free(spec);
	spec = load("command = \"c d\"\ncommand = {\n \"a b\"\n}\n");
	ASSERT_OK(spec != NULL);
	ASSERT_EQ(spec->argc, 1);
	ASSERT_STREQ(spec->argv[0], "a b");
	job_spec_free(spec);
	return (0);
}

TEST(parent_death_signal_follows_stop_signal)
{
	struct job_spec *spec;

	spec = load("command = x\nstop_signal = QUIT\n");
	ASSERT_OK(spec != NULL);
	ASSERT_EQ(spec->stop_signal, SIGQUIT);
	ASSERT_EQ(spec->pdeath_signal, SIGQUIT);
	job_spec_free(spec);
	spec =
	    load("command = x\nstop_signal = 2\nparent_death_signal = HUP\n");
	ASSERT_OK(spec != NULL);
	ASSERT_EQ(spec->stop_signal, SIGINT);
	ASSERT_EQ(spec->pdeath_signal, SIGHUP);
	job_spec_free(spec);
	return (0);
}

/* Each bad value, on line 2, with its exact message. */
static const struct {
	const char *line;
	const char *error;
} bad_values[] = {
	{ "restart_delay = \"10x\"",
	    "restart_delay: invalid duration \"10x\"" },
	{ "min_uptime = 10",
	    "min_uptime: invalid duration \"10\": missing unit" },
	{ "stop_timeout = -1s", "stop_timeout: invalid duration \"-1s\"" },
	{ "ready_timeout = \"1 s\"",
	    "ready_timeout: invalid duration \"1 s\": no space allowed before "
	    "the unit" },
	{ "instances = 0", "instances: 0 is not between 1 and 1000" },
	{ "instances = 1001", "instances: 1001 is not between 1 and 1000" },
	{ "instances = abc", "instances: invalid number \"abc\"" },
	{ "instances = \"2 \"", "instances: invalid number \"2 \"" },
	{ "max_restarts = -1", "max_restarts: -1 is less than 0" },
	{ "autostart = maybe",
	    "autostart: invalid boolean \"maybe\" (true or false)" },
	{ "kill_group = 1",
	    "kill_group: invalid boolean \"1\" (true or false)" },
	{ "kind = daemon",
	    "kind: invalid value \"daemon\" (service, periodic or queue)" },
	{ "restart = sometimes",
	    "restart: invalid value \"sometimes\" "
	    "(always, on-failure or never)" },
	{ "ready = socket",
	    "ready: invalid value \"socket\" (exec, notify, tcp:PORT, "
	    "tcp:HOST:PORT, http:URL or exec:COMMAND)" },
	{ "ready = \"tcp:notaport\"",
	    "ready: \"notaport\": not a port (1-65535)" },
	{ "ready = \"http:\"", "ready: \"\": not an http:// URL" },
	{ "ready = \"tcp:db.example:5432\"",
	    "ready: \"db.example\" is not an IP address or localhost (vigild "
	    "looks up no host names)" },
	{ "health = \"http:https://127.0.0.1/\"",
	    "health: https is not supported (no TLS): probe the plain port, "
	    "or use tcp: or exec:" },
	{ "health = \"exec:\"", "health: exec: needs a command" },
	{ "health_failures = 0",
	    "health_failures: 0 is not between 1 and 1000" },
	{ "watch = {\"/srv/app\", \"app\"}",
	    "watch: \"app\" is not an absolute path" },
	{ "exec_start_pre = \"\"", "exec_start_pre: empty command" },
	{ "stdout = syslog",
	    "stdout: invalid value \"syslog\" "
	    "(file, journal, null or inherit)" },
	{ "stderr = File",
	    "stderr: invalid value \"File\" "
	    "(file, journal, null or inherit)" },
	{ "success_exit_codes = { 0, 256 }",
	    "success_exit_codes: 256 is not between 0 and 255" },
	{ "success_exit_codes = { x }",
	    "success_exit_codes: invalid number \"x\"" },
	{ "stop_signal = FOO", "stop_signal: invalid signal \"FOO\"" },
	{ "parent_death_signal = 0",
	    "parent_death_signal: invalid signal \"0\"" },
	{ "user = no_such_user_vigil",
	    "user: unknown user \"no_such_user_vigil\"" },
	{ "group = no_such_group_vigil",
	    "group: unknown group \"no_such_group_vigil\"" },
	{ "directory = \"srv/app\"",
	    "directory: \"srv/app\" is not an absolute path" },
	{ "env_file = \"env\"", "env_file: \"env\" is not an absolute path" },
	{ "environment = { \"A=1\", \"1A=2\" }",
	    "environment: invalid \"KEY=value\" \"1A=2\"" },
	{ "environment = { \"NOVALUE\" }",
	    "environment: invalid \"KEY=value\" \"NOVALUE\"" },
	{ "environment = { \"A-B=1\" }",
	    "environment: invalid \"KEY=value\" \"A-B=1\"" },
	{ "umask = 999", "umask: invalid octal mode \"999\"" },
	{ "umask = \"01777\"", "umask: invalid octal mode \"01777\"" },
	{ "umask = \"\"", "umask: invalid octal mode \"\"" },
	{ "nice = 20", "nice: 20 is not between -20 and 19" },
	{ "nice = -21", "nice: -21 is not between -20 and 19" },
	{ "limit_nofile = abc", "limit_nofile: invalid limit \"abc\"" },
	{ "limit_nofile = \"1:2:3\"", "limit_nofile: invalid limit \"1:2:3\"" },
	{ "limit_nofile = \"10:5\"",
	    "limit_nofile: soft limit above hard limit in \"10:5\"" },
	{ "limit_core = \"infinity:0\"",
	    "limit_core: soft limit above hard limit in \"infinity:0\"" },
	{ "limit_cpu = \"10M\"", "limit_cpu: invalid limit \"10M\"" },
	{ "limit_as = \":1\"", "limit_as: invalid limit \":1\"" },
	{ "log_max_size = \"10MB\"", "log_max_size: invalid size \"10MB\"" },
	{ "log_keep = -1", "log_keep: -1 is less than 0" },
	{ "log_timestamps = 2",
	    "log_timestamps: invalid boolean \"2\" (true or false)" },
	{ "cluster = always",
	    "cluster: invalid boolean \"always\" (true or false)" },
	{ "depends = { \"bad name\" }",
	    "depends: invalid job name \"bad name\"" },
	{ "depends = { \"job\" }", "depends: job depends on itself" },
	{ "watchdog = \"10s\"", "watchdog: needs ready = \"notify\"" },
	{ "restart_delay_max = \"50ms\"",
	    "restart_delay_max: 50ms is less than restart_delay (100ms)" },
	{ "restart_delay = \"1m\"",
	    "restart_delay: 1m is more than restart_delay_max (30s)" },
	{ "every = \"10s\"", "every: not valid for kind \"service\"" },
	{ "schedule = \"* * * * *\"",
	    "schedule: not valid for kind \"service\"" },
	{ "catch_up = true", "catch_up: not valid for kind \"service\"" },
	{ "random_delay = 1s", "random_delay: not valid for kind \"service\"" },
	{ "timeout = 1s", "timeout: not valid for kind \"service\"" },
	{ "concurrency = 2", "concurrency: not valid for kind \"service\"" },
	{ "max_attempts = 2", "max_attempts: not valid for kind \"service\"" },
	{ "retry_delay = 2s", "retry_delay: not valid for kind \"service\"" },
	{ "retry_delay_max = 2s",
	    "retry_delay_max: not valid for kind \"service\"" },
	{ "drain_timeout = 2s",
	    "drain_timeout: not valid for kind \"service\"" },
	{ "stdin = socket", "stdin: invalid value \"socket\" (null or pipe)" },
	{ "cluster_nodes = { \"n1\" }", "cluster_nodes: needs cluster = true" },
	{ "cluster = true cluster_nodes = { \"\" }",
	    "cluster_nodes: pattern \"\" is empty or longer than a node_name "
	    "(128)" },
	{ "cluster_handover_after = 2",
	    "cluster_handover_after: needs cluster = true" },
	{ "cluster = true cluster_handover_after = 0",
	    "cluster_handover_after: 0 is not between 1 and 1000" },
};

TEST(bad_values)
{
	char text[1024], want[1024];
	size_t i;
	int failed = 0;

	for (i = 0; i < sizeof bad_values / sizeof bad_values[0]; i++) {
		snprintf(text, sizeof text, "command = \"/bin/true\"\n%s\n",
		    bad_values[i].line);
		snprintf(want, sizeof want, "2: %s", bad_values[i].error);
		if (!fails_with(text, want)) {
			fprintf(
			    stderr, "  bad value: %s\n", bad_values[i].line);
			failed = 1;
		}
	}
	ASSERT_EQ(failed, 0);
	return (0);
}

TEST(bad_values_by_kind)
{
	ASSERT_OK(fails_with("command = x\nkind = periodic\n",
	    "2: kind: periodic job needs \"every\" or \"schedule\""));
	ASSERT_OK(fails_with("command = x\nkind = periodic\nevery = 1m\n"
	                     "schedule = \"* * * * *\"\n",
	    "4: schedule: conflicts with \"every\""));
	ASSERT_OK(fails_with("command = x\nkind = periodic\nevery = 0s\n",
	    "3: every: must be more than 0"));
	ASSERT_OK(fails_with("command = x\nkind = periodic\n"
	                     "schedule = \"* * * *\"\n",
	    "3: schedule: invalid schedule \"* * * *\": expected 5 "
	    "fields, got 4"));
	ASSERT_OK(fails_with("command = x\nkind = periodic\n"
	                     "schedule = \"* * * * * *\"\n",
	    "3: schedule: invalid schedule \"* * * * * *\": expected 5 "
	    "fields, got 6"));
	ASSERT_OK(fails_with("command = x\nkind = periodic\n"
	                     "schedule = \"* * * * $\"\n",
	    "3: schedule: invalid schedule \"* * * * $\": day-of-week "
	    "field \"$\": invalid item \"$\""));
	ASSERT_OK(fails_with("command = x\nkind = periodic\nevery = 1s\n"
	                     "instances = 2\n",
	    "4: instances: not valid for kind \"periodic\""));
	ASSERT_OK(fails_with("command = x\nkind = queue\nconcurrency = 0\n",
	    "3: concurrency: 0 is not between 1 and 10000"));
	ASSERT_OK(fails_with("command = x\nkind = queue\nconcurrency = 10001\n",
	    "3: concurrency: 10001 is not between 1 and 10000"));
	ASSERT_OK(fails_with("command = x\nkind = queue\nready = notify\n",
	    "3: ready: \"notify\" is not valid for kind \"queue\""));
	ASSERT_OK(fails_with("command = x\nkind = queue\nready = \"tcp:80\"\n",
	    "3: ready: a probe is only for kind \"service\""));
	ASSERT_OK(fails_with("command = x\nkind = queue\nhealth = \"tcp:80\"\n",
	    "3: health: not valid for kind \"queue\""));
	ASSERT_OK(
	    fails_with("command = x\ntype = forking\nready = \"tcp:80\"\n",
	        "3: ready: a probe is not valid with type = \"forking\": the "
	        "daemon is ready once its starter has exited 0"));
	ASSERT_OK(fails_with("command = x\nhealth = \"tcp:80\"\n"
	                     "health_interval = 0s\n",
	    "3: health_interval: must be more than 0"));
	ASSERT_OK(fails_with("command = x\nkind = queue\nstdin = pipe\n",
	    "3: stdin: \"pipe\" is not valid for kind \"queue\": its stdin is "
	    "the message's payload"));
	ASSERT_OK(fails_with("command = x\nkind = queue\nmax_attempts = 0\n",
	    "3: max_attempts: 0 is less than 1"));
	ASSERT_OK(fails_with("command = x\nkind = queue\nretry_delay = 1h\n",
	    "3: retry_delay: 1h is more than retry_delay_max (10m)"));
	ASSERT_OK(fails_with("command = x\nkind = queue\nevery = 1s\n",
	    "3: every: not valid for kind \"queue\""));
	ASSERT_OK(fails_with("command = x\nkind = queue\nexec_start_pre = y\n",
	    "3: exec_start_pre: not valid for kind \"queue\""));
	return (0);
}

TEST(probes)
{
	struct job_spec *spec;

	spec = load("command = x\nready = \"http:http://127.0.0.1:8080/h\"\n"
	            "health = \"exec:/bin/check --quick\"\n"
	            "health_interval = 2s\nhealth_failures = 5\n");
	ASSERT_OK(spec != NULL);
	ASSERT_EQ(spec->ready, CONF_READY_PROBE);
	ASSERT_EQ(spec->ready_probe.kind, PROBE_HTTP);
	ASSERT_OK(strcmp(spec->ready_probe.path, "/h") == 0);
	ASSERT_EQ(spec->health.kind, PROBE_EXEC);
	ASSERT_OK(strcmp(spec->health.argv[1], "--quick") == 0);
	ASSERT_EQ(spec->health_interval, 2 * DURATION_USEC_PER_SEC);
	ASSERT_EQ(spec->health_failures, 5);
	job_spec_free(spec);
	/* The defaults: no health checks, every 10s, 3 in a row. */
	spec = load("command = x\nready = notify\n");
	ASSERT_OK(spec != NULL);
	ASSERT_EQ(spec->ready, CONF_READY_NOTIFY);
	ASSERT_EQ(spec->ready_probe.kind, PROBE_NONE);
	ASSERT_EQ(spec->health.kind, PROBE_NONE);
	ASSERT_EQ(spec->health_interval, 10 * DURATION_USEC_PER_SEC);
	ASSERT_EQ(spec->health_failures, 3);
	ASSERT_OK(spec->watch == NULL);
	ASSERT_EQ(spec->watch_delay, 500 * DURATION_USEC_PER_MSEC);
	job_spec_free(spec);
	spec =
	    load("command = x\nwatch = {\"/srv/a\", \"/srv/b\", \"/srv/a\"}\n"
	         "watch_delay = 2s\n");
	ASSERT_OK(spec != NULL);
	ASSERT_EQ(spec->nwatch, 2);
	ASSERT_OK(strcmp(spec->watch[1], "/srv/b") == 0);
	ASSERT_EQ(spec->watch_delay, 2 * DURATION_USEC_PER_SEC);
	job_spec_free(spec);
	return (0);
}

TEST(bad_commands)
{
	ASSERT_OK(fails_with("command = \"\"\n", "1: command: empty command"));
	ASSERT_OK(
	    fails_with("command = \"  \"\n", "1: command: empty command"));
	ASSERT_OK(fails_with("\ncommand = \"echo 'hi\"\n",
	    "2: command: unterminated single quote"));
	ASSERT_OK(fails_with("command = 'echo \"hi'\n",
	    "1: command: unterminated double quote"));
	ASSERT_OK(fails_with(
	    "command = 'echo \\\\'\n", "1: command: trailing backslash"));
	ASSERT_OK(fails_with(
	    "command = { \"\", \"x\" }\n", "1: command: empty program name"));
	return (0);
}

TEST(missing_command)
{
	struct job_spec *spec;
	char want[8192];

	spec = load("kind = service\n");
	ASSERT_OK(spec == NULL);
	ASSERT_EQ(errs.n, 1);
	snprintf(
	    want, sizeof want, "%s: command: missing required option", path);
	ASSERT_STREQ(errs.msgs[0], want);
	spec = load("");
	ASSERT_OK(spec == NULL);
	ASSERT_STREQ(errs.msgs[0], want);
	return (0);
}

TEST(unknown_option)
{
	ASSERT_OK(fails_with("command = x\nrestart_dealy = 1s\n",
	    "2: no such option 'restart_dealy'"));
	ASSERT_OK(fails_with(
	    "command = x\n\n\nCommand = y\n", "4: no such option 'Command'"));
	ASSERT_OK(fails_with(
	    "command = x\nservice { a = 1 }\n", "2: no such option 'service'"));
	return (0);
}

TEST(syntax_errors)
{
	struct job_spec *spec;

	spec = load("command = x\nrestart = always\ndepends = { a,\n");
	ASSERT_OK(spec == NULL);
	ASSERT_EQ(errs.n, 1);
	ASSERT_OK(strncmp(errs.msgs[0], path, strlen(path)) == 0);
	ASSERT_OK(
	    fails_with("command = x\nkind = \n", "3: premature end of file"));
	ASSERT_OK(fails_with("command = x\nkind = service = queue\n",
	    "2: unexpected token '='"));
	ASSERT_OK(fails_with(
	    "command = x\nkind = { service }\n", "2: unexpected token '{'"));
	ASSERT_OK(load("command = x\n/* open\n") == NULL);
	ASSERT_EQ(errs.n, 1);
	ASSERT_OK(has_error("%s: unterminated comment", path));
	/* An unterminated string: the line where it starts, not EOF's. */
	ASSERT_OK(load("command = x\nstop_timeout = \"5s\n") == NULL);
	ASSERT_EQ(errs.n, 1);
	ASSERT_OK(has_error(
	    "%s:2: unterminated string (its closing \" is missing)", path));
	ASSERT_OK(load("command = 'x\n\nkind = service\n") == NULL);
	ASSERT_OK(has_error(
	    "%s:1: unterminated string (its closing ' is missing)", path));
	return (0);
}

TEST(all_errors_in_line_order)
{
	struct job_spec *spec;

	spec = load("# a comment\n"
	            "// another\n"
	            "/* and a\n   block */\n"
	            "command = x\n"
	            "stop_timeout = 5\n"
	            "instances = 0\n"
	            "restart = { always }\n");
	ASSERT_OK(spec == NULL);
	/*
	 * libconfuse stops at the first syntax error; the file is read again
	 * without its line, so the values of the others are checked too.
	 */
	ASSERT_EQ(errs.n, 3);
	ASSERT_OK(has_error(
	    "%s:6: stop_timeout: invalid duration \"5\": missing unit", path));
	ASSERT_OK(
	    has_error("%s:7: instances: 0 is not between 1 and 1000", path));
	ASSERT_OK(strstr(errs.msgs[0], ":6: ") != NULL);
	ASSERT_OK(strstr(errs.msgs[1], ":7: ") != NULL);
	ASSERT_OK(strstr(errs.msgs[2], ":8: ") != NULL);

	spec = load("# a comment\n"
	            "// another\n"
	            "/* and a\n   block */\n"
	            "command = x\n"
	            "stop_timeout = 5\n"
	            "watchdog = 1s # no notify\n"
	            "instances = 0\n"
	            "nice = 100\n");
	ASSERT_OK(spec == NULL);
	ASSERT_EQ(errs.n, 4);
	ASSERT_OK(has_error(
	    "%s:6: stop_timeout: invalid duration \"5\": missing unit", path));
	ASSERT_OK(has_error("%s:7: watchdog: needs ready = \"notify\"", path));
	ASSERT_OK(
	    has_error("%s:8: instances: 0 is not between 1 and 1000", path));
	ASSERT_OK(has_error("%s:9: nice: 100 is not between -20 and 19", path));
	ASSERT_OK(strstr(errs.msgs[0], ":6: ") != NULL);
	ASSERT_OK(strstr(errs.msgs[1], ":7: ") != NULL);
	ASSERT_OK(strstr(errs.msgs[2], ":8: ") != NULL);
	ASSERT_OK(strstr(errs.msgs[3], ":9: ") != NULL);
	return (0);
}

TEST(comments_inside_lists)
{
	struct job_spec *spec;

	spec = load("command = {\n"
	            "  \"/bin/echo\", # the program\n"
	            "  \"a#b\", // not a comment inside quotes\n"
	            "  '//x', /* nor this */ \"c\"\n"
	            "}\n"
	            "directory = /var//lib # unquoted path\n"
	            "nice = 3x\n");
	ASSERT_OK(spec == NULL);
	ASSERT_EQ(errs.n, 1);
	ASSERT_OK(has_error("%s:7: nice: invalid number \"3x\"", path));
	spec = load("command = {\n"
	            "  \"/bin/echo\", # the program\n"
	            "  \"a#b\", // not a comment inside quotes\n"
	            "  '//x', /* nor this */ \"c\"\n"
	            "}\n"
	            "directory = /var//lib # unquoted path\n");
	ASSERT_OK(spec != NULL);
	ASSERT_EQ(spec->argc, 4);
	ASSERT_STREQ(spec->argv[1], "a#b");
	ASSERT_STREQ(spec->argv[2], "//x");
	ASSERT_STREQ(spec->argv[3], "c");
	ASSERT_STREQ(spec->directory, "/var//lib");
	job_spec_free(spec);
	return (0);
}

TEST(no_substitution)
{
	struct job_spec *spec;

	/* libconfuse would substitute ${VAR} in "..." and bare: not here. */
	setenv("VIGIL_TEST_VAR", "expanded", 1);
	spec = load("command = \"echo ${VIGIL_TEST_VAR} '${HOME}' \\\\${X}\"\n"
	            "environment = { \"A=${VIGIL_TEST_VAR}\", 'B=${X}' }\n"
	            "directory = \"/${VIGIL_TEST_VAR}\"\n");
	if (spec == NULL)
		dump_errors();
	ASSERT_OK(spec != NULL);
	ASSERT_EQ(spec->argc, 4);
	ASSERT_STREQ(spec->argv[1], "${VIGIL_TEST_VAR}");
	ASSERT_STREQ(spec->argv[2], "${HOME}");
	ASSERT_STREQ(spec->argv[3], "${X}");
	ASSERT_EQ(spec->nenvironment, 2);
	ASSERT_STREQ(spec->environment[0], "A=${VIGIL_TEST_VAR}");
	ASSERT_STREQ(spec->environment[1], "B=${X}");
	ASSERT_STREQ(spec->directory, "/${VIGIL_TEST_VAR}");
	job_spec_free(spec);

	spec = load("command = { echo, ${VIGIL_TEST_VAR:-x'y\\z},\n"
	            "    ${VIGIL_TEST_VAR} }\nnice = bad\n");
	ASSERT_OK(spec == NULL);
	ASSERT_OK(has_error("%s:3: nice: invalid number \"bad\"", path));
	spec = load("command = { echo, ${VIGIL_TEST_VAR:-x'y\\z},\n"
	            "    ${VIGIL_TEST_VAR} }\n");
	unsetenv("VIGIL_TEST_VAR");
	ASSERT_OK(spec != NULL);
	ASSERT_EQ(spec->argc, 3);
	ASSERT_STREQ(spec->argv[1], "${VIGIL_TEST_VAR:-x'y\\z}");
	ASSERT_STREQ(spec->argv[2], "${VIGIL_TEST_VAR}");
	job_spec_free(spec);
	return (0);
}

TEST(numeric_ids)
{
	struct job_spec *spec;

	spec = load("command = x\nuser = 12345\ngroup = 23456\n");
	ASSERT_OK(spec != NULL);
	ASSERT_OK(spec->has_uid && spec->uid == 12345);
	ASSERT_OK(spec->has_gid && spec->gid == 23456);
	ASSERT_STREQ(spec->user, "12345");
	job_spec_free(spec);
	return (0);
}

TEST(load_errors)
{
	struct job_spec *spec;

	conf_errors_clear(&errs);
	snprintf(path, sizeof path, "%s/absent.conf", tmpdir);
	ASSERT_OK(job_spec_load(path, "absent", &errs) == NULL);
	ASSERT_OK(has_error("%s: No such file or directory", path));
	conf_errors_clear(&errs);
	ASSERT_OK(job_spec_load(tmpdir, "x", &errs) == NULL);
	ASSERT_OK(has_error("%s: Is a directory", tmpdir));

	/* An invalid name, and a NULL error list. */
	conf_errors_clear(&errs);
	write_in(tmpdir, "job.conf", "command = x\n");
	ASSERT_OK(job_spec_load(path, "bad/name", &errs) == NULL);
	ASSERT_OK(has_error("%s:1: invalid job name \"bad/name\"", path));
	/* A file named like an instance is a job file, reported. */
	conf_errors_clear(&errs);
	ASSERT_OK(job_spec_load(path, "job@1", &errs) == NULL);
	ASSERT_OK(has_error("%s:1: invalid job name \"job@1\": \"@\" is kept "
	                    "for instance names (NAME@N is instance N of job "
	                    "NAME)",
	    path));
	ASSERT_OK(job_spec_load(path, "bad name", NULL) == NULL);

	/* The name defaults to the file name. */
	spec = job_spec_load(path, NULL, NULL);
	ASSERT_OK(spec != NULL);
	ASSERT_STREQ(spec->name, "job");
	job_spec_free(spec);
	job_spec_free(NULL);
	return (0);
}

TEST(jobs_dir)
{
	struct conf_jobs jobs;
	const char *dir;
	char d[1024];

	dir = make_dir("jobs.d");
	snprintf(d, sizeof d, "%s", dir);
	write_in(d, "web.conf", "command = \"httpd -f\"\ndepends = { db }\n");
	write_in(d, "db.conf", "command = postgres\n");
	write_in(d, "a-b.conf", "command = ab\n");
	write_in(d, "a.conf", "command = a\n");
	write_in(d, "broken.conf", "command = x\nrestart = maybe\n");
	write_in(d, "needs-broken.conf", "command = x\n\ndepends = broken\n");
	write_in(
	    d, "needs-ghost.conf", "command = x\ndepends = { db, ghost }\n");
	write_in(d, "needs-needs.conf", "command = x\ndepends = needs-ghost\n");
	write_in(d, "loop1.conf", "command = x\ndepends = loop2\n");
	write_in(d, "loop2.conf", "command = x\ndepends = loop1\n");
	write_in(d, "after-loop.conf", "command = x\ndepends = loop1\n");
	/* Not job files: never read, so their contents do not matter. */
	write_in(d, ".hidden.conf", "junk");
	write_in(d, "web.conf~", "junk");
	write_in(d, "#web.conf#", "junk");
	write_in(d, "web.conf.swp", "junk");
	write_in(d, "web.conf.bak", "junk");
	write_in(d, "web.conf.dpkg-old", "junk");
	write_in(d, "README", "junk");
	write_in(d, "bad name.conf", "junk");
	write_in(d, ".conf", "junk");

	conf_errors_clear(&errs);
	ASSERT_EQ(conf_jobs_load(d, &jobs, &errs), 0);
	ASSERT_EQ(jobs.n, 4);
	ASSERT_STREQ(jobs.specs[0]->name, "a");
	ASSERT_STREQ(jobs.specs[1]->name, "a-b");
	ASSERT_STREQ(jobs.specs[2]->name, "db");
	ASSERT_STREQ(jobs.specs[3]->name, "web");
	ASSERT_OK(conf_jobs_find(&jobs, "web") == jobs.specs[3]);
	ASSERT_OK(conf_jobs_find(&jobs, "a") == jobs.specs[0]);
	ASSERT_OK(conf_jobs_find(&jobs, "broken") == NULL);
	ASSERT_OK(conf_jobs_find(&jobs, "zzz") == NULL);
	ASSERT_EQ(errs.n, 7);
	ASSERT_OK(has_error("%s/broken.conf:2: restart: invalid value "
	                    "\"maybe\" (always, on-failure or never)",
	    d));
	ASSERT_OK(has_error("%s/needs-broken.conf:3: depends: job \"broken\" "
	                    "is not loaded",
	    d));
	ASSERT_OK(has_error("%s/needs-ghost.conf:2: depends: no such job "
	                    "\"ghost\"",
	    d));
	ASSERT_OK(has_error("%s/needs-needs.conf:2: depends: job "
	                    "\"needs-ghost\" is not loaded",
	    d));
	ASSERT_OK(has_error("%s/loop1.conf:2: depends: dependency cycle: "
	                    "loop1 -> loop2 -> loop1",
	    d));
	ASSERT_OK(has_error("%s/loop2.conf:2: depends: dependency cycle: "
	                    "loop1 -> loop2 -> loop1",
	    d));
	ASSERT_OK(has_error("%s/after-loop.conf:2: depends: job \"loop1\" is "
	                    "not loaded",
	    d));
	conf_jobs_clear(&jobs);
	ASSERT_EQ(jobs.n, 0);
	conf_jobs_clear(NULL);
	return (0);
}

TEST(jobs_dir_errors)
{
	struct conf_jobs jobs;
	char d[1024];

	snprintf(d, sizeof d, "%s/no-such-dir", tmpdir);
	conf_errors_clear(&errs);
	ASSERT_EQ(conf_jobs_load(d, &jobs, &errs), -1);
	ASSERT_EQ(jobs.n, 0);
	ASSERT_OK(has_error("%s: No such file or directory", d));
	ASSERT_EQ(conf_jobs_load(d, &jobs, NULL), -1);

	/* An empty directory, named with a trailing slash. */
	snprintf(d, sizeof d, "%s/", make_dir("empty.d"));
	conf_errors_clear(&errs);
	ASSERT_EQ(conf_jobs_load(d, &jobs, &errs), 0);
	ASSERT_EQ(jobs.n, 0);
	ASSERT_EQ(errs.n, 0);
	ASSERT_OK(conf_jobs_find(&jobs, "x") == NULL);
	conf_jobs_clear(&jobs);

	/* A directory named like a job is a broken job. */
	snprintf(d, sizeof d, "%s", make_dir("dirjob.d"));
	write_in(d, "ok.conf", "command = \"true\"\n");
	snprintf(path, sizeof path, "%s/sub.conf", d);
	ASSERT_EQ(mkdir(path, 0700), 0);
	conf_errors_clear(&errs);
	ASSERT_EQ(conf_jobs_load(d, &jobs, &errs), 0);
	ASSERT_EQ(jobs.n, 1);
	ASSERT_STREQ(jobs.specs[0]->name, "ok");
	ASSERT_OK(has_error("%s/sub.conf: Is a directory", d));
	conf_jobs_clear(&jobs);
	return (0);
}

/* Variants of a base job, each of which must compare unequal to it. */
static const char *const variants[] = {
	"command = \"/bin/sleep 11\"\n",
	"command = { \"/bin/sleep 10\" }\n",
	"instances = 2\n",
	"autostart = false\n",
	"restart = never\n",
	"success_exit_codes = { 0, 1 }\n",
	"min_uptime = 2s\n",
	"restart_delay = 200ms\n",
	"restart_delay_max = 31s\n",
	"max_restarts = 1\n",
	"ready = notify\n",
	"ready = \"tcp:80\"\n",
	"health = \"tcp:80\"\n",
	"health = \"tcp:80\"\nhealth_interval = 1s\n",
	"health = \"tcp:80\"\nhealth_failures = 1\n",
	"watch = {\"/srv\"}\n",
	"exec_start_pre = \"/bin/migrate\"\n",
	"exec_start_post = \"/bin/warm\"\n",
	"exec_stop_post = \"/bin/clean\"\n",
	"on_failure = \"/bin/alert\"\n",
	"hook_timeout = 1s\n",
	"watch = {\"/srv\"}\nwatch_delay = 1s\n",
	"ready_timeout = 1s\n",
	"depends = { other }\n",
	"stop_signal = INT\n",
	"stop_timeout = 1s\n",
	"kill_group = false\n",
	"parent_death_signal = KILL\n",
	"user = root\n",
	"group = root\n",
	"directory = /tmp\n",
	"environment = { \"A=1\" }\n",
	"env_file = /etc/env\n",
	"umask = 022\n",
	"nice = 1\n",
	"limit_nofile = 10\n",
	"limit_core = 0\n",
	"limit_nproc = 10\n",
	"limit_as = 1G\n",
	"limit_data = 1G\n",
	"limit_stack = 1M\n",
	"limit_fsize = 1M\n",
	"limit_cpu = 10\n",
	"limit_memlock = 1M\n",
	"stdin = pipe\n",
	"stdout = null\n",
	"stderr = null\n",
	"log_max_size = 1M\n",
	"log_keep = 1\n",
	"log_timestamps = true\n",
	"ready = notify\nwatchdog = 1s\n",
	"cluster = true\n",
	"kind = periodic\nevery = 1m\n",
	"kind = periodic\nschedule = \"* * * * *\"\n",
	"kind = periodic\nevery = 1m\ncatch_up = true\n",
	"kind = periodic\nevery = 1m\nrandom_delay = 1s\n",
	"kind = queue\n",
	"kind = queue\ntimeout = 1m\n",
	"kind = queue\nconcurrency = 2\n",
	"kind = queue\nmax_attempts = 2\n",
	"kind = queue\nretry_delay = 2s\n",
	"kind = queue\nretry_delay_max = 20m\n",
	"kind = queue\ndrain_timeout = 0s\n",
};

TEST(equal)
{
	static const char base[] = "command = \"/bin/sleep 10\"\n";
	struct job_spec *a, *b;
	char text[1024], p[4096];
	size_t i;
	int failed = 0;

	a = load(base);
	ASSERT_OK(a != NULL);
	ASSERT_OK(job_spec_equal(a, a));
	ASSERT_OK(!job_spec_equal(a, NULL));
	ASSERT_OK(job_spec_equal(NULL, NULL));

	/* The same job from another file, written differently. */
	snprintf(p, sizeof p, "%s", make_dir("other.d"));
	write_in(p, "job.conf",
	    "# same\ncommand = { \"/bin/sleep\", \"10\" }\nrestart = always\n"
	    "stop_signal = SIGTERM\nparent_death_signal = 15\n"
	    "restart_delay = \"0.1s\"\n");
	b = job_spec_load(path, "job", &errs);
	ASSERT_OK(b != NULL);
	ASSERT_OK(job_spec_equal(a, b));
	job_spec_free(b);

	/* Another name is another job. */
	b = job_spec_load(path, "job2", &errs);
	ASSERT_OK(b != NULL && !job_spec_equal(a, b));
	job_spec_free(b);

	for (i = 0; i < sizeof variants / sizeof variants[0]; i++) {
		snprintf(text, sizeof text, "%s%s", base, variants[i]);
		if ((b = load(text)) == NULL) {
			dump_errors();
			failed = 1;
		} else if (job_spec_equal(a, b) || job_spec_equal(b, a)) {
			fprintf(stderr, "  equal: %s", variants[i]);
			failed = 1;
		}
		job_spec_free(b);
	}
	job_spec_free(a);
	ASSERT_EQ(failed, 0);
	return (0);
}

TEST(names)
{
	char name[80];

	ASSERT_OK(conf_name_is_valid("web"));
	ASSERT_OK(conf_name_is_valid("a.b_c-d"));
	/* "@" is kept for instance names: x@1 is instance 1 of job x. */
	ASSERT_OK(!conf_name_is_valid("x@1"));
	ASSERT_OK(!conf_name_is_valid("@"));
	ASSERT_OK(conf_name_is_valid("A9"));
	ASSERT_OK(!conf_name_is_valid(""));
	ASSERT_OK(!conf_name_is_valid(NULL));
	ASSERT_OK(!conf_name_is_valid("a b"));
	ASSERT_OK(!conf_name_is_valid("a/b"));
	ASSERT_OK(!conf_name_is_valid("a~"));
	ASSERT_OK(!conf_name_is_valid("#a#"));
	ASSERT_OK(!conf_name_is_valid("a:b"));
	ASSERT_OK(!conf_name_is_valid("é"));
	memset(name, 'x', sizeof name);
	name[64] = '\0';
	ASSERT_OK(conf_name_is_valid(name));
	name[64] = 'x';
	name[65] = '\0';
	ASSERT_OK(!conf_name_is_valid(name));
	return (0);
}

TEST(job_files)
{
	char name[80];

	ASSERT_OK(conf_file_is_job("web.conf"));
	ASSERT_OK(conf_file_is_job("a.conf"));
	ASSERT_OK(conf_file_is_job("x@1.conf"));
	ASSERT_OK(conf_file_is_job("a.b.conf"));
	ASSERT_OK(!conf_file_is_job(".conf"));
	ASSERT_OK(!conf_file_is_job(".web.conf"));
	ASSERT_OK(!conf_file_is_job("web.conf~"));
	ASSERT_OK(!conf_file_is_job("#web.conf#"));
	ASSERT_OK(!conf_file_is_job(".web.conf.swp"));
	ASSERT_OK(!conf_file_is_job("web.conf.swp"));
	ASSERT_OK(!conf_file_is_job("web.conf.bak"));
	ASSERT_OK(!conf_file_is_job("web.conf.dpkg-dist"));
	ASSERT_OK(!conf_file_is_job("web.conf.rpmnew"));
	ASSERT_OK(!conf_file_is_job("web.CONF"));
	ASSERT_OK(!conf_file_is_job("web"));
	ASSERT_OK(!conf_file_is_job("we b.conf"));
	ASSERT_OK(!conf_file_is_job(NULL));
	memset(name, 'x', sizeof name);
	memcpy(name + 64, ".conf", 6);
	ASSERT_OK(conf_file_is_job(name));
	memcpy(name + 65, ".conf", 6);
	ASSERT_OK(!conf_file_is_job(name));
	return (0);
}

TEST(error_list)
{
	struct conf_errors e;

	conf_errors_init(&e);
	ASSERT_EQ(e.n, 0);
	conf_errors_add(&e, "%s:%d: %s", "f", 3, "m");
	conf_errors_add(&e, "second");
	ASSERT_EQ(e.n, 2);
	ASSERT_STREQ(e.msgs[0], "f:3: m");
	ASSERT_STREQ(e.msgs[1], "second");
	conf_errors_clear(&e);
	ASSERT_EQ(e.n, 0);
	ASSERT_OK(e.msgs == NULL);
	conf_errors_clear(NULL);
	return (0);
}

/* Check the defaults of a struct conf for the current user. */
static int
check_defaults(const struct conf *c)
{
	ASSERT_OK(c->path == NULL);
	ASSERT_OK(c->log_level == NULL);
	ASSERT_OK(c->socket_group == NULL);
	ASSERT_EQ(c->has_socket_gid, 0);
	ASSERT_EQ(c->socket_mode, 0600);
	ASSERT_EQ(c->history_keep, 1000);
	ASSERT_OK(c->event_argv == NULL);
	ASSERT_EQ(c->hook_timeout, 30 * SEC);
	ASSERT_EQ(c->cluster.enabled, 0);
	ASSERT_OK(c->cluster.conninfo == NULL);
	ASSERT_OK(c->cluster.node_name == NULL);
	if (geteuid() == 0) {
		ASSERT_STREQ(c->jobs_dir, SYSCONFDIR "/vigil/jobs.d");
		ASSERT_STREQ(c->runtime_dir, RUNSTATEDIR "/vigil");
		ASSERT_STREQ(c->state_dir, LOCALSTATEDIR "/lib/vigil");
		ASSERT_STREQ(c->log_dir, LOCALSTATEDIR "/log/vigil");
	}
	return (0);
}

TEST(main_defaults)
{
	struct conf *c;
	char *p;

	conf_errors_clear(&errs);
	c = conf_load(NULL, 1, &errs);
	ASSERT_OK(c != NULL);
	ASSERT_EQ(check_defaults(c), 0);
	conf_free(c);

	snprintf(path, sizeof path, "%s/absent.conf", tmpdir);
	c = conf_load(path, 0, &errs);
	ASSERT_OK(c != NULL);
	ASSERT_EQ(check_defaults(c), 0);
	conf_free(c);
	ASSERT_EQ(errs.n, 0);
	ASSERT_OK(conf_load(path, 1, &errs) == NULL);
	ASSERT_OK(has_error("%s: No such file or directory", path));
	conf_free(NULL);

	p = conf_default_path();
	if (geteuid() == 0)
		ASSERT_STREQ(p, SYSCONFDIR "/vigil/vigil.conf");
	else
		ASSERT_OK(strstr(p, "/vigil/vigil.conf") != NULL);
	free(p);
	return (0);
}

/* In a child process without root: the XDG defaults.  Returns 0 if ok. */
static int
check_xdg(void)
{
	struct conf *c;
	char *p;
	char want[64];

	setenv("HOME", "/home/u", 1);
	setenv("XDG_CONFIG_HOME", "/cfg", 1);
	setenv("XDG_RUNTIME_DIR", "/run/user/7", 1);
	setenv("XDG_STATE_HOME", "/st", 1);
	c = conf_load(NULL, 0, NULL);
	ASSERT_STREQ(c->jobs_dir, "/cfg/vigil/jobs.d");
	ASSERT_STREQ(c->runtime_dir, "/run/user/7/vigil");
	ASSERT_STREQ(c->state_dir, "/st/vigil");
	ASSERT_STREQ(c->log_dir, "/st/vigil/log");
	conf_free(c);
	p = conf_default_path();
	ASSERT_STREQ(p, "/cfg/vigil/vigil.conf");
	free(p);

	unsetenv("XDG_CONFIG_HOME");
	unsetenv("XDG_RUNTIME_DIR");
	setenv("XDG_STATE_HOME", "relative", 1);
	c = conf_load(NULL, 0, NULL);
	ASSERT_STREQ(c->jobs_dir, "/home/u/.config/vigil/jobs.d");
	snprintf(want, sizeof want, "/tmp/vigil-%lu", (unsigned long)geteuid());
	ASSERT_STREQ(c->runtime_dir, want);
	ASSERT_STREQ(c->state_dir, "/home/u/.local/state/vigil");
	ASSERT_STREQ(c->log_dir, "/home/u/.local/state/vigil/log");
	conf_free(c);
	p = conf_default_path();
	ASSERT_STREQ(p, "/home/u/.config/vigil/vigil.conf");
	free(p);
	return (0);
}

TEST(main_xdg_defaults)
{
	pid_t pid;
	int status;

	/* Run as another user if root; the environment stays ours. */
	if ((pid = fork()) == -1)
		return (1);
	if (pid == 0) {
		if (geteuid() == 0 &&
		    (setgid(65534) != 0 || setuid(65534) != 0))
			_exit(2);
		_exit(check_xdg());
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_OK(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	return (0);
}

TEST(main_file)
{
	struct conf *c;
	char d[1024], want[8192], cwd[4096];

	snprintf(d, sizeof d, "%s", make_dir("etc"));
	write_in(d, "vigil.conf",
	    "# vigil.conf\n"
	    "jobs_dir = \"jobs\"\n"
	    "runtime_dir = \"/run/v\"\n"
	    "state_dir = ../state\n"
	    "log_dir = \"/var/log/v\"\n"
	    "log_level = debug\n"
	    "socket_group = root\n"
	    "history_keep = 10\n"
	    "on_event = {\"/bin/sh\", \"-c\", \"logger $VIGIL_JOB\"}\n"
	    "hook_timeout = 2s\n");
	conf_errors_clear(&errs);
	c = conf_load(path, 1, &errs);
	if (c == NULL)
		dump_errors();
	ASSERT_OK(c != NULL);
	ASSERT_STREQ(c->path, path);
	snprintf(want, sizeof want, "%s/jobs", d);
	ASSERT_STREQ(c->jobs_dir, want);
	ASSERT_STREQ(c->runtime_dir, "/run/v");
	snprintf(want, sizeof want, "%s/../state", d);
	ASSERT_STREQ(c->state_dir, want);
	ASSERT_STREQ(c->log_dir, "/var/log/v");
	ASSERT_STREQ(c->log_level, "debug");
	ASSERT_STREQ(c->socket_group, "root");
	ASSERT_OK(c->has_socket_gid && c->socket_gid == 0);
	ASSERT_EQ(c->socket_mode, 0660);
	ASSERT_EQ(c->history_keep, 10);
	ASSERT_STREQ(c->event_argv[2], "logger $VIGIL_JOB");
	ASSERT_OK(c->event_argv[3] == NULL);
	ASSERT_EQ(c->hook_timeout, 2 * SEC);
	conf_free(c);

	write_in(d, "vigil.conf", "socket_group = 0\nsocket_mode = \"0640\"\n");
	c = conf_load(path, 1, &errs);
	ASSERT_OK(c != NULL);
	ASSERT_EQ(c->socket_mode, 0640);
	conf_free(c);

	/* A relative config path still gives absolute directories. */
	ASSERT_OK(getcwd(cwd, sizeof cwd) != NULL);
	ASSERT_EQ(chdir(d), 0);
	write_in(".", "vigil.conf", "jobs_dir = j\n");
	c = conf_load("vigil.conf", 1, &errs);
	ASSERT_EQ(chdir(cwd), 0);
	ASSERT_OK(c != NULL);
	snprintf(want, sizeof want, "%s/j", d);
	ASSERT_STREQ(c->jobs_dir, want);
	conf_free(c);
	return (0);
}

TEST(main_errors)
{
	struct conf *c;
	char d[1024];

	snprintf(d, sizeof d, "%s", make_dir("bad-etc"));
	write_in(d, "vigil.conf",
	    "log_level = loud\n"
	    "history_keep = 0\n"
	    "socket_mode = 999\n"
	    "socket_group = no_such_group_vigil\n"
	    "jobs_dir = \"\"\n"
	    "on_event = \"\"\n"
	    "hook_timeout = soon\n");
	conf_errors_clear(&errs);
	c = conf_load(path, 0, &errs);
	ASSERT_OK(c == NULL);
	ASSERT_EQ(errs.n, 7);
	ASSERT_OK(has_error("%s:6: on_event: empty command", path));
	ASSERT_OK(
	    has_error("%s:7: hook_timeout: invalid duration \"soon\"", path));
	ASSERT_OK(
	    has_error("%s:1: log_level: invalid log level \"loud\"", path));
	ASSERT_OK(has_error("%s:2: history_keep: 0 is less than 1", path));
	ASSERT_OK(
	    has_error("%s:3: socket_mode: invalid octal mode \"999\"", path));
	ASSERT_OK(has_error("%s:4: socket_group: unknown group "
	                    "\"no_such_group_vigil\"",
	    path));
	ASSERT_OK(has_error("%s:5: jobs_dir: empty path", path));

	write_in(d, "vigil.conf", "\njob_dir = x\n");
	conf_errors_clear(&errs);
	ASSERT_OK(conf_load(path, 0, &errs) == NULL);
	ASSERT_EQ(errs.n, 1);
	ASSERT_OK(has_error("%s:2: no such option 'job_dir'", path));
	ASSERT_OK(conf_load(path, 0, NULL) == NULL);
	return (0);
}

/* cluster = true, for every kind, whether vigild has libpq or not. */
TEST(job_cluster)
{
	static const char *const kinds[] = { "",
		"kind = periodic\nevery = 1m\n", "kind = queue\n" };
	struct job_spec *spec;
	char text[256];
	size_t i;

	for (i = 0; i < 3; i++) {
		snprintf(text, sizeof text, "command = x\n%scluster = yes\n",
		    kinds[i]);
		if ((spec = load(text)) == NULL)
			dump_errors();
		ASSERT_OK(spec != NULL);
		ASSERT_EQ(spec->cluster, 1);
		job_spec_free(spec);
	}
	spec = load("command = x\ncluster = false\n");
	ASSERT_OK(spec != NULL);
	ASSERT_EQ(spec->cluster, 0);
	job_spec_free(spec);
	return (0);
}

/* Write text as vigil.conf in tmpdir/cl and load it. */
static struct conf *
load_main(const char *text)
{
	char d[1024];

	snprintf(d, sizeof d, "%s", make_dir("cl"));
	write_in(d, "vigil.conf", text);
	conf_errors_clear(&errs);
	return (conf_load(path, 1, &errs));
}

/* Load a vigil.conf text that must fail with exactly the error want. */
static int
main_fails_with(const char *text, const char *want)
{
	struct conf *c;
	char full[16384];

	if ((c = load_main(text)) != NULL) {
		fprintf(stderr, "    loaded: %s", text);
		conf_free(c);
		return (0);
	}
	snprintf(full, sizeof full, "%s:%s", path, want);
	if (errs.n != 1 || strcmp(errs.msgs[0], full) != 0) {
		fprintf(stderr, "    want \"%s\"\n", full);
		dump_errors();
		return (0);
	}
	return (1);
}

#ifdef HAVE_LIBPQ
/* The host name, if it makes a valid node name; else NULL. */
static const char *
host_name(void)
{
	static char host[256];

	if (gethostname(host, sizeof host) != 0 || !conf_name_is_valid(host))
		return (NULL);
	return (host);
}

TEST(cluster_defaults)
{
	struct conf *c;

	c = load_main("log_level = info\n"
	              "cluster {\n"
	              "  conninfo = \"host=db1,db2 dbname=vigil user=vigil "
	              "target_session_attrs=read-write\"\n"
	              "}\n");
	if (c == NULL)
		dump_errors();
	ASSERT_OK(c != NULL);
	ASSERT_EQ(c->cluster.enabled, 1);
	ASSERT_STREQ(c->cluster.conninfo,
	    "host=db1,db2 dbname=vigil user=vigil "
	    "target_session_attrs=read-write");
	ASSERT_OK(c->cluster.node_name != NULL);
	if (host_name() != NULL)
		ASSERT_STREQ(c->cluster.node_name, host_name());
	ASSERT_EQ(c->cluster.lease_ttl, 30 * SEC);
	ASSERT_EQ(c->cluster.renew_interval, 5 * SEC);
	ASSERT_EQ(c->cluster.query_timeout, 5 * SEC);
	ASSERT_EQ(c->cluster.fence_margin, 2 * SEC);
	ASSERT_EQ(c->cluster.connect_timeout, 5 * SEC);
	ASSERT_EQ(c->cluster.on_db_loss, CONF_DB_LOSS_KILL);
	ASSERT_EQ(c->cluster.line, 2);
	ASSERT_STREQ(c->log_level, "info");
	conf_free(c);

	/* query_timeout and connect_timeout follow renew_interval. */
	c = load_main("cluster { conninfo = \"dbname=vigil\"\n"
	              "renew_interval = 3s\n"
	              "lease_ttl = 20s }\n");
	ASSERT_OK(c != NULL);
	ASSERT_EQ(c->cluster.line, 1);
	ASSERT_EQ(c->cluster.renew_interval, 3 * SEC);
	ASSERT_EQ(c->cluster.query_timeout, 3 * SEC);
	ASSERT_EQ(c->cluster.connect_timeout, 3 * SEC);
	ASSERT_EQ(c->cluster.lease_ttl, 20 * SEC);
	conf_free(c);
	return (0);
}

TEST(cluster_options)
{
	struct conf *c;

	c = load_main("# cluster mode\n"
	              "cluster  # a comment\n"
	              "{\n"
	              "\tconninfo = \"postgresql://vigil@db1,db2/vigil?"
	              "target_session_attrs=read-write\"\n"
	              "\tnode_name = web1.example-2_b\n"
	              "\tlease_ttl = 1m\n"
	              "\trenew_interval = \"10s\"\n"
	              "\tquery_timeout = 4s\n"
	              "\tfence_margin = \"3s500ms\"\n"
	              "\tconnect_timeout = 7s\n"
	              "\ton_db_loss = keep\n"
	              "}\n"
	              "history_keep = 5\n");
	if (c == NULL)
		dump_errors();
	ASSERT_OK(c != NULL);
	ASSERT_EQ(c->cluster.enabled, 1);
	ASSERT_STREQ(c->cluster.conninfo,
	    "postgresql://vigil@db1,db2/vigil?target_session_attrs=read-write");
	ASSERT_STREQ(c->cluster.node_name, "web1.example-2_b");
	ASSERT_EQ(c->cluster.lease_ttl, 60 * SEC);
	ASSERT_EQ(c->cluster.renew_interval, 10 * SEC);
	ASSERT_EQ(c->cluster.query_timeout, 4 * SEC);
	ASSERT_EQ(c->cluster.fence_margin, 3500 * MSEC);
	ASSERT_EQ(c->cluster.connect_timeout, 7 * SEC);
	ASSERT_EQ(c->cluster.on_db_loss, CONF_DB_LOSS_KEEP);
	ASSERT_EQ(c->cluster.line, 2);
	ASSERT_EQ(c->history_keep, 5);
	conf_free(c);

	c = load_main("cluster {\nconninfo = x\non_db_loss = \"kill\"\n}\n");
	ASSERT_OK(c != NULL);
	ASSERT_EQ(c->cluster.on_db_loss, CONF_DB_LOSS_KILL);
	conf_free(c);
	return (0);
}

/* Each bad line, on line 3 of a cluster section, with its exact message. */
static const struct {
	const char *line;
	const char *error;
} bad_cluster[] = {
	{ "lease_ttl = 30",
	    "lease_ttl: invalid duration \"30\": missing unit" },
	{ "renew_interval = soon",
	    "renew_interval: invalid duration \"soon\"" },
	{ "lease_ttl = 0", "lease_ttl: must be more than 0" },
	{ "renew_interval = 0s", "renew_interval: must be more than 0" },
	{ "query_timeout = 0", "query_timeout: must be more than 0" },
	{ "fence_margin = 0ms", "fence_margin: must be more than 0" },
	{ "connect_timeout = 0", "connect_timeout: must be more than 0" },
	{ "node_name = \"web 1\"",
	    "node_name: invalid node name \"web 1\" (1 to 64 characters of "
	    "A-Z, a-z, 0-9, \".\", \"_\" and \"-\")" },
	{ "node_name = \"\"",
	    "node_name: invalid node name \"\" (1 to 64 characters of A-Z, "
	    "a-z, 0-9, \".\", \"_\" and \"-\")" },
	{ "node_name = \"web@1\"",
	    "node_name: invalid node name \"web@1\" (1 to 64 characters of "
	    "A-Z, a-z, 0-9, \".\", \"_\" and \"-\")" },
	{ "on_db_loss = stop",
	    "on_db_loss: invalid value \"stop\" (kill or keep)" },
	{ "conn_info = x", "no such option 'conn_info'" },
	{ "lease_ttl = 10s",
	    "lease_ttl: renew_interval + 2 * query_timeout + fence_margin must "
	    "be less than lease_ttl, so that two renew attempts may fail "
	    "before the fence starts: 5s + 2 * 5s + 2s = 17s is not less than "
	    "10s" },
	{ "lease_ttl = 17s",
	    "lease_ttl: renew_interval + 2 * query_timeout + fence_margin must "
	    "be less than lease_ttl, so that two renew attempts may fail "
	    "before the fence starts: 5s + 2 * 5s + 2s = 17s is not less than "
	    "17s" },
};

TEST(cluster_errors)
{
	struct conf *c;
	char text[1024], want[1024], name[80];
	size_t i;
	int failed = 0;

	for (i = 0; i < sizeof bad_cluster / sizeof bad_cluster[0]; i++) {
		snprintf(text, sizeof text,
		    "cluster {\n\tconninfo = \"dbname=vigil\"\n\t%s\n}\n",
		    bad_cluster[i].line);
		snprintf(
		    want, sizeof want, "3: cluster: %s", bad_cluster[i].error);
		if (!main_fails_with(text, want)) {
			fprintf(
			    stderr, "  bad value: %s\n", bad_cluster[i].line);
			failed = 1;
		}
	}
	ASSERT_EQ(failed, 0);

	/* 64 characters are a node name, 65 are not. */
	memset(name, 'n', sizeof name);
	name[64] = '\0';
	snprintf(text, sizeof text,
	    "cluster {\nconninfo = x\nnode_name = %s\n}\n", name);
	if ((c = load_main(text)) == NULL)
		dump_errors();
	ASSERT_OK(c != NULL);
	ASSERT_STREQ(c->cluster.node_name, name);
	conf_free(c);
	name[64] = 'n';
	name[65] = '\0';
	snprintf(text, sizeof text,
	    "cluster {\nconninfo = x\nnode_name = %s\n}\n", name);
	snprintf(want, sizeof want,
	    "3: cluster: node_name: invalid node name \"%s\" (1 to 64 "
	    "characters of A-Z, a-z, 0-9, \".\", \"_\" and \"-\")",
	    name);
	ASSERT_OK(main_fails_with(text, want));
	return (0);
}

TEST(cluster_section_errors)
{
	/* conninfo missing or empty: at the line of the section's name. */
	ASSERT_OK(main_fails_with(
	    "cluster {}\n", "1: cluster: conninfo is required"));
	ASSERT_OK(main_fails_with("# c\n/* a\n b */ cluster # x\n{\n}\n",
	    "3: cluster: conninfo is required"));
	ASSERT_OK(main_fails_with("cluster {\n\n  conninfo = \"\"\n}\n",
	    "1: cluster: conninfo is required"));
	ASSERT_OK(main_fails_with(
	    "on_event = {\n\"/bin/true\"\n}\ncluster {\n lease_ttl = 1m\n}\n",
	    "4: cluster: conninfo is required"));
	ASSERT_OK(main_fails_with(
	    "\n\"cluster\"\n{ }\n", "2: cluster: conninfo is required"));

	/* The timing rule with its defaults: at the section's line. */
	ASSERT_OK(main_fails_with("\ncluster {\n\tconninfo = x\n"
	                          "\trenew_interval = 10s\n}\n",
	    "2: cluster: lease_ttl: renew_interval + 2 * query_timeout + "
	    "fence_margin must be less than lease_ttl, so that two renew "
	    "attempts may fail before the fence starts: 10s + 2 * 10s + 2s = "
	    "32s is not less than 30s"));
	ASSERT_OK(main_fails_with("cluster {\n\tconninfo = x\n"
	                          "\tquery_timeout = 3s\n\tfence_margin = 1s\n"
	                          "\tlease_ttl = 12s\n}\n",
	    "5: cluster: lease_ttl: renew_interval + 2 * query_timeout + "
	    "fence_margin must be less than lease_ttl, so that two renew "
	    "attempts may fail before the fence starts: 5s + 2 * 3s + 1s = "
	    "12s is not less than 12s"));

	/* A second section. */
	ASSERT_OK(main_fails_with("cluster {\n\tconninfo = x\n}\n\n"
	                          "cluster { conninfo = y }\n",
	    "5: cluster: only one cluster section is allowed; the first is at "
	    "line 1"));

	/* A section is not an option, nor an option a section. */
	ASSERT_OK(main_fails_with("cluster = yes\n",
	    "1: missing opening brace for section 'cluster'"));
	ASSERT_OK(main_fails_with("cluster {\n conninfo { }\n}\n",
	    "2: cluster: missing equal sign after option 'conninfo'"));
	ASSERT_OK(
	    main_fails_with("cluster {\n\tconninfo = x\n\tjobs_dir = /\n}\n",
	        "3: cluster: no such option 'jobs_dir'"));
	return (0);
}

TEST(cluster_timing_bound)
{
	struct conf *c;

	/* 5s + 2 * 5s + 2s = 17s: the least lease_ttl is just above. */
	c = load_main("cluster {\nconninfo = x\nlease_ttl = 17001ms\n}\n");
	if (c == NULL)
		dump_errors();
	ASSERT_OK(c != NULL);
	ASSERT_EQ(c->cluster.lease_ttl, 17001 * MSEC);
	conf_free(c);

	/* Durations that add up past 2^64 us still break the rule. */
	ASSERT_OK(main_fails_with("cluster {\nconninfo = x\n"
	                          "query_timeout = 200000000d\n}\n",
	    "1: cluster: lease_ttl: renew_interval + 2 * query_timeout + "
	    "fence_margin must be less than lease_ttl, so that two renew "
	    "attempts may fail before the fence starts: 5s + 2 * 200000000d + "
	    "2s = 213503982d8h1m49.551615s is not less than 30s"));
	return (0);
}

/* Every error of a file, the cluster section's included, in line order. */
TEST(cluster_errors_in_line_order)
{
	struct conf *c;

	c = load_main("history_keep = 0\n"
	              "cluster {\n"
	              "\tlease_ttl = x\n"
	              "\tnode_name = \"a b\"\n"
	              "}\n"
	              "log_level = loud\n");
	ASSERT_OK(c == NULL);
	ASSERT_EQ(errs.n, 5);
	ASSERT_OK(strstr(errs.msgs[0], ":1: history_keep: ") != NULL);
	ASSERT_OK(
	    strstr(errs.msgs[1], ":2: cluster: conninfo is required") != NULL);
	ASSERT_OK(
	    strstr(errs.msgs[2], ":3: cluster: lease_ttl: invalid ") != NULL);
	ASSERT_OK(
	    strstr(errs.msgs[3], ":4: cluster: node_name: invalid ") != NULL);
	ASSERT_OK(strstr(errs.msgs[4], ":6: log_level: ") != NULL);
	return (0);
}

/* In a child, in a UTS namespace of its own: a host name not fit. */
static int
check_bad_host_name(void)
{
	if (unshare(CLONE_NEWUTS) != 0)
		return (0); /* not root: nothing to check */
	if (sethostname("db host", 7) != 0)
		return (1);
	ASSERT_OK(main_fails_with("\ncluster {\nconninfo = x\n}\n",
	    "2: cluster: node_name: the host name \"db host\" is not a valid "
	    "node name (1 to 64 characters of A-Z, a-z, 0-9, \".\", \"_\" "
	    "and \"-\"): set node_name"));
	ASSERT_OK(main_fails_with(
	    "\ncluster {\nconninfo = x\nnode_name = \"db host\"\n}\n",
	    "4: cluster: node_name: invalid node name \"db host\" (1 to 64 "
	    "characters of A-Z, a-z, 0-9, \".\", \"_\" and \"-\")"));
	return (0);
}

TEST(cluster_host_name)
{
	pid_t pid;
	int status;

	if ((pid = fork()) == -1)
		return (1);
	if (pid == 0)
		_exit(check_bad_host_name());
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_OK(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	return (0);
}
#else
TEST(cluster_without_libpq)
{
	ASSERT_OK(
	    main_fails_with("\ncluster {\n\tconninfo = \"dbname=vigil\"\n}\n",
	        "2: cluster: this vigild was built without PostgreSQL support "
	        "(./configure --with-postgresql)"));
	/* Its options are not read: the one error says it all. */
	ASSERT_OK(main_fails_with("cluster {\n\tlease_ttl = x\n}\n",
	    "1: cluster: this vigild was built without PostgreSQL support "
	    "(./configure --with-postgresql)"));
	ASSERT_OK(main_fails_with("cluster {\n\tconn_info = x\n}\n",
	    "2: cluster: no such option 'conn_info'"));
	return (0);
}
#endif

int
main(void)
{
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return (1);
	}
	conf_errors_init(&errs);
	RUN(defaults);
	RUN(service_options);
	RUN(periodic_and_queue_options);
	RUN(command_forms);
	RUN(parent_death_signal_follows_stop_signal);
	RUN(bad_values);
	RUN(bad_values_by_kind);
	RUN(probes);
	RUN(bad_commands);
	RUN(hooks);
	RUN(missing_command);
	RUN(unknown_option);
	RUN(syntax_errors);
	RUN(all_errors_in_line_order);
	RUN(comments_inside_lists);
	RUN(no_substitution);
	RUN(numeric_ids);
	RUN(load_errors);
	RUN(jobs_dir);
	RUN(jobs_dir_errors);
	RUN(equal);
	RUN(names);
	RUN(job_files);
	RUN(error_list);
	RUN(main_defaults);
	RUN(main_xdg_defaults);
	RUN(main_file);
	RUN(main_errors);
	RUN(job_cluster);
#ifdef HAVE_LIBPQ
	RUN(cluster_defaults);
	RUN(cluster_options);
	RUN(cluster_errors);
	RUN(cluster_section_errors);
	RUN(cluster_timing_bound);
	RUN(cluster_errors_in_line_order);
	RUN(cluster_host_name);
#else
	RUN(cluster_without_libpq);
#endif
	conf_errors_clear(&errs);
	rm_dir(tmpdir);
	TEST_MAIN_END();
}
