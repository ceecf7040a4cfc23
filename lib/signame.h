/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/* Signal names to numbers and back: "TERM", "SIGTERM", "term", "15". */

#ifndef VIGIL_SIGNAME_H
#define VIGIL_SIGNAME_H

int signame_parse(const char *);
const char *signame_name(int);

#endif
