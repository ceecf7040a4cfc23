/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * What a command prints: formatted text to its standard output and
 * error (the client gets both when the command ends), and the times and
 * run endings as users see them everywhere (lib/timefmt.c, lib/job.c).
 */

#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "job.h"
#include "log.h"
#include "proto.h"
#include "timefmt.h"

static void __attribute__((format(printf, 2, 0)))
cmd_vadd(struct proto_buf *b, const char *fmt, va_list ap)
{
	char *s;
	int n;

	if ((n = vasprintf(&s, fmt, ap)) == -1)
		fatal("vasprintf");
	proto_buf_add(b, s, (size_t)n);
	free(s);
}

/* Add formatted text to a buffer (a reply built after its command). */
void
cmd_buf_printf(struct proto_buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cmd_vadd(b, fmt, ap);
	va_end(ap);
}

/* Add formatted text to the command's standard output. */
void
cmd_print(struct cmd_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cmd_vadd(&ctx->out, fmt, ap);
	va_end(ap);
}

/* Add formatted text to the command's standard error. */
void
cmd_print_err(struct cmd_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cmd_vadd(&ctx->err, fmt, ap);
	va_end(ap);
}

/* Add a line (a newline is appended) to the command's standard error. */
void
cmd_error(struct cmd_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cmd_vadd(&ctx->err, fmt, ap);
	va_end(ap);
	proto_buf_add(&ctx->err, "\n", 1);
}

/* A wall clock usec as users see it (lib/timefmt.c), or "-" for none. */
char *
cmd_format_time(int64_t usec, char *buf, size_t len)
{
	return (timefmt_wall(usec, buf, len));
}

/* "exit N", "signal NAME" or "-": how a run ended (-1: none of either). */
char *
cmd_format_exit(int exit_code, int sig, char *buf, size_t len)
{
	return (job_exit_format(exit_code, sig, 0, buf, len));
}
