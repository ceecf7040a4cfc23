/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * One datagram with a descriptor along (SCM_RIGHTS).  System calls on
 * the caller's memory only: a vfork'd child may call it.
 */

#ifndef VIGIL_SENDFD_H
#define VIGIL_SENDFD_H

#include <sys/types.h>

#include <stddef.h>

ssize_t sendfd(int, const void *, size_t, int, int);

#endif
