/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Reload: read jobs.d again and apply the difference.  Everything is
 * parsed and validated first; any error leaves every job as it was.  Then,
 * by name: new jobs are added (and started if autostart), removed jobs are
 * stopped and dropped, jobs whose spec changed are stopped and started
 * again with the new spec (a service whose `instances` alone changed, two
 * or more before and after, gets only the difference: registry_resize),
 * and the others are not touched at all.
 *
 * The job files that did not load are remembered (vigild.broken) for
 * status, after a reload with errors too: such a reload changes no job,
 * and a job whose file broke runs on with its previous config.
 */

#include "config.h"

#include <sys/types.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-daemon.h>

#include "cluster.h"
#include "daemon.h"
#include "effects.h"
#include "jobs-view.h"
#include "log.h"
#include "monotime.h"
#include "vigild.h"
#include "xmalloc.h"

static void
reload_list_add(struct reload_list *l, const char *name)
{
	l->names = xreallocarray(l->names, l->n + 1, sizeof(*l->names));
	l->names[l->n++] = xstrdup(name);
}

static void
reload_list_clear(struct reload_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	memset(l, 0, sizeof(*l));
}

/* Free what a reload report holds. */
void
reload_report_clear(struct reload_report *r)
{
	reload_list_clear(&r->added);
	reload_list_clear(&r->changed);
	reload_list_clear(&r->removed);
	conf_errors_clear(&r->errors);
	r->unchanged = 0;
}

/* Sort the loaded specs into added, changed and unchanged. */
static void
reload_diff(struct conf_jobs *jobs, struct reload_report *r)
{
	struct job *j;
	size_t i;

	for (i = 0; i < jobs->n; i++) {
		j = job_find(jobs->specs[i]->name);
		if (j == NULL)
			reload_list_add(&r->added, jobs->specs[i]->name);
		else if (job_retiring(j) ||
		    !job_spec_equal(job_spec_next(j), jobs->specs[i]))
			reload_list_add(&r->changed, jobs->specs[i]->name);
		else
			r->unchanged++;
	}
	RB_FOREACH(j, job_tree, &vigild.jobs) {
		if (!job_retiring(j) &&
		    conf_jobs_find(jobs, job_name(j)) == NULL)
			reload_list_add(&r->removed, job_name(j));
	}
}

/* Apply a diff; the specs move from jobs to the supervisor. */
static void
reload_apply(struct conf_jobs *jobs, const struct reload_report *r)
{
	struct job_spec *spec;
	struct job *j;
	size_t i;

	for (i = 0; i < r->removed.n; i++) {
		if ((j = job_find(r->removed.names[i])) != NULL)
			registry_replace(j, NULL);
	}
	for (i = 0; i < jobs->n; i++) {
		spec = jobs->specs[i];
		j = job_find(spec->name);
		if (j == NULL) {
			jobs->specs[i] = NULL;
			registry_add(spec);
			registry_autostart(job_find(spec->name));
		} else if (job_retiring(j) ||
		    !job_spec_equal(job_spec_next(j), spec)) {
			jobs->specs[i] = NULL;
			if (!registry_resize(j, spec))
				registry_replace(j, spec);
		}
	}
}

static int
reload_broken_cmp(const void *a, const void *b)
{
	return (strcmp(((const struct broken_job *)a)->name,
	    ((const struct broken_job *)b)->name));
}

/* The job named by an error "DIR/NAME.conf:...", or NULL (owned). */
static char *
reload_broken_name(const char *dir, const char *msg)
{
	size_t len = strlen(dir);
	const char *p, *end;

	if (strncmp(msg, dir, len) != 0)
		return (NULL);
	p = msg + len;
	while (*p == '/')
		p++;
	if ((end = strstr(p, ".conf:")) == NULL || end == p ||
	    memchr(p, '/', (size_t)(end - p)) != NULL)
		return (NULL);
	return (xstrndup(p, (size_t)(end - p)));
}

/*
 * Remember the job files of dir that errs rejected, each with its first
 * error, for status (state BROKEN); forget those of before.  An error that
 * names no job file of dir is not kept.  dir NULL just forgets them all.
 */
void
reload_broken_set(const char *dir, const struct conf_errors *errs)
{
	struct broken_job *b;
	char *name;
	size_t i;

	for (i = 0; i < vigild.nbroken; i++) {
		free(vigild.broken[i].name);
		free(vigild.broken[i].reason);
	}
	free(vigild.broken);
	vigild.broken = NULL;
	vigild.nbroken = 0;
	for (i = 0; dir != NULL && i < errs->n; i++) {
		if ((name = reload_broken_name(dir, errs->msgs[i])) == NULL)
			continue;
		if (reload_broken_find(name) != NULL) {
			free(name);
			continue;
		}
		vigild.broken = xreallocarray(
		    vigild.broken, vigild.nbroken + 1, sizeof(*vigild.broken));
		b = &vigild.broken[vigild.nbroken++];
		b->name = name;
		b->reason = xstrdup(errs->msgs[i]);
		qsort(vigild.broken, vigild.nbroken, sizeof(*vigild.broken),
		    reload_broken_cmp);
	}
}

/* The broken job file of that name (borrowed), or NULL. */
const struct broken_job *
reload_broken_find(const char *name)
{
	struct broken_job key = { (char *)name, NULL };

	if (vigild.nbroken == 0)
		return (NULL);
	return (bsearch(&key, vigild.broken, vigild.nbroken,
	    sizeof(*vigild.broken), reload_broken_cmp));
}

/*
 * Read jobs.d again and, unless dry_run, apply the difference.  Fill *r
 * (initialised here; the caller clears it).  Return 0, or -1 when the
 * configuration has errors (in r->errors) and nothing was changed.
 */
int
reload_run(int dry_run, struct reload_report *r)
{
	struct conf_jobs jobs;
	int loaded;

	memset(r, 0, sizeof(*r));
	conf_errors_init(&r->errors);
	if (vigild.shutting_down) {
		conf_errors_add(&r->errors, "vigild is shutting down");
		return (-1);
	}
	/*
	 * RELOADING=1 goes out before anything else: systemd waits for the
	 * reload only if this arrives before the ExecReload process ends.
	 */
	if (!dry_run)
		(void)sd_notifyf(
		    0, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64, monotime_now());
	loaded = conf_jobs_load(vigild.jobs_dir, &jobs, &r->errors);
	if (loaded != -1) {
		cluster_jobs_check(&jobs, &r->errors);
		track_jobs_check(&jobs, &r->errors, 0, NULL);
	}
	if (loaded == -1 || r->errors.n > 0) {
		conf_jobs_clear(&jobs);
		/* The jobs stay as they were; status shows the broken files. */
		if (!dry_run)
			reload_broken_set(vigild.jobs_dir, &r->errors);
		log_warnx("reload: %zu error%s, nothing changed", r->errors.n,
		    r->errors.n == 1 ? "" : "s");
		if (!dry_run)
			(void)sd_notify(0, "READY=1");
		return (-1);
	}
	reload_diff(&jobs, r);
	if (!dry_run) {
		reload_broken_set(NULL, NULL);
		reload_apply(&jobs, r);
		cluster_jobs_changed();
		log_info("reload: %zu added, %zu changed, %zu removed, %zu "
		         "unchanged",
		    r->added.n, r->changed.n, r->removed.n, r->unchanged);
		(void)sd_notify(0, "READY=1");
	}
	conf_jobs_clear(&jobs);
	return (0);
}
