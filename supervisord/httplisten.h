/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

#ifndef VIGIL_HTTPLISTEN_H
#define VIGIL_HTTPLISTEN_H

#include <stddef.h>

/* The HTTP server's token and listening socket (httplisten.c). */
struct listen_addr;

int http_token_read(const char *, char **, size_t *, char **);
int http_listen_open(const struct listen_addr *, int, char **, char **);

#endif
