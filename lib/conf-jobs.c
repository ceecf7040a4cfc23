/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * A jobs directory as a struct conf_jobs: every job file of jobs.d
 * loaded (job-spec.c), sorted by name, then the graph of their depends
 * checked: a job that depends on a job not loaded is dropped, and so is
 * every job on a dependency cycle, each with an error at its depends line.
 */

#include "config.h"

#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "conf-int.h"
#include "log.h"
#include "words.h"
#include "xmalloc.h"

static int
conf_cmp_str(const void *a, const void *b)
{
	return (strcmp(*(char *const *)a, *(char *const *)b));
}

static int
conf_cmp_spec(const void *key, const void *elem)
{
	return (strcmp(key, (*(struct job_spec *const *)elem)->name));
}

/*
 * List the job names in dir (file names without ".conf"), sorted, as an
 * owned NULL-terminated array.  NULL with an error added if dir cannot be
 * read.
 */
static char **
conf_jobs_scan(const char *dir, size_t *np, struct conf_errors *errs)
{
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;

	if ((d = opendir(dir)) == NULL) {
		conf_errors_add(errs, "%s: %s", dir, strerror(errno));
		return (NULL);
	}
	names = xcalloc(1, sizeof *names);
	while ((de = readdir(d)) != NULL) {
		if (!conf_file_is_job(de->d_name))
			continue;
		names = xreallocarray(names, n + 2, sizeof *names);
		names[n++] = xstrndup(de->d_name, strlen(de->d_name) - 5);
		names[n] = NULL;
	}
	closedir(d);
	qsort(names, n, sizeof *names, conf_cmp_str);
	*np = n;
	return (names);
}

/* Drop jobs->specs[i] (and lines[i]) with an error about its depends. */
static void __attribute__((format(printf, 5, 6)))
conf_jobs_reject(struct conf_jobs *jobs, int *lines, size_t i,
    struct conf_errors *errs, const char *fmt, ...)
{
	struct job_spec *spec = jobs->specs[i];
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	(void)xvasprintf(&msg, fmt, ap);
	va_end(ap);
	if (lines[i] > 0)
		conf_errors_add(
		    errs, "%s:%d: depends: %s", spec->path, lines[i], msg);
	else
		conf_errors_add(errs, "%s: depends: %s", spec->path, msg);
	free(msg);
	job_spec_free(spec);
	jobs->n--;
	memmove(&jobs->specs[i], &jobs->specs[i + 1],
	    (jobs->n - i) * sizeof *jobs->specs);
	memmove(&lines[i], &lines[i + 1], (jobs->n - i) * sizeof *lines);
}

/*
 * Drop jobs that depend on a job that is not loaded, until none is left:
 * a job whose dependency was dropped is dropped too.  names are all the
 * job files found, to tell a missing job from a broken one.
 */
static void
conf_jobs_check_missing(struct conf_jobs *jobs, int *lines, char *const *names,
    size_t nnames, struct conf_errors *errs)
{
	struct job_spec *spec;
	const char *dep;
	size_t i, j;
	int changed;

	do {
		changed = 0;
		for (i = 0; i < jobs->n; i++) {
			spec = jobs->specs[i];
			for (j = 0; j < spec->ndepends; j++) {
				dep = spec->depends[j];
				if (conf_jobs_find(jobs, dep) == NULL)
					break;
			}
			if (j == spec->ndepends)
				continue;
			if (bsearch(&dep, names, nnames, sizeof *names,
			        conf_cmp_str) != NULL)
				conf_jobs_reject(jobs, lines, i, errs,
				    "job \"%s\" is not loaded", dep);
			else
				conf_jobs_reject(jobs, lines, i, errs,
				    "no such job \"%s\"", dep);
			i--;
			changed = 1;
		}
	} while (changed);
}

/* Depth-first search of the dependency graph for cycles. */
struct conf_dfs {
	struct conf_jobs *jobs;
	uint8_t *color; /* 0: not seen, 1: on the path, 2: done */
	size_t *path;
	size_t depth;
	char **cycle; /* for each job on a cycle: "a -> b -> a" */
};

/* Record the cycle made by the path from job k to its end, then k. */
static void
conf_jobs_cycle(struct conf_dfs *dfs, size_t k)
{
	size_t s, i, len = 1;
	char *text;

	for (s = 0; dfs->path[s] != k; s++)
		;
	for (i = s; i < dfs->depth; i++)
		len += strlen(dfs->jobs->specs[dfs->path[i]]->name) + 4;
	len += strlen(dfs->jobs->specs[k]->name);
	text = xcalloc(1, len);
	for (i = s; i < dfs->depth; i++) {
		strcat(text, dfs->jobs->specs[dfs->path[i]]->name);
		strcat(text, " -> ");
	}
	strcat(text, dfs->jobs->specs[k]->name);
	for (i = s; i < dfs->depth; i++) {
		if (dfs->cycle[dfs->path[i]] == NULL)
			dfs->cycle[dfs->path[i]] = xstrdup(text);
	}
	free(text);
}

/* Visit job i and everything it depends on. */
static void
conf_jobs_visit(struct conf_dfs *dfs, size_t i)
{
	struct job_spec *spec = dfs->jobs->specs[i], **dep;
	size_t j, k;

	dfs->color[i] = 1;
	dfs->path[dfs->depth++] = i;
	for (j = 0; j < spec->ndepends; j++) {
		dep = bsearch(spec->depends[j], dfs->jobs->specs, dfs->jobs->n,
		    sizeof *dfs->jobs->specs, conf_cmp_spec);
		if (dep == NULL)
			continue;
		k = (size_t)(dep - dfs->jobs->specs);
		if (dfs->color[k] == 0)
			conf_jobs_visit(dfs, k);
		else if (dfs->color[k] == 1)
			conf_jobs_cycle(dfs, k);
	}
	dfs->depth--;
	dfs->color[i] = 2;
}

/* Drop the jobs on a dependency cycle; returns 1 if any was dropped. */
static int
conf_jobs_check_cycles(
    struct conf_jobs *jobs, int *lines, struct conf_errors *errs)
{
	struct conf_dfs dfs;
	size_t i;
	int dropped = 0;

	memset(&dfs, 0, sizeof dfs);
	dfs.jobs = jobs;
	dfs.color = xcalloc(jobs->n + 1, sizeof *dfs.color);
	dfs.path = xcalloc(jobs->n + 1, sizeof *dfs.path);
	dfs.cycle = xcalloc(jobs->n + 1, sizeof *dfs.cycle);
	for (i = 0; i < jobs->n; i++) {
		if (dfs.color[i] == 0)
			conf_jobs_visit(&dfs, i);
	}
	/* From the end, so that dropping a job moves none still to see. */
	for (i = jobs->n; i-- > 0;) {
		if (dfs.cycle[i] == NULL)
			continue;
		conf_jobs_reject(
		    jobs, lines, i, errs, "dependency cycle: %s", dfs.cycle[i]);
		free(dfs.cycle[i]);
		dropped = 1;
	}
	free(dfs.color);
	free(dfs.path);
	free(dfs.cycle);
	return (dropped);
}

/*
 * Load every job file of dir (see conf_file_is_job) into *jobs, which is
 * initialised here and must later be released with conf_jobs_clear.  Jobs
 * are sorted by name.  A file with errors is skipped, and so is a job that
 * depends on a job not loaded or is on a dependency cycle; each error is
 * appended to errs (if not NULL).  Returns 0, or -1 if dir cannot be read
 * (with an error appended and *jobs empty).
 */
int
conf_jobs_load(
    const char *dir, struct conf_jobs *jobs, struct conf_errors *errs)
{
	struct conf_errors discard;
	struct job_spec *spec;
	char **names, *path;
	const char *slash;
	size_t n, i;
	int *lines;

	jobs->specs = NULL;
	jobs->n = 0;
	conf_errors_init(&discard);
	if (errs == NULL)
		errs = &discard;
	if ((names = conf_jobs_scan(dir, &n, errs)) == NULL) {
		conf_errors_clear(&discard);
		return (-1);
	}
	slash = (*dir != '\0' && dir[strlen(dir) - 1] == '/') ? "" : "/";
	jobs->specs = xcalloc(n + 1, sizeof *jobs->specs);
	lines = xcalloc(n + 1, sizeof *lines);
	for (i = 0; i < n; i++) {
		xasprintf(&path, "%s%s%s.conf", dir, slash, names[i]);
		spec =
		    job_spec_load_line(path, names[i], errs, &lines[jobs->n]);
		if (spec != NULL)
			jobs->specs[jobs->n++] = spec;
		free(path);
	}
	conf_jobs_check_missing(jobs, lines, names, n, errs);
	if (conf_jobs_check_cycles(jobs, lines, errs))
		conf_jobs_check_missing(jobs, lines, names, n, errs);
	free(lines);
	words_free(names);
	conf_errors_clear(&discard);
	return (0);
}

/* Free every spec of jobs and leave it empty; NULL is a no-op. */
void
conf_jobs_clear(struct conf_jobs *jobs)
{
	size_t i;

	if (jobs == NULL)
		return;
	for (i = 0; i < jobs->n; i++)
		job_spec_free(jobs->specs[i]);
	free(jobs->specs);
	jobs->specs = NULL;
	jobs->n = 0;
}

/* The spec of job name in jobs (borrowed), or NULL. */
struct job_spec *
conf_jobs_find(const struct conf_jobs *jobs, const char *name)
{
	struct job_spec **found;

	if (jobs == NULL || jobs->n == 0 || name == NULL)
		return (NULL);
	found = bsearch(
	    name, jobs->specs, jobs->n, sizeof *jobs->specs, conf_cmp_spec);
	return (found != NULL ? *found : NULL);
}
