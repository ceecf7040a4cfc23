/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * vigilctl import supervisord: read supervisord config files (ini.c),
 * translate them (svimport.c), have every job file checked by the same
 * code vigild loads them with, and write them into the jobs dir, or print
 * them with --dry-run.  The files are made in a hidden staging directory
 * inside the jobs dir and renamed into place, so vigild never sees half a
 * file.  A job that vigil refuses is reported and left out, and the
 * translation is made again without it (others may depend on it).
 * Works without vigild; never talks to it.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "conf.h"
#include "ini.h"
#include "svimport.h"
#include "vigilctl.h"
#include "xmalloc.h"

extern char **environ;

/* One input file and its translation. */
struct imp_file {
	const char *path;
	struct ini ini;
	struct svimport_out out;
	char **skip; /* programs vigil refused */
	size_t nskip;
	char **refused; /* their reports */
	size_t nrefused;
};

struct imp {
	const char *jobs_dir;
	char *jobs_dir_owned;
	int dry_run;
	int force;
	char staging[PATH_MAX];
	struct imp_file *files;
	size_t nfiles;
	struct utsname uts;
	int reported;
};

static void __attribute__((noreturn)) imp_usage(void)
{
	fprintf(stderr,
	    "usage: vigilctl import supervisord [--jobs-dir DIR] "
	    "[--dry-run] [--force] FILE...\n");
	exit(2);
}

/* The jobs dir of vigil.conf (CONFIG, or the default file). */
static char *
imp_jobs_dir(const char *config)
{
	struct conf_errors errs;
	struct conf *conf;
	char *def = NULL, *dir;
	size_t i;

	conf_errors_init(&errs);
	if (config == NULL)
		def = conf_default_path();
	conf = conf_load(config != NULL ? config : def, config != NULL, &errs);
	free(def);
	if (conf == NULL) {
		for (i = 0; i < errs.n; i++)
			fprintf(stderr, "vigilctl: %s\n", errs.msgs[i]);
		exit(EX_CONFIG);
	}
	conf_errors_clear(&errs);
	dir = xstrdup(conf->jobs_dir);
	conf_free(conf);
	return (dir);
}

/* Translate file F again, leaving out the programs vigil refused. */
static void
imp_translate(struct imp *imp, struct imp_file *f)
{
	struct svimport_in in;

	svimport_out_clear(&f->out);
	in.host = imp->uts.nodename;
	in.environ = environ;
	in.skip = f->skip;
	svimport_translate(&f->ini, &in, &f->out);
}

/*
 * The mode and group for the job file of a program of source: at most
 * 0644, and never more open than source (a 0600 file of secrets makes a
 * 0600 job file).  0644 and no group if source cannot be read.
 */
static mode_t
imp_mode(const char *source, gid_t *gid)
{
	struct stat st;

	*gid = (gid_t)-1;
	if (stat(source, &st) == -1)
		return (0644);
	if (st.st_mode & 0070)
		*gid = st.st_gid;
	return (st.st_mode & 0644);
}

/*
 * Give the new file fd the group gid (unless -1) when group bits are
 * left, or take those bits away if it cannot be; 0 or -1 with errno.
 */
static int
imp_regroup(int fd, mode_t mode, gid_t gid)
{
	struct stat st;

	if (gid == (gid_t)-1 || fstat(fd, &st) == -1 ||
	    (st.st_mode & 0070) == 0 || st.st_gid == gid)
		return (0);
	if (fchown(fd, (uid_t)-1, gid) == 0)
		return (0);
	return (fchmod(fd, mode & ~(mode_t)0070));
}

/*
 * Write TEXT to DIR/NAME.conf with at most the mode and group of SOURCE
 * (imp_mode); -1 with a message on failure.
 */
static int
imp_write(
    const char *dir, const char *name, const char *text, const char *source)
{
	size_t len = strlen(text), off = 0;
	char *path;
	ssize_t n = 0;
	mode_t mode;
	gid_t gid;
	int fd;

	xasprintf(&path, "%s/%s.conf", dir, name);
	mode = imp_mode(source, &gid);
	fd = open(
	    path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd != -1 && imp_regroup(fd, mode, gid) == -1) {
		close(fd);
		fd = -1;
	}
	while (fd != -1 && off < len &&
	    ((n = write(fd, text + off, len - off)) > 0 || errno == EINTR))
		off += n > 0 ? (size_t)n : 0;
	if (fd != -1 && off == len && fsync(fd) == 0) {
		n = close(fd);
		fd = -1;
	} else
		n = -1;
	if (n == -1)
		fprintf(stderr, "vigilctl: %s: %s\n", path, strerror(errno));
	if (fd != -1)
		close(fd);
	free(path);
	return (n == -1 ? -1 : 0);
}

/* Has a file before F (or F itself, before job J) a job named NAME? */
static const char *
imp_dup(
    const struct imp *imp, size_t fi, size_t ji, const char *name, int *line)
{
	size_t i, j;

	for (i = 0; i <= fi; i++) {
		const struct svimport_out *o = &imp->files[i].out;

		for (j = 0; j < o->njobs && (i < fi || j < ji); j++)
			if (strcmp(o->jobs[j].name, name) == 0) {
				*line = o->jobs[j].line;
				return (o->jobs[j].file);
			}
	}
	return (NULL);
}

/*
 * "FILE:LINE: [program:x]: not translated (vigil refuses the job file:
 * ...)" with the messages of ERRS, each without its own file and line.
 */
static char *
imp_refusal(const struct svimport_job *job, const struct conf_errors *errs)
{
	char *msg, *more;
	const char *m;
	size_t k;

	xasprintf(&msg,
	    "%s:%d: [program:%s]: not translated (vigil refuses the job file:",
	    job->file, job->line, job->name);
	for (k = 0; k < errs->n; k++) {
		m = errs->msgs[k];
		if (strncmp(m, "/", 1) == 0 && strchr(m, ':') != NULL) {
			m = strchr(m, ':') + 1;
			m += strspn(m, "0123456789");
			m += strspn(m, ": ");
		}
		xasprintf(&more, "%s %s%s", msg, m, k + 1 < errs->n ? ";" : "");
		free(msg);
		msg = more;
	}
	xasprintf(&more, "%s)", msg);
	free(msg);
	return (more);
}

/*
 * Check each job of file FI in the staging dir with vigild's own loader.
 * Returns the number refused (now in the file's skip list).
 */
static size_t
imp_check(struct imp *imp, size_t fi)
{
	struct imp_file *f = &imp->files[fi];
	struct conf_errors errs;
	struct job_spec *spec;
	size_t j, refused = 0;
	char *path, *msg;

	for (j = 0; j < f->out.njobs; j++) {
		const struct svimport_job *job = &f->out.jobs[j];
		const char *other;
		int line;

		conf_errors_init(&errs);
		other = imp_dup(imp, fi, j, job->name, &line);
		if (other != NULL)
			xasprintf(&msg,
			    "%s:%d: [program:%s]: not translated (a program "
			    "of that name is in %s:%d)",
			    job->file, job->line, job->name, other, line);
		else {
			xasprintf(&path, "%s/%s.conf", imp->staging, job->name);
			if (imp_write(imp->staging, job->name, job->text,
			        job->file) == -1) {
				unlink(path);
				rmdir(imp->staging);
				exit(1);
			}
			spec = job_spec_load(path, job->name, &errs);
			job_spec_free(spec);
			unlink(path);
			free(path);
			if (spec != NULL) {
				conf_errors_clear(&errs);
				continue;
			}
			msg = imp_refusal(job, &errs);
		}
		conf_errors_clear(&errs);
		f->skip = xreallocarray(f->skip, f->nskip + 2, sizeof *f->skip);
		f->skip[f->nskip++] = xstrdup(job->name);
		f->skip[f->nskip] = NULL;
		f->refused = xreallocarray(
		    f->refused, f->nrefused + 1, sizeof *f->refused);
		f->refused[f->nrefused++] = msg;
		refused++;
	}
	return (refused);
}

/* Read and translate every file; exit 2 if one cannot be read. */
static void
imp_load(struct imp *imp)
{
	struct ini_var *vars;
	char *cause, *here;
	size_t i, j, nvars;
	int bad = 0;

	for (i = 0; i < imp->nfiles; i++) {
		struct imp_file *f = &imp->files[i];

		here = ini_here(f->path);
		/* What [include] files may name, as read_config() has it. */
		vars = svimport_vars(here, imp->uts.nodename, environ, &nvars);
		cause = NULL;
		if (ini_load(&f->ini, f->path, vars, nvars, &cause) == -1) {
			fprintf(stderr, "vigilctl: %s\n", cause);
			free(cause);
			bad = 1;
		}
		svimport_vars_free(vars, nvars);
		free(here);
		for (j = 0; j < f->ini.nnotes; j++)
			fprintf(stderr, "vigilctl: %s\n", f->ini.notes[j]);
	}
	if (bad)
		exit(2);
}

/* Translate and check, until vigil accepts every job that is left. */
static void
imp_settle(struct imp *imp)
{
	size_t i, rounds;

	for (i = 0; i < imp->nfiles; i++) {
		imp_translate(imp, &imp->files[i]);
		for (rounds = 0; imp_check(imp, i) > 0 && rounds < 1000;
		     rounds++)
			imp_translate(imp, &imp->files[i]);
	}
}

/* Print the reports; set imp->reported if there was one. */
static void
imp_report(struct imp *imp)
{
	size_t i, j;

	for (i = 0; i < imp->nfiles; i++) {
		const struct imp_file *f = &imp->files[i];

		for (j = 0; j < f->out.nreports; j++)
			fprintf(stderr, "%s\n", f->out.reports[j]);
		for (j = 0; j < f->nrefused; j++)
			fprintf(stderr, "%s\n", f->refused[j]);
		if (f->out.nreports > 0 || f->nrefused > 0)
			imp->reported = 1;
	}
}

/* Print or write one JOB to PATH, through STAGED. */
static void
imp_commit_one(struct imp *imp, const struct svimport_job *job,
    const char *path, const char *staged, int *code, size_t *written)
{
	struct stat st;

	if (imp->dry_run)
		printf("==> %s <==\n%s\n", path, job->text);
	if (!imp->force && lstat(path, &st) == 0) {
		fprintf(stderr,
		    "vigilctl: %s exists: not written (--force replaces it)\n",
		    path);
		*code = 1;
		return;
	}
	if (imp->dry_run)
		return;
	if (imp_write(imp->staging, job->name, job->text, job->file) == -1 ||
	    rename(staged, path) == -1) {
		fprintf(stderr, "vigilctl: %s: %s\n", path, strerror(errno));
		unlink(staged);
		*code = 1;
		return;
	}
	(*written)++;
}

/*
 * Print (--dry-run) or write every job; a job that exists already is
 * refused without --force.
 */
static int
imp_commit(struct imp *imp)
{
	char *path, *staged;
	size_t i, j, written = 0;
	int code = 0;

	for (i = 0; i < imp->nfiles; i++)
		for (j = 0; j < imp->files[i].out.njobs; j++) {
			const struct svimport_job *job =
			    &imp->files[i].out.jobs[j];

			xasprintf(
			    &path, "%s/%s.conf", imp->jobs_dir, job->name);
			xasprintf(
			    &staged, "%s/%s.conf", imp->staging, job->name);
			imp_commit_one(imp, job, path, staged, &code, &written);
			free(path);
			free(staged);
		}
	if (!imp->dry_run)
		printf("%zu job file%s written to %s\n", written,
		    written == 1 ? "" : "s", imp->jobs_dir);
	return (code);
}
static void
imp_clear(struct imp *imp)
{
	size_t i, j;

	for (i = 0; i < imp->nfiles; i++) {
		struct imp_file *f = &imp->files[i];

		ini_clear(&f->ini);
		svimport_out_clear(&f->out);
		for (j = 0; j < f->nskip; j++)
			free(f->skip[j]);
		free(f->skip);
		for (j = 0; j < f->nrefused; j++)
			free(f->refused[j]);
		free(f->refused);
	}
	free(imp->files);
	free(imp->jobs_dir_owned);
}

/* Options and files of the command line. */
static void
imp_args(struct imp *imp, int argc, char **argv)
{
	enum {
		OPT_JOBS_DIR = 256,
		OPT_DRY_RUN,
		OPT_FORCE
	};
	static const struct option longopts[] = {
		{ "jobs-dir", required_argument, NULL, OPT_JOBS_DIR },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ NULL, 0, NULL, 0 },
	};
	int ch, i;

	if (argc < 2 || strcmp(argv[1], "supervisord") != 0)
		imp_usage();
	optind = 1;
	argc--;
	argv++;
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case OPT_JOBS_DIR:
			imp->jobs_dir = optarg;
			break;
		case OPT_DRY_RUN:
			imp->dry_run = 1;
			break;
		case OPT_FORCE:
			imp->force = 1;
			break;
		default:
			imp_usage();
		}
	}
	if (optind == argc)
		imp_usage();
	imp->nfiles = (size_t)(argc - optind);
	imp->files = xcalloc(imp->nfiles, sizeof *imp->files);
	for (i = optind; i < argc; i++)
		imp->files[i - optind].path = argv[i];
}

int
vigilctl_import(int argc, char **argv, const char *config)
{
	struct imp imp;
	const char *tmp;
	int code;

	memset(&imp, 0, sizeof imp);
	imp_args(&imp, argc, argv);
	if (uname(&imp.uts) == -1)
		snprintf(
		    imp.uts.nodename, sizeof imp.uts.nodename, "localhost");
	if (imp.jobs_dir == NULL)
		imp.jobs_dir = imp.jobs_dir_owned = imp_jobs_dir(config);
	imp_load(&imp);
	tmp = getenv("TMPDIR");
	snprintf(imp.staging, sizeof imp.staging, "%s/.vigil-import.XXXXXX",
	    imp.dry_run ? (tmp != NULL && *tmp != '\0' ? tmp : "/tmp") :
	                  imp.jobs_dir);
	if (mkdtemp(imp.staging) == NULL) {
		fprintf(
		    stderr, "vigilctl: %s: %s\n", imp.staging, strerror(errno));
		imp_clear(&imp);
		return (2);
	}
	imp_settle(&imp);
	imp_report(&imp);
	code = imp_commit(&imp);
	rmdir(imp.staging);
	imp_clear(&imp);
	return (code != 0 || imp.reported ? 1 : 0);
}
