/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Text bound for a terminal with its control characters made visible:
 * what a job wrote (tail, a STATUS= text, a dead message's error) must
 * not drive the operator's terminal.
 */

#ifndef VIGIL_TTYESC_H
#define VIGIL_TTYESC_H

#include <stddef.h>

/* The state of one stream being escaped. */
struct ttyesc {
	int json; /* escape as JSON string text (\u001b), not \x1b */
	int held; /* a 0xc2 byte held from the last chunk */
};

void ttyesc_init(struct ttyesc *, int);
char *ttyesc_chunk(struct ttyesc *, const void *, size_t, size_t *);
char *ttyesc_flush(struct ttyesc *, size_t *);

#endif
