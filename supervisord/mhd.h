/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

#ifndef VIGIL_MHD_H
#define VIGIL_MHD_H

#include <sys/types.h>
#include <sys/socket.h>

#include <stdarg.h>
#include <stdint.h>

#include <microhttpd.h>

/*
 * libmicrohttpd, opened (dlopen) only when http_listen is set (mhd.c): it
 * brings GnuTLS and nine more libraries that a vigild without HTTP
 * should neither map nor pay for.  These are the functions used;
 * mhd.MHD_foo is libmicrohttpd's MHD_foo.
 */
#define HTTP_MHD_FUNCS(X)                                                      \
	X(MHD_add_connection)                                                  \
	X(MHD_add_response_header)                                             \
	X(MHD_create_response_from_buffer)                                     \
	X(MHD_create_response_from_buffer_with_free_callback_cls)              \
	X(MHD_destroy_response)                                                \
	X(MHD_get_connection_info)                                             \
	X(MHD_get_connection_values)                                           \
	X(MHD_get_daemon_info)                                                 \
	X(MHD_get_timeout)                                                     \
	X(MHD_lookup_connection_value)                                         \
	X(MHD_queue_response)                                                  \
	X(MHD_resume_connection)                                               \
	X(MHD_run)                                                             \
	X(MHD_start_daemon)                                                    \
	X(MHD_stop_daemon)                                                     \
	X(MHD_suspend_connection)

struct mhd_lib {
	void *dl;
/* A declarator cannot be parenthesized: f is a name here. */
/* NOLINTNEXTLINE(bugprone-macro-parentheses) */
#define HTTP_MHD_FIELD(f) __typeof__(f) *f;
	HTTP_MHD_FUNCS(HTTP_MHD_FIELD)
#undef HTTP_MHD_FIELD
};
extern struct mhd_lib mhd;

int mhd_load(char **);

#endif
