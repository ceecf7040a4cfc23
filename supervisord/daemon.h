/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The daemon's frame: the registry of jobs, reloads of jobs.d (and the
 * job files that did not load), systemd's notifications, signals.
 */

#ifndef VIGILD_DAEMON_H
#define VIGILD_DAEMON_H

#include <stddef.h>

#include "conf.h"
#include "job.h"

struct inst;
struct job;

/* registry.c */
void registry_add(struct job_spec *);
void registry_autostart(struct job *);
void registry_replace(struct job *, struct job_spec *);
int registry_resize(struct job *, struct job_spec *);
extern const struct inst_observer registry_observer;
void registry_start_all(void);
void registry_shutdown(void);
void registry_free_all(void);

/* sdnotify.c */
void sdnotify_init(void);
void sdnotify_free(void);
extern const struct inst_observer sdnotify_observer;
void sdnotify_ready(void);
void sdnotify_extend_timeout(void);
void sdnotify_stopping(void);

/* signals.c */
void signals_init(void);
void signals_free(void);

/* reload.c */
/*
 * A job file that did not load (status shows it as BROKEN).  If a job of
 * that name runs, it runs the config of before the file broke.
 */
struct broken_job {
	char *name;
	char *reason; /* "FILE:LINE: message": the file's first error */
};

struct reload_list {
	char **names;
	size_t n;
};

struct reload_report {
	struct reload_list added;
	struct reload_list changed;
	struct reload_list removed;
	size_t unchanged;
	struct conf_errors errors;
};

int reload_run(int, struct reload_report *);
void reload_report_clear(struct reload_report *);
void reload_broken_set(const char *, const struct conf_errors *);
const struct broken_job *reload_broken_find(const char *);

#endif
