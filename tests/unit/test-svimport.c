/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The supervisord importer's translation: each option into the job file
 * line it becomes (checked by loading the job file with vigild's own
 * loader), each thing it cannot translate into one report with file,
 * line and option, priorities into depends, %(process_num) into the sh
 * script of each instance.
 */

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "ini.h"
#include "svimport.h"
#include "test.h"
#include "xmalloc.h"

static char tdir[] = "/tmp/test-svimport.XXXXXX";
static char conf_path[512];
static struct ini ini;
static struct svimport_out out;
static char *const test_environ[] = { "APP=/srv/app", "EMPTY=", NULL };

/* Translate TEXT as supervisord.conf, with SKIP left out. */
static int
translate_skip(const char *text, char *const *skip)
{
	struct svimport_in in = { "h1", test_environ, skip };
	char *cause = NULL;
	FILE *f;

	ini_clear(&ini);
	svimport_out_clear(&out);
	memset(&ini, 0, sizeof ini);
	snprintf(conf_path, sizeof conf_path, "%s/supervisord.conf", tdir);
	if ((f = fopen(conf_path, "w")) == NULL)
		return (-1);
	fputs(text, f);
	fclose(f);
	if (ini_load(&ini, conf_path, NULL, 0, &cause) == -1) {
		fprintf(stderr, "  ini_load: %s\n", cause);
		free(cause);
		return (-1);
	}
	svimport_translate(&ini, &in, &out);
	return (0);
}

static int
translate(const char *text)
{
	return (translate_skip(text, NULL));
}

/* The text of job NAME, or NULL. */
static const char *
job(const char *name)
{
	size_t i;

	for (i = 0; i < out.njobs; i++)
		if (strcmp(out.jobs[i].name, name) == 0)
			return (out.jobs[i].text);
	return (NULL);
}

/* Is there a report "FILE:LINE: OPTION: not translated (" + WHY...? */
static int
reported(int line, const char *option, const char *why)
{
	char *want;
	size_t i;
	int found = 0;

	xasprintf(&want, "%s:%d: %s: not translated (%s", conf_path, line,
	    option, why);
	for (i = 0; i < out.nreports && !found; i++)
		found = strncmp(out.reports[i], want, strlen(want)) == 0;
	if (!found) {
		fprintf(stderr, "  no report \"%s\"; there are:\n", want);
		for (i = 0; i < out.nreports; i++)
			fprintf(stderr, "    %s\n", out.reports[i]);
	}
	free(want);
	return (found);
}

/* Job NAME loaded by vigild's loader, or NULL (errors printed). */
static struct job_spec *
spec(const char *name)
{
	struct conf_errors errs;
	struct job_spec *s;
	char path[600];
	const char *text = job(name);
	size_t i;
	FILE *f;

	if (text == NULL)
		return (NULL);
	snprintf(path, sizeof path, "%s/%s.conf", tdir, name);
	if ((f = fopen(path, "w")) == NULL)
		return (NULL);
	fputs(text, f);
	fclose(f);
	conf_errors_init(&errs);
	s = job_spec_load(path, name, &errs);
	for (i = 0; i < errs.n; i++)
		fprintf(stderr, "  %s\n", errs.msgs[i]);
	conf_errors_clear(&errs);
	unlink(path);
	return (s);
}

static int
has_line(const char *name, const char *line)
{
	const char *t = job(name), *p;
	size_t len = strlen(line);

	for (p = t; p != NULL && (p = strstr(p, line)) != NULL; p++)
		if ((p == t || p[-1] == '\n') && (p[len] == '\n'))
			return (1);
	fprintf(stderr, "  %s has no line \"%s\":\n%s", name, line,
	    t != NULL ? t : "(no job)\n");
	return (0);
}

TEST(program_options)
{
	struct job_spec *s;

	ASSERT_OK(translate("[program:web]\n"
	                    "command = /usr/bin/gunicorn -w 4 app:wsgi\n"
	                    "autostart = false\n"
	                    "autorestart = true\n"
	                    "startsecs = 5\n"
	                    "startretries = 7\n"
	                    "stopsignal = QUIT\n"
	                    "stopwaitsecs = 30\n"
	                    "killasgroup = true\n"
	                    "user = root\n"
	                    "umask = 0o27\n"
	                    "directory = /tmp\n"
	                    "exitcodes = 0, 3\n") == 0);
	ASSERT_EQ(out.njobs, 1);
	ASSERT_EQ(out.nreports, 0);
	ASSERT_OK((s = spec("web")) != NULL);
	ASSERT_EQ(s->argc, 4);
	ASSERT_STREQ(s->argv[0], "/usr/bin/gunicorn");
	ASSERT_STREQ(s->argv[3], "app:wsgi");
	ASSERT_EQ(s->autostart, 0);
	ASSERT_EQ(s->restart, CONF_RESTART_ALWAYS);
	ASSERT_EQ(s->min_uptime, 5000000);
	ASSERT_EQ(s->max_restarts, 7);
	ASSERT_EQ(s->stop_signal, 3);
	ASSERT_EQ(s->stop_timeout, 30000000);
	ASSERT_EQ(s->kill_group, 1);
	ASSERT_STREQ(s->user, "root");
	ASSERT_EQ(s->umask, 027);
	ASSERT_STREQ(s->directory, "/tmp");
	ASSERT_OK(job_spec_is_success(s, 3) && !job_spec_is_success(s, 1));
	ASSERT_EQ(s->input, CONF_STDIN_PIPE);
	job_spec_free(s);
	/* The supervisord option above each line. */
	ASSERT_OK(has_line("web", "# stopsignal = QUIT"));
	ASSERT_OK(has_line("web", "stop_signal = \"QUIT\""));
	return (0);
}

TEST(defaults)
{
	struct job_spec *s;

	ASSERT_OK(translate("[program:w]\ncommand = sleep 1\n") == 0);
	ASSERT_EQ(out.nreports, 0);
	ASSERT_OK((s = spec("w")) != NULL);
	/* autorestart=unexpected: vigil's default would be "always". */
	ASSERT_EQ(s->restart, CONF_RESTART_ON_FAILURE);
	ASSERT_EQ(s->max_restarts, 0);
	ASSERT_EQ(s->autostart, 1);
	job_spec_free(s);
	ASSERT_OK(has_line("w",
	    "# startretries = 3 (supervisord's default) "
	    "is not carried over: vigil never gives up"));
	return (0);
}

TEST(autorestart_values)
{
	struct job_spec *s;

	ASSERT_OK(
	    translate("[program:a]\ncommand=x\nautorestart=false\n"
	              "[program:b]\ncommand=x\nautorestart=Unexpected\n"
	              "[program:c]\ncommand=x\nautorestart=maybe\n") == 0);
	ASSERT_OK((s = spec("a")) != NULL);
	ASSERT_EQ(s->restart, CONF_RESTART_NEVER);
	job_spec_free(s);
	ASSERT_OK((s = spec("b")) != NULL);
	ASSERT_EQ(s->restart, CONF_RESTART_ON_FAILURE);
	job_spec_free(s);
	ASSERT_OK(reported(9, "autorestart", "supervisord refuses it"));
	return (0);
}

TEST(reported_options)
{
	ASSERT_OK(translate("[program:p]\n"
	                    "command = sleep 1\n"
	                    "startretries = 0\n"
	                    "stdout_events_enabled = true\n"
	                    "serverurl = http://h:9001\n"
	                    "bogus = 1\n"
	                    "stdout_logfile = /var/log/p.log\n"
	                    "stdout_logfile_maxbytes = 100\n"
	                    "stopsignal = NOPE\n"
	                    "umask = 9\n"
	                    "exitcodes = 0,256\n"
	                    "stderr_logfile_backups = 2\n") == 0);
	ASSERT_EQ(out.njobs, 1);
	ASSERT_OK(reported(3, "startretries", "vigil's max_restarts counts"));
	ASSERT_OK(reported(4, "stdout_events_enabled", "vigil has no event"));
	ASSERT_OK(reported(5, "serverurl", "vigil gives jobs no XML-RPC"));
	ASSERT_OK(reported(6, "bogus", "not an option of [program:x]"));
	ASSERT_OK(reported(7, "stdout_logfile",
	    "vigil writes the output to "
	    "LOG_DIR/p.log"));
	ASSERT_OK(reported(8, "stdout_logfile_maxbytes", "vigil's smallest"));
	ASSERT_OK(reported(9, "stopsignal", "supervisord refuses it"));
	ASSERT_OK(reported(10, "umask", "supervisord refuses it"));
	ASSERT_OK(reported(11, "exitcodes", "supervisord refuses it"));
	ASSERT_OK(reported(12, "stderr_logfile_backups", "vigil has one log"));
	ASSERT_EQ(out.nreports, 10);
	{
		struct job_spec *s = spec("p");

		ASSERT_OK(s != NULL);
		job_spec_free(s);
	}
	/* Defaults written out are not reported; a refused pair is. */
	ASSERT_OK(translate("[program:p]\n"
	                    "command = sleep 1\n"
	                    "serverurl = AUTO\n"
	                    "startretries = 2000000\n"
	                    "stopasgroup = true\n"
	                    "killasgroup = false\n"
	                    "[ctlplugin:x]\n"
	                    "supervisor.ctl_factory = a.b:c\n") == 0);
	ASSERT_EQ(out.nreports, 2);
	ASSERT_OK(
	    reported(4, "startretries", "vigil's max_restarts is at most"));
	ASSERT_OK(
	    reported(5, "stopasgroup", "supervisord refuses stopasgroup"));
	return (0);
}

TEST(sections)
{
	ASSERT_OK(translate("[supervisord]\n"
	                    "logfile = /var/log/supervisord.log\n"
	                    "minfds = 1024\n"
	                    "strip_ansi = true\n"
	                    "[unix_http_server]\nfile = /tmp/s.sock\n"
	                    "[supervisorctl]\nserverurl = unix:///tmp/s\n"
	                    "[rpcinterface:supervisor]\nx = y\n"
	                    "[inet_http_server]\nport = :9001\n"
	                    "[eventlistener:mail]\ncommand = crashmail\n"
	                    "[fcgi-program:php]\ncommand = php-cgi\n"
	                    "[group:g]\nprograms = a\n"
	                    "[what]\nx = 1\n"
	                    "[program:a]\ncommand = sleep 1\n") == 0);
	ASSERT_OK(reported(3, "minfds", "vigild does not raise"));
	ASSERT_OK(reported(4, "strip_ansi", "vigil writes the output"));
	ASSERT_OK(reported(11, "", "vigilctl talks to vigild"));
	ASSERT_OK(reported(13, "", "vigil has no event listener protocol"));
	ASSERT_OK(reported(15, "", "vigil does not open sockets"));
	ASSERT_OK(reported(17, "", "vigil has no groups"));
	ASSERT_OK(reported(19, "", "not a section supervisord knows"));
	ASSERT_EQ(out.nreports, 7);
	ASSERT_EQ(out.njobs, 1);
	return (0);
}

TEST(supervisord_inherited)
{
	struct job_spec *s;

	ASSERT_OK(translate("[supervisord]\n"
	                    "environment = A=\"1\",B=%(ENV_APP)s\n"
	                    "user = root\n"
	                    "umask = 077\n"
	                    "directory = /var\n"
	                    "[program:p]\n"
	                    "command = x\n"
	                    "environment = B=2,C=\"%(here)s\"\n") == 0);
	ASSERT_OK((s = spec("p")) != NULL);
	ASSERT_EQ(s->nenvironment, 3);
	ASSERT_STREQ(s->environment[0], "A=1");
	ASSERT_STREQ(s->environment[1], "B=2");
	ASSERT_OK(strncmp(s->environment[2], "C=", 2) == 0 &&
	    strcmp(s->environment[2] + 2, tdir) == 0);
	ASSERT_STREQ(s->user, "root");
	/* Daemonized (nodaemon unset): its umask and directory count. */
	ASSERT_EQ(s->umask, 077);
	ASSERT_STREQ(s->directory, "/var");
	job_spec_free(s);
	ASSERT_OK(
	    translate("[supervisord]\nnodaemon = true\numask = 077\n"
	              "directory = /var\n[program:p]\ncommand = x\n") == 0);
	ASSERT_OK((s = spec("p")) != NULL);
	ASSERT_EQ(s->umask, -1);
	ASSERT_STREQ(s->directory, "/");
	job_spec_free(s);
	return (0);
}

/* A control character a job file cannot hold: reported where it was set. */
TEST(environment_controls)
{
	struct job_spec *s;

	ASSERT_OK(translate("[supervisord]\n"
	                    "environment = A=\"x\001y\",B=1\n"
	                    "[program:p]\n"
	                    "command = x\n") == 0);
	ASSERT_OK(reported(2, "environment", "a value with a control"));
	ASSERT_OK((s = spec("p")) != NULL);
	ASSERT_EQ(s->nenvironment, 1);
	ASSERT_STREQ(s->environment[0], "B=1");
	job_spec_free(s);
	ASSERT_OK(translate("[supervisord]\n"
	                    "environment = A=\"x\001y\",B=1\n"
	                    "[program:p]\n"
	                    "command = x\n"
	                    "environment = C=\"\002\",D=2\n") == 0);
	ASSERT_OK(reported(2, "environment", "a value with a control"));
	ASSERT_OK(reported(5, "environment", "a value with a control"));
	ASSERT_OK((s = spec("p")) != NULL);
	ASSERT_EQ(s->nenvironment, 2);
	ASSERT_STREQ(s->environment[0], "B=1");
	ASSERT_STREQ(s->environment[1], "D=2");
	job_spec_free(s);
	return (0);
}

TEST(numprocs)
{
	struct job_spec *s;

	ASSERT_OK(translate("[program:w]\n"
	                    "command = worker --id %(process_num)02d -n "
	                    "%(numprocs)d \"it's\"\n"
	                    "process_name = %(program_name)s_%(process_num)s\n"
	                    "numprocs = 4\n"
	                    "numprocs_start = 10\n"
	                    "environment = N=\"%(process_num)d\",K=v\n") == 0);
	ASSERT_OK(
	    reported(3, "process_name", "the instances are called w@0 to w@3"));
	ASSERT_EQ(out.nreports, 1);
	ASSERT_OK((s = spec("w")) != NULL);
	ASSERT_EQ(s->instances, 4);
	ASSERT_EQ(s->argc, 4);
	ASSERT_STREQ(s->argv[0], "/bin/sh");
	ASSERT_STREQ(s->argv[1], "-c");
	ASSERT_STREQ(s->argv[2],
	    "n0=$(printf '%d' $((VIGIL_INSTANCE + 10))); "
	    "n1=$(printf '%02d' $((VIGIL_INSTANCE + 10))); "
	    "unset PWD OLDPWD; export N=\"$n0\"; "
	    "exec 'worker' '--id' \"$n1\" '-n' '4' 'it'\\''s'");
	ASSERT_STREQ(s->argv[3], "w");
	/* The variables without process_num stay in environment. */
	ASSERT_EQ(s->nenvironment, 1);
	ASSERT_STREQ(s->environment[0], "K=v");
	job_spec_free(s);
	return (0);
}

/* Variables of [supervisord]'s environment are %(ENV_X)s in programs. */
TEST(supervisord_env_expansion)
{
	struct job_spec *s;

	ASSERT_OK(translate("[supervisord]\n"
	                    "environment = APP_ROOT=\"/srv/a\"\n"
	                    "[program:p]\n"
	                    "command = %(ENV_APP_ROOT)s/bin/p\n"
	                    "directory = %(ENV_APP_ROOT)s\n") == 0);
	ASSERT_EQ(out.nreports, 0);
	ASSERT_OK((s = spec("p")) != NULL);
	ASSERT_STREQ(s->argv[0], "/srv/a/bin/p");
	ASSERT_STREQ(s->directory, "/srv/a");
	job_spec_free(s);
	return (0);
}

/* Two programs of one name: the first is translated, the second reported. */
TEST(duplicate_names)
{
	ASSERT_OK(translate("[program:x]\ncommand = first\n"
	                    "[program: x]\ncommand = second\n") == 0);
	ASSERT_EQ(out.njobs, 1);
	ASSERT_OK(has_line("x", "command = \"first\""));
	ASSERT_OK(reported(3, "", "[program:x] is already in"));
	return (0);
}

TEST(numprocs_refused)
{
	ASSERT_OK(translate("[program:w]\ncommand = x\nnumprocs = 2\n"
	                    "[program:v]\ncommand = x %(process_num)#o\n"
	                    "[program:u]\ncommand = x\nnumprocs = 1001\n"
	                    "process_name=%(process_num)s\n") == 0);
	ASSERT_OK(reported(1, "", "supervisord refuses it: numprocs > 1"));
	ASSERT_OK(reported(5, "command", "a %(process_num) conversion"));
	ASSERT_OK(reported(8, "numprocs", "1001: vigil runs 1 to 1000"));
	ASSERT_OK(job("w") == NULL && job("v") == NULL && job("u") == NULL);
	return (0);
}

TEST(command_forms)
{
	struct job_spec *s;

	/* vigil splits "a b" as shlex does: the string form stays. */
	ASSERT_OK(translate("[program:a]\ncommand = echo \"a b\" 'c d'\n"
	                    "[program:b]\ncommand = echo \"\\$x\" ${HOME}\n"
	                    "[program:c]\ncommand = \n"
	                    "[program:d]\ncommand = echo \"open\n"
	                    "[program:e]\nautostart = true\n") == 0);
	ASSERT_OK(has_line("a", "command = \"echo \\\"a b\\\" 'c d'\""));
	ASSERT_OK((s = spec("b")) != NULL);
	/* shlex keeps \$ inside "": a list, word for word. */
	ASSERT_EQ(s->argc, 3);
	ASSERT_STREQ(s->argv[1], "\\$x");
	ASSERT_STREQ(s->argv[2], "${HOME}");
	job_spec_free(s);
	ASSERT_OK(reported(6, "command", "supervisord refuses it: an empty"));
	ASSERT_OK(reported(8, "command", "supervisord refuses it: No closing"));
	ASSERT_OK(reported(9, "", "supervisord refuses it: no command"));
	ASSERT_OK(job("c") == NULL && job("d") == NULL && job("e") == NULL);
	return (0);
}

TEST(expansions)
{
	struct job_spec *s;

	ASSERT_OK(translate("[program:x]\n"
	                    "command = %(ENV_APP)s/run %(program_name)s "
	                    "%(group_name)s %(host_node_name)s %%\n"
	                    "[program:y]\ncommand = run %(ENV_NOPE)s\n"
	                    "[program:z]\ncommand = z\nuser = %(process_num)s\n"
	                    "[group:g]\nprograms = y , x\n") == 0);
	ASSERT_OK((s = spec("x")) != NULL);
	ASSERT_STREQ(s->argv[0], "/srv/app/run");
	ASSERT_STREQ(s->argv[1], "x");
	ASSERT_STREQ(s->argv[2], "g");
	ASSERT_STREQ(s->argv[3], "h1");
	ASSERT_STREQ(s->argv[4], "%");
	job_spec_free(s);
	ASSERT_OK(reported(4, "command", "supervisord refuses it"));
	ASSERT_OK(job("y") == NULL);
	/* process_num is not there before the processes are made. */
	ASSERT_OK(reported(7, "user", "supervisord refuses it"));
	return (0);
}

TEST(output)
{
	struct job_spec *s;

	ASSERT_OK(translate("[program:a]\ncommand=x\nstdout_logfile=NONE\n"
	                    "redirect_stderr=true\n"
	                    "[program:b]\ncommand=x\nstdout_logfile=syslog\n"
	                    "stderr_logfile=/dev/stderr\n"
	                    "stdout_logfile_maxbytes=0\n"
	                    "stderr_logfile_maxbytes=2GB\n"
	                    "stderr_logfile_backups=0\n"
	                    "[program:c]\ncommand=x\nstderr_syslog=true\n"
	                    "stdout_logfile_maxbytes=3000\n") == 0);
	ASSERT_OK((s = spec("a")) != NULL);
	ASSERT_EQ(s->out, CONF_OUTPUT_NULL);
	ASSERT_EQ(s->err, CONF_OUTPUT_NULL);
	job_spec_free(s);
	ASSERT_OK((s = spec("b")) != NULL);
	ASSERT_EQ(s->out, CONF_OUTPUT_JOURNAL);
	ASSERT_EQ(s->err, CONF_OUTPUT_INHERIT);
	/* Only stderr goes to the file: its sizes. */
	ASSERT_EQ(s->log_max_size, 2ULL << 30);
	ASSERT_EQ(s->log_keep, 0);
	job_spec_free(s);
	ASSERT_OK((s = spec("c")) != NULL);
	ASSERT_EQ(s->out, CONF_OUTPUT_FILE);
	ASSERT_EQ(s->err, CONF_OUTPUT_JOURNAL);
	ASSERT_EQ(s->log_max_size, 3000);
	job_spec_free(s);
	/* supervisord writes c's stderr to its file and to syslog. */
	ASSERT_EQ(out.nreports, 1);
	ASSERT_OK(reported(14, "stderr_syslog",
	    "vigil sends the output to the journal only, not also to a log "
	    "file"));
	/* OFF is NONE; /dev/stdout for stderr is vigild's stderr. */
	ASSERT_OK(translate("[program:d]\ncommand=x\nstdout_logfile=Off\n"
	                    "stderr_logfile=/dev/stdout\n") == 0);
	ASSERT_OK((s = spec("d")) != NULL);
	ASSERT_EQ(s->out, CONF_OUTPUT_NULL);
	ASSERT_EQ(s->err, CONF_OUTPUT_INHERIT);
	job_spec_free(s);
	ASSERT_OK(reported(4, "stderr_logfile",
	    "vigil's inherit gives the stderr vigild's own stderr, not "
	    "/dev/stdout"));
	/* With stdout elsewhere, stderr's file is the job's log. */
	ASSERT_OK(
	    translate("[program:e]\ncommand=x\nstdout_logfile=NONE\n") == 0);
	ASSERT_OK(has_line("e",
	    "# stderr goes to the job's log file, "
	    "LOG_DIR/e.log"));
	return (0);
}

TEST(priorities)
{
	ASSERT_OK(translate("[program:db]\ncommand=x\npriority=1\n"
	                    "[program:cache]\ncommand=x\npriority=1\n"
	                    "[program:web]\ncommand=x\npriority=5\n"
	                    "[program:manual]\ncommand=x\npriority=7\n"
	                    "autostart=false\n"
	                    "[program:late]\ncommand=x\npriority=9\n"
	                    "[program:g1]\ncommand=x\npriority=0\n"
	                    "[group:grp]\nprograms=g1\npriority=10\n") == 0);
	ASSERT_OK(strstr(job("db"), "depends") == NULL);
	ASSERT_OK(strstr(job("cache"), "depends") == NULL);
	ASSERT_OK(has_line("web", "depends = {\"db\", \"cache\"}"));
	/* Not started at start-up: no depends either way. */
	ASSERT_OK(strstr(job("manual"), "depends") == NULL);
	ASSERT_OK(has_line("late", "depends = {\"web\"}"));
	/* The group's priority (10) counts, not its program's (0). */
	ASSERT_OK(has_line("g1", "depends = {\"late\"}"));
	/* All at one level: nothing to order. */
	ASSERT_OK(translate("[program:a]\ncommand=x\n[program:b]\ncommand=x\n"
	                    "priority=999\n") == 0);
	ASSERT_OK(strstr(job("a"), "depends") == NULL &&
	    strstr(job("b"), "depends") == NULL);
	return (0);
}

TEST(skip_and_names)
{
	char *skip[] = { "db", NULL };

	ASSERT_OK(translate_skip("[program:db]\ncommand=x\npriority=1\n"
	                         "[program:web]\ncommand=x\npriority=2\n"
	                         "[program:bad+name]\ncommand=x\n",
	              skip) == 0);
	ASSERT_OK(job("db") == NULL);
	ASSERT_OK(strstr(job("web"), "depends") == NULL);
	ASSERT_OK(reported(7, "", "'bad+name' is not a vigil job name"));
	ASSERT_EQ(out.njobs, 1);
	/* A hidden job file, or a name vigilctl would take for an option. */
	ASSERT_OK(translate("[program:.hidden]\ncommand=x\n"
	                    "[program:-x]\ncommand=x\n") == 0);
	ASSERT_OK(reported(1, "", "'.hidden' is not a vigil job name"));
	ASSERT_OK(reported(3, "", "'-x' is not a vigil job name"));
	ASSERT_EQ(out.njobs, 0);
	return (0);
}

TEST(defaults_section)
{
	struct job_spec *s;

	ASSERT_OK(translate("[DEFAULT]\nautostart = false\nunknown = 1\n"
	                    "[program:a]\ncommand = x\n") == 0);
	ASSERT_OK((s = spec("a")) != NULL);
	ASSERT_EQ(s->autostart, 0);
	job_spec_free(s);
	ASSERT_OK(reported(3, "unknown", "not an option"));
	return (0);
}

TEST(quote)
{
	char *q;

	ASSERT_OK((q = svimport_quote("a\"b\\c\td\ne${X}")) != NULL);
	ASSERT_STREQ(q, "\"a\\\"b\\\\c\\td\\ne${X}\"");
	free(q);
	ASSERT_OK(svimport_quote("bell\a") == NULL);
	/* What it writes, vigild reads back as it was. */
	ASSERT_OK(translate("[program:q]\ncommand = printf '%%s' "
	                    "'a\"b\\c ${HOME} $x'\n") == 0);
	{
		struct job_spec *s = spec("q");

		ASSERT_OK(s != NULL);
		ASSERT_STREQ(s->argv[2], "a\"b\\c ${HOME} $x");
		job_spec_free(s);
	}
	return (0);
}

int
main(void)
{
	if (mkdtemp(tdir) == NULL) {
		perror("mkdtemp");
		return (1);
	}
	RUN(program_options);
	RUN(defaults);
	RUN(autorestart_values);
	RUN(reported_options);
	RUN(sections);
	RUN(supervisord_inherited);
	RUN(environment_controls);
	RUN(supervisord_env_expansion);
	RUN(duplicate_names);
	RUN(numprocs);
	RUN(numprocs_refused);
	RUN(command_forms);
	RUN(expansions);
	RUN(output);
	RUN(priorities);
	RUN(skip_and_names);
	RUN(defaults_section);
	RUN(quote);
	ini_clear(&ini);
	svimport_out_clear(&out);
	test_rmtree(tdir);
	TEST_MAIN_END();
}
