/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Job output in vigild: the pipes between each running instance and its
 * job's log file, lifecycle markers, journal streams, and the followers of
 * "vigilctl tail -f".
 *
 * Each run of an instance gets a fresh pipe (one for both streams when
 * both go to the file, so their lines stay in the order written).  vigild
 * reads the non-blocking read end at most OUTPUT_READ bytes per loop turn,
 * at a lower priority than signals, timers and the control socket, so a
 * job that writes without pause only fills its own pipe and then waits:
 * the back-pressure falls on that job, never on the loop.  A pipe lives
 * until its last writer is gone (a grandchild may keep it), independently
 * of the run that opened it.
 *
 * A log file belongs to the job's name, not to the job record, so it and
 * its followers survive a reload that replaces or removes the job while
 * old pipes still drain.  Followers get every formatted block through the
 * sink's tap; one that stops reading is dropped by server.c's limit.
 */

#include "config.h"

#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <systemd/sd-journal.h>

#include "cmd.h"
#include "effects.h"
#include "evloop.h"
#include "inst.h"
#include "jobs.h"
#include "log.h"
#include "output.h"
#include "server.h"
#include "vigild.h"
#include "xmalloc.h"

/* Bytes read from one pipe per loop turn. */
#define OUTPUT_READ (64 * 1024)
/* At a child's exit, read at most this much before the exit marker. */
#define OUTPUT_DRAIN_MAX (1024 * 1024)
/* The last bytes of a queue run's output, kept for the dead list. */
#define OUTPUT_TAIL 4096
/* Below signals, timers and the control socket (SD_EVENT_PRIORITY_NORMAL). */
#define OUTPUT_PRIORITY 10

struct follower {
	struct client *client;
	struct logfile *log;
	TAILQ_ENTRY(follower) entry;
};

struct logfile {
	char *name;
	struct output_sink *sink;
	int refs;           /* the job, and each open pipe */
	int journal_failed; /* fell back from journal to the file */
	TAILQ_HEAD(, follower) followers;
	RB_ENTRY(logfile) entry;
};

struct outpipe {
	int fd;
	sd_event_source *src;
	struct logfile *log;
	struct inst *inst; /* the run it belongs to, while that runs */
	char *tag;         /* instance label, or NULL */
	struct output_partial part;
	char *tail; /* queue runs: the last OUTPUT_TAIL bytes, or NULL */
	size_t tail_len;
	LIST_ENTRY(outpipe) entry;
};

static int
logfile_cmp(struct logfile *a, struct logfile *b)
{
	return (strcmp(a->name, b->name));
}
RB_HEAD(logfile_tree, logfile);
RB_PROTOTYPE(logfile_tree, logfile, entry, logfile_cmp)
RB_GENERATE(logfile_tree, logfile, entry, logfile_cmp)

static struct logfile_tree joblog_logs = RB_INITIALIZER(&joblog_logs);
static LIST_HEAD(, outpipe) joblog_pipes = LIST_HEAD_INITIALIZER(joblog_pipes);
static char output_rbuf[OUTPUT_READ];
static size_t joblog_nfollowers;

static void joblog_pipe_free(struct outpipe *);

/* Pass a formatted block to every follower of the file. */
static void
logfile_tap(void *arg, const char *p, size_t n)
{
	struct logfile *lf = arg;
	struct follower *f;

	TAILQ_FOREACH(f, &lf->followers, entry)
		server_client_write(f->client, PROTO_STDOUT, p, n);
}

/* Find or create the log file of a job name and take a reference. */
static struct logfile *
logfile_get(const char *name)
{
	struct logfile key, *lf;
	char *file;

	memset(&key, 0, sizeof(key));
	key.name = (char *)(uintptr_t)name;
	if ((lf = RB_FIND(logfile_tree, &joblog_logs, &key)) != NULL) {
		lf->refs++;
		return (lf);
	}
	lf = xcalloc(1, sizeof(*lf));
	lf->name = xstrdup(name);
	/* Relative to the log directory vigild checked at start. */
	xasprintf(&file, "%s.log", name);
	lf->sink = output_sink_new(vigild.log_dirfd, vigild.log_dir, file);
	free(file);
	output_sink_set_tap(lf->sink, logfile_tap, lf);
	TAILQ_INIT(&lf->followers);
	lf->refs = 1;
	RB_INSERT(logfile_tree, &joblog_logs, lf);
	return (lf);
}

/* Drop a reference; the last one ends the followers and frees the file. */
static void
logfile_put(struct logfile *lf)
{
	struct follower *f;

	if (lf == NULL || --lf->refs > 0)
		return;
	while ((f = TAILQ_FIRST(&lf->followers)) != NULL) {
		TAILQ_REMOVE(&lf->followers, f, entry);
		joblog_nfollowers--;
		server_client_finish(f->client, CMD_EXIT_OK);
		free(f);
	}
	RB_REMOVE(logfile_tree, &joblog_logs, lf);
	output_sink_free(lf->sink);
	free(lf->name);
	free(lf);
}

/* A job appears: attach its log file and apply its options. */
void
joblog_job_attach(struct job *j)
{
	if (j->log == NULL)
		j->log = logfile_get(j->name);
	joblog_job_configure(j);
}

/* Apply the job's log options (again, after a reload). */
void
joblog_job_configure(struct job *j)
{
	const struct job_spec *spec = j->spec;

	output_sink_configure(j->log->sink, spec->log_max_size, spec->log_keep,
	    spec->log_timestamps);
}

/* The job record goes away; pipes still open keep the file. */
void
joblog_job_detach(struct job *j)
{
	logfile_put(j->log);
	j->log = NULL;
}

/* Free a pipe after its last bytes were written out. */
static void
joblog_pipe_free(struct outpipe *op)
{
	output_feed_end(op->log->sink, &op->part, op->tag);
	if (op->inst != NULL) {
		/* The run is still on record: it keeps its tail. */
		free(op->inst->q.tail);
		op->inst->q.tail = op->tail;
		op->inst->q.tail_len = op->tail_len;
		op->tail = NULL;
		op->inst->run.out = NULL;
	}
	LIST_REMOVE(op, entry);
	op->src = sd_event_source_disable_unref(op->src);
	close(op->fd);
	logfile_put(op->log);
	free(op->tag);
	free(op->tail);
	free(op);
}

/* Keep the last OUTPUT_TAIL bytes a queue run wrote. */
static void
joblog_tail_keep(struct outpipe *op, const char *p, size_t n)
{
	size_t keep;

	if (n >= OUTPUT_TAIL) {
		memcpy(op->tail, p + n - OUTPUT_TAIL, OUTPUT_TAIL);
		op->tail_len = OUTPUT_TAIL;
		return;
	}
	if (op->tail_len + n > OUTPUT_TAIL) {
		keep = OUTPUT_TAIL - n;
		memmove(op->tail, op->tail + op->tail_len - keep, keep);
		op->tail_len = keep;
	}
	memcpy(op->tail + op->tail_len, p, n);
	op->tail_len += n;
}

/* Read once from the pipe: 1 if data came, 0 if none now, -1 at the end. */
static int
joblog_pipe_read(struct outpipe *op)
{
	ssize_t n;

	n = read(op->fd, output_rbuf, sizeof(output_rbuf));
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return (0);
	if (n <= 0) {
		if (n == -1)
			log_warn("%s: read output", op->log->name);
		return (-1);
	}
	output_feed(op->log->sink, &op->part, op->tag, output_rbuf, (size_t)n);
	if (op->tail != NULL)
		joblog_tail_keep(op, output_rbuf, (size_t)n);
	return (1);
}

static int
joblog_pipe_event(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	struct outpipe *op = arg;

	if (joblog_pipe_read(op) == -1)
		joblog_pipe_free(op);
	return (0);
}

/*
 * Make a pipe into the instance's log; return the write end for the
 * child.  A run's pipe (bind) is the instance's run.out; another one
 * (exec_start_post) lives on its own until its writers are gone.
 */
static int
joblog_pipe_make(struct inst *in, int bind, char **cause)
{
	struct outpipe *op;
	int fds[2];

	if (pipe2(fds, O_CLOEXEC) == -1) {
		xasprintf(cause, "pipe: %s", strerror(errno));
		return (-1);
	}
	(void)fcntl(fds[0], F_SETFL, O_NONBLOCK);
	op = xcalloc(1, sizeof(*op));
	op->fd = fds[0];
	op->log = in->job->log;
	op->log->refs++;
	op->tag = in->job->ninsts > 1 ? xstrdup(in->label) : NULL;
	if (in->job->kind->keep_tail)
		op->tail = xmalloc(OUTPUT_TAIL);
	evloop_io(&op->src, op->fd, EPOLLIN, joblog_pipe_event, op);
	(void)sd_event_source_set_priority(op->src, OUTPUT_PRIORITY);
	LIST_INSERT_HEAD(&joblog_pipes, op, entry);
	if (bind) {
		joblog_inst_release(in);
		op->inst = in;
		in->run.out = op;
	}
	return (fds[1]);
}

/* Make the pipe of one run; return the write end for the child. */
static int
joblog_pipe_new(struct inst *in, char **cause)
{
	return (joblog_pipe_make(in, 1, cause));
}

/*
 * The stdout and stderr of a process of the instance that is not its run
 * (exec_start_post): a pipe into its log file whatever stdout says (or
 * vigild's own with "inherit"); fds as joblog_child_fds.
 */
int
joblog_aux_fds(struct inst *in, int fds[2], char **cause)
{
	fds[0] = fds[1] = -1;
	if (in->job->spec->out == CONF_OUTPUT_INHERIT)
		return (0);
	if ((fds[0] = joblog_pipe_make(in, 0, cause)) == -1)
		return (-1);
	fds[1] = fds[0];
	return (0);
}

/* A stream to journald, or -1 (logged once per job) to fall back. */
static int
joblog_journal_fd(struct inst *in, int stream)
{
	struct logfile *lf = in->job->log;
	int fd;

	fd = sd_journal_stream_fd(
	    in->job->name, stream == 1 ? LOG_INFO : LOG_WARNING, 1);
	if (fd >= 0) {
		lf->journal_failed = 0;
		return (fd);
	}
	if (!lf->journal_failed)
		log_warnx("%s: journal not available (%s): output goes to %s",
		    in->label, strerror(-fd), output_sink_path(lf->sink));
	lf->journal_failed = 1;
	return (-1);
}

/*
 * Open the child's stdout and stderr as the job says: a pipe to the log
 * file, a journal stream, /dev/null, or -1 for vigild's own.  On success
 * set fds[0] and fds[1] (equal when shared; the caller closes them after
 * the fork) and return 0; else -1 with *cause.
 */
int
joblog_child_fds(struct inst *in, int fds[2], char **cause)
{
	const struct job_spec *spec = in->job->spec;
	enum conf_output mode[2] = { spec->out, spec->err };
	int i, pipefd = -1;

	fds[0] = fds[1] = -1;
	for (i = 0; i < 2; i++) {
		if (mode[i] != CONF_OUTPUT_JOURNAL)
			continue;
		if ((fds[i] = joblog_journal_fd(in, i + 1)) == -1)
			mode[i] = CONF_OUTPUT_FILE;
	}
	for (i = 0; i < 2; i++) {
		switch (mode[i]) {
		case CONF_OUTPUT_FILE:
			if (pipefd == -1 &&
			    (pipefd = joblog_pipe_new(in, cause)) == -1)
				goto fail;
			fds[i] = pipefd;
			break;
		case CONF_OUTPUT_NULL:
			fds[i] = open("/dev/null", O_WRONLY | O_CLOEXEC);
			if (fds[i] == -1) {
				xasprintf(cause, "open /dev/null: %s",
				    strerror(errno));
				goto fail;
			}
			break;
		default:
			break;
		}
	}
	return (0);
fail:
	joblog_child_fds_close(fds);
	return (-1);
}

/* Close what joblog_child_fds opened, once the child has its copies. */
void
joblog_child_fds_close(int fds[2])
{
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0 && fds[1] != fds[0])
		close(fds[1]);
	fds[0] = fds[1] = -1;
}

/*
 * The run is over: write what is already in its pipe, so the exit marker
 * comes after the run's last lines.  The pipe stays open for any process
 * of the run that still holds it.
 */
void
joblog_inst_drain(struct inst *in)
{
	struct outpipe *op = in->run.out;
	size_t total = 0;
	int r = 0;

	if (op == NULL)
		return;
	while (total < OUTPUT_DRAIN_MAX && (r = joblog_pipe_read(op)) == 1)
		total += OUTPUT_READ;
	if (r == -1)
		joblog_pipe_free(op);
}

/*
 * Copy the last bytes the instance's current run wrote to its log file
 * (queue runs only) to buf; return their number.
 */
size_t
joblog_inst_tail(const struct inst *in, char *buf, size_t cap)
{
	const char *tail = in->q.tail;
	size_t len = in->q.tail_len, n;

	if (in->run.out != NULL) {
		tail = in->run.out->tail;
		len = in->run.out->tail_len;
	}
	if (tail == NULL)
		return (0);
	n = len < cap ? len : cap;
	memcpy(buf, tail + len - n, n);
	return (n);
}

/* Forget the instance's run in its pipe (a new run, or the end). */
void
joblog_inst_release(struct inst *in)
{
	if (in->run.out != NULL)
		in->run.out->inst = NULL;
	in->run.out = NULL;
	free(in->q.tail);
	in->q.tail = NULL;
	in->q.tail_len = 0;
}

/* Does any of the job's output go to its log file? */
static int
joblog_job_captured(const struct job *j)
{
	const struct job_spec *spec = j->spec;

	return (spec->out == CONF_OUTPUT_FILE ||
	    spec->err == CONF_OUTPUT_FILE || j->log->journal_failed);
}

/* Write a line of vigil's own into the instance's log file. */
void
joblog_mark(struct inst *in, const char *fmt, ...)
{
	struct logfile *lf = in->job->log;
	char text[512];
	va_list ap;

	if (lf == NULL || !joblog_job_captured(in->job))
		return;
	va_start(ap, fmt);
	/* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
	(void)vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	output_marker(
	    lf->sink, in->job->ninsts > 1 ? in->label : NULL, "%s", text);
}

/* Close every log file, so the next line opens it again (SIGUSR2). */
size_t
joblog_reopen_all(void)
{
	struct logfile *lf;
	size_t n = 0;

	RB_FOREACH(lf, logfile_tree, &joblog_logs) {
		output_sink_reopen(lf->sink);
		n++;
	}
	log_info("log files reopened");
	return (n);
}

/* Return the job's log file path, or NULL if its output is not there. */
const char *
joblog_job_path(const struct job *j, const char **why)
{
	const struct job_spec *spec = j->spec;

	*why = NULL;
	if (joblog_job_captured(j))
		return (output_sink_path(j->log->sink));
	if (spec->out == CONF_OUTPUT_JOURNAL ||
	    spec->err == CONF_OUTPUT_JOURNAL)
		*why = "journal";
	else
		*why = "none";
	return (NULL);
}

/*
 * The last n lines of the job's log file (and of NAME.log.1), at most max
 * bytes, in *out (allocated, *outlen bytes): see output_sink_tail.
 */
int
joblog_job_tail(const struct job *j, size_t n, size_t max, char **out,
    size_t *outlen, char **cause)
{
	return (output_sink_tail(j->log->sink, n, max, out, outlen, cause));
}

/* Send the client every line written to the job's log from now on. */
void
joblog_follow(struct job *j, struct client *c)
{
	struct follower *f;

	f = xcalloc(1, sizeof(*f));
	f->client = c;
	f->log = j->log;
	TAILQ_INSERT_TAIL(&j->log->followers, f, entry);
	joblog_nfollowers++;
	/* A client that goes away stops the follow. */
	server_client_park(c, joblog_client_gone, NULL);
}

/* The client is gone: stop following for it. */
void
joblog_client_gone(struct client *c)
{
	struct logfile *lf;
	struct follower *f, *tmp;

	if (joblog_nfollowers == 0)
		return;
	RB_FOREACH(lf, logfile_tree, &joblog_logs) {
		TAILQ_FOREACH_SAFE(f, &lf->followers, entry, tmp) {
			if (f->client != c)
				continue;
			TAILQ_REMOVE(&lf->followers, f, entry);
			joblog_nfollowers--;
			free(f);
		}
	}
}

/* At exit: write out what the pipes still hold and close them. */
void
joblog_free_all(void)
{
	struct outpipe *op;
	size_t total;

	while ((op = LIST_FIRST(&joblog_pipes)) != NULL) {
		for (total = 0; total < OUTPUT_DRAIN_MAX;
		     total += OUTPUT_READ) {
			if (joblog_pipe_read(op) != 1)
				break;
		}
		joblog_pipe_free(op);
	}
}
