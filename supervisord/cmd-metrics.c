/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * metrics: every job's figures in the OpenMetrics text format (lib/
 * metrics.c), for Prometheus through node_exporter's textfile collector
 * today and the HTTP endpoint later.  States and uptimes are read from
 * the instances; the counters from counters.c, which keeps them across
 * reloads so that they never go down while vigild runs; queue depths from
 * the state backend; CPU, memory and tasks from each run's cgroup where
 * it has one (else from its processes).
 */

#include "config.h"

#include <sys/types.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "cmd.h"
#include "effects.h"
#include "jobs.h"
#include "json.h"
#include "metrics.h"
#include "monotime.h"
#include "queue.h"
#include "state.h"
#include "vigild.h"
#include "xmalloc.h"

static enum cmd_retval cmd_metrics_exec(struct cmd_ctx *);

const struct cmd_entry cmd_metrics_entry = {
	.name = "metrics",
	.usage = "",
	.optstring = "",
	.min_args = 0,
	.max_args = 0,
	.flags = CMD_READONLY,
	.help = "print every job's figures in the OpenMetrics text format",
	.exec = cmd_metrics_exec,
};

static void
cmd_metrics_write(void *arg, const char *p, size_t n)
{
	proto_buf_add(arg, p, n);
}

/* The labels job and instance of in, in buf (for the NULL-terminated v). */
static const char *const *
cmd_metrics_labels(const struct inst *in, char *buf, size_t len, const char **v,
    const char *k3, const char *v3)
{
	snprintf(buf, len, "%d", in->index);
	v[0] = "job";
	v[1] = in->job->name;
	v[2] = "instance";
	v[3] = buf;
	v[4] = k3;
	v[5] = v3;
	v[6] = NULL;
	return (v);
}

static void
cmd_metrics_states(struct metrics *m)
{
	const char *v[7];
	char idx[16];
	struct job *j;
	int i, s;

	metrics_family(m, "vigil_job_state", "gauge", NULL,
	    "The state of each job instance: 1 for the one it is in, 0 for "
	    "the others.");
	RB_FOREACH(j, job_tree, &vigild.jobs) {
		for (i = 0; i < j->ninsts; i++) {
			for (s = 0; s < JOB_STATE_COUNT; s++)
				metrics_sample(m, "",
				    cmd_metrics_labels(j->insts[i], idx,
				        sizeof(idx), v, "state",
				        job_state_name((enum job_state)s)),
				    j->insts[i]->state == (enum job_state)s);
		}
	}
}

/* The figures of each instance: one family at a time, as the format wants. */
static void
cmd_metrics_insts(struct metrics *m)
{
	const char *v[7];
	char idx[16];
	struct job *j;
	uint64_t now = monotime_now();
	int i;

	metrics_family(m, "vigil_job_restarts", "counter", NULL,
	    "Restarts of each job instance since vigild started.");
	RB_FOREACH(j, job_tree, &vigild.jobs) {
		for (i = 0; i < j->ninsts; i++)
			metrics_sample_u64(m, "_total",
			    cmd_metrics_labels(
			        j->insts[i], idx, sizeof(idx), v, NULL, NULL),
			    counters_restarts(j->insts[i]));
	}
	metrics_family(m, "vigil_job_uptime_seconds", "gauge", "seconds",
	    "How long the run of each job instance has been going; 0 when "
	    "none runs.");
	RB_FOREACH(j, job_tree, &vigild.jobs) {
		for (i = 0; i < j->ninsts; i++) {
			const struct inst *in = j->insts[i];

			metrics_sample(m, "",
			    cmd_metrics_labels(
			        in, idx, sizeof(idx), v, NULL, NULL),
			    in->run.pid > 0 && now > in->run.started ?
			        (double)(now - in->run.started) / 1e6 :
			        0);
		}
	}
}

/* What only periodic jobs have. */
static void
cmd_metrics_periodic(struct metrics *m)
{
	const char *v[7];
	char idx[16];
	struct job *j;
	int i;

	metrics_family(m, "vigil_periodic_skipped", "counter", NULL,
	    "Slots of periodic jobs skipped because the last run was still "
	    "going.");
	RB_FOREACH(j, job_tree, &vigild.jobs) {
		if (j->spec->kind != CONF_KIND_PERIODIC)
			continue;
		for (i = 0; i < j->ninsts; i++)
			metrics_sample_u64(m, "_total",
			    cmd_metrics_labels(
			        j->insts[i], idx, sizeof(idx), v, NULL, NULL),
			    counters_skipped(j->insts[i]));
	}
	metrics_family(m, "vigil_periodic_next_run_timestamp_seconds", "gauge",
	    "seconds",
	    "When the next slot of each periodic job comes (Unix "
	    "time).");
	RB_FOREACH(j, job_tree, &vigild.jobs) {
		for (i = 0; i < j->ninsts; i++) {
			if (j->insts[i]->per.src == NULL)
				continue;
			metrics_sample(m, "",
			    cmd_metrics_labels(
			        j->insts[i], idx, sizeof(idx), v, NULL, NULL),
			    (double)j->insts[i]->per.wall / 1e6);
		}
	}
}

/* Runs and messages by outcome, per job. */
static void
cmd_metrics_outcomes(struct metrics *m)
{
	static const char *const runs[COUNT_RUN_N] = { "success", "failure",
		"stopped" };
	static const char *const msgs[COUNT_MSG_N] = { "done", "retry",
		"dead" };
	const struct counters *c;
	const char *v[5] = { "job", NULL, "outcome", NULL, NULL };
	struct job *j;
	int k;

	metrics_family(m, "vigil_job_runs", "counter", NULL,
	    "Runs of each job that ended, by outcome: success (an exit code "
	    "of success_exit_codes), failure, or stopped on purpose.");
	RB_FOREACH(j, job_tree, &vigild.jobs) {
		c = counters_of(j->name);
		v[1] = j->name;
		for (k = 0; k < COUNT_RUN_N; k++) {
			v[3] = runs[k];
			metrics_sample_u64(
			    m, "_total", v, c != NULL ? c->runs[k] : 0);
		}
	}
	metrics_family(m, "vigil_queue_processed", "counter", NULL,
	    "Messages of each queue job settled, by outcome: done, retry "
	    "(failed, tried again later) or dead.");
	RB_FOREACH(j, job_tree, &vigild.jobs) {
		if (j->spec->kind != CONF_KIND_QUEUE)
			continue;
		c = counters_of(j->name);
		v[1] = j->name;
		for (k = 0; k < COUNT_MSG_N; k++) {
			v[3] = msgs[k];
			metrics_sample_u64(
			    m, "_total", v, c != NULL ? c->msgs[k] : 0);
		}
	}
}

/*
 * The messages waiting in each queue; nothing if state.db is not open.
 * Not cluster queues: their counts are PostgreSQL's, for vigilctl queue
 * (a scrape never waits for the database).
 */
static void
cmd_metrics_queues(struct metrics *m)
{
	struct queue_counts qc;
	struct queue *q = state_queue();
	const char *v[5] = { "job", NULL, "state", NULL, NULL };
	int64_t now = store_now();
	char *cause = NULL;
	struct job *j;

	metrics_family(m, "vigil_queue_messages", "gauge", NULL,
	    "Messages in each queue, by state.");
	RB_FOREACH(j, job_tree, &vigild.jobs) {
		if (j->spec->kind != CONF_KIND_QUEUE || q == NULL ||
		    j->spec->cluster)
			continue;
		if (queue_counts(q, j->name, now, &qc, &cause) == -1) {
			free(cause);
			cause = NULL;
			continue;
		}
		v[1] = j->name;
		v[3] = "available";
		metrics_sample_u64(m, "", v, qc.available);
		v[3] = "delayed";
		metrics_sample_u64(m, "", v, qc.delayed);
		v[3] = "running";
		metrics_sample_u64(m, "", v, qc.running);
		v[3] = "dead";
		metrics_sample_u64(m, "", v, qc.dead);
	}
}

/* One instance's usage, read once for the three families. */
struct cmd_metrics_usage {
	const struct inst *in;
	struct cgroup_usage u;
};

/* CPU, memory and tasks of each current run (its cgroup, or processes). */
static void
cmd_metrics_usage(struct metrics *m)
{
	static const char *const names[3][4] = {
		{ "vigil_job_cpu_seconds", "counter", "seconds",
		    "CPU time of the current run of each job instance." },
		{ "vigil_job_memory_bytes", "gauge", "bytes",
		    "Memory of the current run of each job instance." },
		{ "vigil_job_tasks", "gauge", NULL,
		    "Tasks of the current run of each job instance." },
	};
	struct cmd_metrics_usage *v;
	const char *l[7];
	char idx[16];
	struct job *j;
	size_t n = 0, k;
	int i, f;

	v = xreallocarray(NULL, vigild.nactive + 1, sizeof(*v));
	RB_FOREACH(j, job_tree, &vigild.jobs) {
		for (i = 0; i < j->ninsts && n <= vigild.nactive; i++) {
			if (j->insts[i]->run.pid <= 0 ||
			    track_usage(j->insts[i], &v[n].u) == -1)
				continue;
			v[n++].in = j->insts[i];
		}
	}
	for (f = 0; f < 3; f++) {
		metrics_family(
		    m, names[f][0], names[f][1], names[f][2], names[f][3]);
		for (k = 0; k < n; k++) {
			cmd_metrics_labels(
			    v[k].in, idx, sizeof(idx), l, NULL, NULL);
			if (f == 0)
				metrics_sample(m, "_total", l,
				    (double)v[k].u.cpu_usec / 1e6);
			else
				metrics_sample_u64(m, "", l,
				    f == 1 ? v[k].u.memory_bytes :
				             v[k].u.tasks);
		}
	}
	free(v);
}

/* Whether each cgroup limit set is enforced (the controller is there). */
static void
cmd_metrics_limits(struct metrics *m)
{
	const char *v[5] = { "job", NULL, "limit", NULL, NULL };
	char buf[64];
	unsigned int mask, b, set;
	struct job *j;

	metrics_family(m, "vigil_job_limit_enforced", "gauge", NULL,
	    "1 for each cgroup limit of a job that is enforced, 0 for one "
	    "whose controller is not there.");
	RB_FOREACH(j, job_tree, &vigild.jobs) {
		set = track_limits_set(j->spec);
		if (set == 0)
			continue;
		mask = track_limits_missing(j->spec, buf, sizeof(buf));
		v[1] = j->name;
		for (b = 0; track_limit_name(b) != NULL; b++) {
			if (!(set & (1U << b)))
				continue;
			v[3] = track_limit_name(b);
			metrics_sample_u64(m, "", v, !(mask & (1U << b)));
		}
	}
}

/* What happened to state.db (state-watch.c). */
static void
cmd_metrics_state_db(struct metrics *m)
{
	const struct state_health *h = state_watch_health();

	metrics_family(m, "vigil_state_db_lost", "counter", NULL,
	    "Times vigild found state.db (or its -wal or -shm) deleted, "
	    "replaced or corrupt.");
	metrics_sample_u64(m, "_total", NULL, h->lost);
	metrics_family(m, "vigil_state_db_restored", "counter", NULL,
	    "Times vigild put state.db back at its path from its open "
	    "database.");
	metrics_sample_u64(m, "_total", NULL, h->restored);
	metrics_family(m, "vigil_state_db_ok", "gauge", NULL,
	    "1 when state.db at its path is the database vigild writes, 0 "
	    "while putting it back fails.");
	metrics_sample_u64(m, "", NULL, h->failing == NULL);
}

static enum cmd_retval
cmd_metrics_exec(struct cmd_ctx *ctx)
{
	static const char *const build[] = { "version", PACKAGE_VERSION, NULL };
	struct metrics m;

	metrics_init(&m, cmd_metrics_write, &ctx->out);
	metrics_family(&m, "vigil_build", "info", NULL, "The build of vigild.");
	metrics_sample(&m, "_info", build, 1);
	cmd_metrics_states(&m);
	cmd_metrics_insts(&m);
	cmd_metrics_outcomes(&m);
	cmd_metrics_periodic(&m);
	cmd_metrics_queues(&m);
	cmd_metrics_usage(&m);
	cmd_metrics_limits(&m);
	cmd_metrics_state_db(&m);
	metrics_end(&m);
	return (CMD_OK);
}
