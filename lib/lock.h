/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * Open-file-description locks (F_OFD_SETLK).  A lock belongs to an open
 * file description, so it survives fork and exec and lives as long as any
 * process holds a descriptor for it.  The kernel does not tell who holds an
 * OFD lock in /proc/locks, so vigild writes a holder record "pid pgid
 * starttime vigild_pid" into a record file beside the lock (NAME.holder):
 * the lock file itself is open read-write in the job, which could forge
 * anything written there.  The record only names a candidate; the kernel's
 * own view (the lock lines of /proc/PID/fdinfo) says who really holds it.
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
	LOCK_HOLDER_GONE = 0, /* no process of the record holds the lock */
	LOCK_HOLDER_ALIVE,    /* the recorded pid itself holds it */
	LOCK_HOLDER_GROUP,    /* another member of the recorded group does */
};

int lock_open(const char *);
int lock_openat(int, const char *);
int lock_try(int);
int lock_is_held(int);
int lock_owner_write(int, pid_t, const char *);
int lock_owner_read(int, pid_t *, char **);
int lock_record_open(const char *);
int lock_holder_read(int, struct lock_holder *);
int lock_holder_write(int, const struct lock_holder *);
int lock_holder_clear(int);
int lock_pid_holds(pid_t, int);
enum lock_holder_status lock_holder_check(
    const struct lock_holder *, int, pid_t *);
pid_t lock_find_holder(int);

#endif
