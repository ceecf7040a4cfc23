/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Unit tests for lib/metrics.c: the lines of a family, label and HELP
 * escaping, number formats, and (with Debian's python3-prometheus-client)
 * the whole text read back by the OpenMetrics parser of Prometheus's
 * client library.
 */

#include "config.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metrics.h"
#include "test.h"

#define PYTHON "/usr/bin/python3"

static char out[16384];
static size_t outlen;

static void
collect(void *arg, const char *p, size_t n)
{
	(void)arg;
	if (outlen + n >= sizeof(out))
		n = sizeof(out) - 1 - outlen;
	memcpy(out + outlen, p, n);
	outlen += n;
	out[outlen] = '\0';
}

static void
start(struct metrics *m)
{
	outlen = 0;
	out[0] = '\0';
	metrics_init(m, collect, NULL);
}

TEST(family_lines)
{
	static const char *const l[] = { "job", "web", "instance", "0", NULL };
	struct metrics m;

	start(&m);
	metrics_family(&m, "vigil_job_uptime_seconds", "gauge", "seconds",
	    "How long it runs.");
	metrics_sample(&m, "", l, 1.5);
	metrics_family(&m, "vigil_job_restarts", "counter", NULL, NULL);
	metrics_sample_u64(&m, "_total", l, 18446744073709551615ULL);
	metrics_sample(&m, "_total", NULL, 3);
	metrics_end(&m);
	ASSERT_STREQ(out,
	    "# TYPE vigil_job_uptime_seconds gauge\n"
	    "# UNIT vigil_job_uptime_seconds seconds\n"
	    "# HELP vigil_job_uptime_seconds How long it runs.\n"
	    "vigil_job_uptime_seconds{job=\"web\",instance=\"0\"} 1.5\n"
	    "# TYPE vigil_job_restarts counter\n"
	    "vigil_job_restarts_total{job=\"web\",instance=\"0\"} "
	    "18446744073709551615\n"
	    "vigil_job_restarts_total 3\n"
	    "# EOF\n");
	return (0);
}

TEST(escaping)
{
	static const char *const l[] = { "job", "a\\b\"c\nd", NULL };
	struct metrics m;

	start(&m);
	metrics_family(
	    &m, "x", "gauge", NULL, "back\\slash and\nnewline \"q\"");
	metrics_sample(&m, "", l, 0);
	ASSERT_STREQ(out,
	    "# TYPE x gauge\n"
	    "# HELP x back\\\\slash and\\nnewline \"q\"\n"
	    "x{job=\"a\\\\b\\\"c\\nd\"} 0\n");
	return (0);
}

TEST(numbers)
{
	static const struct {
		double v;
		const char *text;
	} cases[] = {
		{ 0, "0" },
		{ -2, "-2" },
		{ 0.1, "0.1" },
		{ 1.490323, "1.490323" },
		{ 1796394543.0609479, "1796394543.060948" },
		{ 1e15, "1e+15" },
		{ 999999999999999, "999999999999999" },
		{ -999999999999999, "-999999999999999" },
		{ 10, "10" },
		{ -0.0, "0" },
		{ 1e300, "1e+300" },
		{ 0.30000000000000004, "0.30000000000000004" },
		{ 2.5e-7, "2.5e-07" },
	};
	struct metrics m;
	char want[64];
	size_t i;
	volatile double zero = 0;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		start(&m);
		metrics_family(&m, "n", "gauge", NULL, NULL);
		metrics_sample(&m, "", NULL, cases[i].v);
		snprintf(want, sizeof(want), "# TYPE n gauge\nn %s\n",
		    cases[i].text);
		ASSERT_STREQ(out, want);
		/* What is written reads back as the same double. */
		ASSERT_OK(strtod(out + strlen("# TYPE n gauge\nn "), NULL) ==
		    cases[i].v);
	}
	start(&m);
	metrics_family(&m, "n", "gauge", NULL, NULL);
	metrics_sample(&m, "", NULL, zero / zero);
	metrics_sample(&m, "", NULL, 1 / zero);
	metrics_sample(&m, "", NULL, -1 / zero);
	ASSERT_STREQ(out, "# TYPE n gauge\nn NaN\nn +Inf\nn -Inf\n");
	/* Counts: every uint64_t, the largest too. */
	start(&m);
	metrics_family(&m, "c", "gauge", NULL, NULL);
	metrics_sample_u64(&m, "", NULL, 0);
	metrics_sample_u64(&m, "", NULL, 9223372036854775807ULL);
	metrics_sample_u64(&m, "", NULL, 18446744073709551615ULL);
	ASSERT_STREQ(out,
	    "# TYPE c gauge\nc 0\nc 9223372036854775807\n"
	    "c 18446744073709551615\n");
	return (0);
}

/* The text, read by prometheus_client's OpenMetrics parser. */
TEST(real_parser)
{
	static const char *const l[] = { "job", "we\"b\\\n", "instance", "0",
		NULL };
	static const char *const info[] = { "version", "1.2", NULL };
	struct metrics m;
	char path[] = "/tmp/test-metrics.XXXXXX", cmd[2048];
	FILE *f;
	int fd;

	if (access(PYTHON, X_OK) != 0 ||
	    system(PYTHON " -c 'import prometheus_client' 2>/dev/null") != 0) {
		printf("# SKIP real_parser: no python3-prometheus-client\n");
		return (0);
	}
	start(&m);
	metrics_family(&m, "vigil_build", "info", NULL, "Build.");
	metrics_sample(&m, "_info", info, 1);
	metrics_family(&m, "vigil_job_uptime_seconds", "gauge", "seconds",
	    "How long.\nReally.");
	metrics_sample(&m, "", l, 1796394543.0609479);
	metrics_family(&m, "vigil_job_restarts", "counter", NULL, "Restarts.");
	metrics_sample_u64(&m, "_total", l, 7);
	metrics_end(&m);
	ASSERT_OK((fd = mkstemp(path)) != -1);
	ASSERT_OK((f = fdopen(fd, "w")) != NULL);
	fputs(out, f);
	ASSERT_EQ(fclose(f), 0);
	snprintf(cmd, sizeof(cmd),
	    PYTHON " -c 'import sys\n"
	           "from prometheus_client.openmetrics.parser import "
	           "text_string_to_metric_families as p\n"
	           "fs = list(p(open(sys.argv[1]).read()))\n"
	           "assert [f.name for f in fs] == [\"vigil_build\", "
	           "\"vigil_job_uptime_seconds\", \"vigil_job_restarts\"]\n"
	           "assert fs[1].unit == \"seconds\"\n"
	           "s = fs[1].samples[0]\n"
	           "assert s.labels == {\"job\": \"we\\\"b\\\\\\n\", "
	           "\"instance\": \"0\"}, s.labels\n"
	           "assert s.value == 1796394543.0609479\n"
	           "assert fs[2].samples[0].value == 7\n"
	           "assert fs[1].documentation == \"How long.\\nReally.\"\n"
	           "' %s",
	    path);
	ASSERT_EQ(system(cmd), 0);
	unlink(path);
	return (0);
}

int
main(void)
{
	RUN(family_lines);
	RUN(escaping);
	RUN(numbers);
	RUN(real_parser);
	TEST_MAIN_END();
}
