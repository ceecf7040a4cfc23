/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * A libFuzzer target for the supervisord importer's reading of untrusted
 * files: the input is parsed as one supervisord configuration file
 * (ini_parse_buffer(), as ini_load() does after reading it), every value
 * is expanded with Python's "%" rules (ini_expand()) against strings,
 * numbers and markers, and the whole is translated into job files
 * (svimport_translate()), as vigilctl import does.  Any input must end
 * in a result or a clear error: no crash, no leak, no read out of
 * bounds, no endless loop.  [include] is not followed here (there are
 * no files); tests/unit/test-ini.c covers it.
 */

#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ini.h"
#include "svimport.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const struct ini_var fuzz_vars[] = {
	{ "here", INI_VAR_STRING, "/etc/supervisor", 0 },
	{ "host_node_name", INI_VAR_STRING, "node1", 0 },
	{ "program_name", INI_VAR_STRING, "web", 0 },
	{ "group_name", INI_VAR_STRING, "web", 0 },
	{ "ENV_HOME", INI_VAR_STRING, "/root", 0 },
	{ "numprocs", INI_VAR_NUMBER, NULL, 3 },
	{ "process_num", INI_VAR_MARK, "process_num", 0 },
};

static void
fuzz_expand_all(const struct ini_section *s)
{
	char *r, *cause;
	size_t i;

	for (i = 0; i < s->n; i++) {
		cause = NULL;
		r = ini_expand(s->entries[i].value, fuzz_vars,
		    sizeof fuzz_vars / sizeof fuzz_vars[0], &cause);
		if ((r == NULL) == (cause == NULL))
			abort();
		free(r);
		free(cause);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *const env[] = { "HOME=/root", "PATH=/usr/bin:/bin", NULL };
	struct svimport_in in = { "node1", env, NULL };
	struct svimport_out out;
	struct ini ini;
	char *cause = NULL;
	size_t i;

	memset(&ini, 0, sizeof ini);
	if (ini_parse_buffer(
	        &ini, "fuzz.conf", (const char *)data, size, &cause) != 0) {
		if (cause == NULL || strncmp(cause, "fuzz.conf", 9) != 0)
			abort();
		free(cause);
		return (0);
	}
	fuzz_expand_all(&ini.defaults);
	for (i = 0; i < ini.nsections; i++)
		fuzz_expand_all(&ini.sections[i]);
	memset(&out, 0, sizeof out);
	svimport_translate(&ini, &in, &out);
	for (i = 0; i < out.njobs; i++)
		if (out.jobs[i].text == NULL || out.jobs[i].name == NULL)
			abort();
	svimport_out_clear(&out);
	ini_clear(&ini);
	return (0);
}
