/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Open-file-description locks (F_OFD_SETLK).  A lock belongs to an open
 * file description, so it survives fork and exec and lives as long as any
 * process holds a descriptor for it.  The kernel does not tell who holds an
 * OFD lock, so a holder record "pid pgid starttime vigild_pid" is written
 * into the file.
 */

#ifndef VIGIL_LOCK_H
#define VIGIL_LOCK_H

#include <sys/types.h>

#include <stdint.h>

/* The holder record's size on disk: "pid pgid starttime vigild", padded. */
#define LOCK_RECORD_SIZE 80

struct lock_holder {
	pid_t pid;          /* leader of the holder */
	pid_t pgid;         /* its process group */
	uint64_t starttime; /* /proc start time of pid */
	pid_t vigild;       /* the vigild that started it */
};

enum lock_holder_status {
	LOCK_HOLDER_GONE = 0, /* nothing of the recorded holder is alive */
	LOCK_HOLDER_ALIVE,    /* the recorded pid is the same process */
	LOCK_HOLDER_GROUP,    /* pid is gone but its process group lives */
};

int lock_open(const char *);
int lock_try(int);
int lock_holder_read(int, struct lock_holder *);
int lock_holder_write(int, const struct lock_holder *);
int lock_holder_clear(int);
enum lock_holder_status lock_holder_check(const struct lock_holder *);

#endif
