/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * The monotonic clock in microseconds, the unit of sd-event's timers and
 * of every duration in vigil.
 */

#ifndef VIGIL_MONOTIME_H
#define VIGIL_MONOTIME_H

#include <stdint.h>

uint64_t monotime_now(void);
int monotime_due(uint64_t *, uint64_t);

#endif
