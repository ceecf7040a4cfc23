/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * vigilctl's commands that work without vigild, each in a file of its
 * own: vigilctl.c hands them the command line from the command's name on.
 */

#ifndef VIGIL_VIGILCTL_H
#define VIGIL_VIGILCTL_H

/* vigilctl import supervisord ...: ARGV from "import", CONFIG from -c. */
int vigilctl_import(int, char **, const char *);

#endif
