/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

#ifndef VIGIL_SPARE_H
#define VIGIL_SPARE_H

/* Spare descriptors for a vigild out of them (spare.c). */
#include <sys/socket.h>

int spare_take(void);
void spare_give(void);
int spare_accept(int, struct sockaddr *, socklen_t *, int *);

#endif
