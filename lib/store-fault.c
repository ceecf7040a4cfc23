/* SPDX-License-Identifier: ISC */
/* Copyright (c) 2026 The vigil authors */

/*
 * A fault in state.db-shm must not end vigild.  In WAL mode SQLite maps
 * state.db-shm (the WAL index) shared and writes into it.  When that file
 * cannot take a write any more (chattr +i; truncated under the mapping),
 * the kernel answers the write with SIGBUS, whose default action ended
 * vigild ("Bus error").  PRAGMA locking_mode = EXCLUSIVE would keep the
 * index in vigild's heap, but then no other program could open state.db
 * while vigild runs: neither vigilctl enqueue --direct nor an operator's
 * sqlite3.  So the fault is caught instead, and made harmless: the
 * handler checks in /proc/self/maps that the address is in a shared
 * mapping of a file named *-shm, puts private anonymous memory holding the
 * same bytes (zeros where they cannot be read) in that mapping's place,
 * and returns; the write then lands in vigild's own copy, and the
 * statement goes on with a consistent index.  The handler only notes the
 * fault: the caller (state-sqlite-pending.c) asks store_fault_taken()
 * before each use of the store and, after a fault, closes it and opens it
 * again later, when SQLite maps the file anew (read-only while it cannot
 * be written: the store then fails, and supervision goes on from memory).
 * Any other SIGBUS gets the default action, as before.  Only system calls
 * and async-signal-safe functions run in the handler.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "store.h"

/* The largest page the handler copies through its buffer. */
#define STORE_FAULT_PAGE_MAX 65536

static volatile sig_atomic_t store_fault_count;
static sig_atomic_t store_fault_seen;
static long store_fault_pagesize;

/* The hexadecimal number at *p; *p moves past it. */
static uintptr_t
store_fault_hex(const char **p)
{
	uintptr_t v = 0;
	char c;

	for (;; (*p)++) {
		c = **p;
		if (c >= '0' && c <= '9')
			v = v * 16 + (uintptr_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (uintptr_t)(c - 'a' + 10);
		else
			return (v);
	}
}

/* Does s end with the string end? */
static int
store_fault_ends(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);

	return (n >= m && memcmp(s + n - m, end, m) == 0);
}

/*
 * Is addr in the mapping of this /proc/self/maps line ("lo-hi perms ...
 * path"), a shared one of a file named *-shm?  Its range in *lo, *hi.
 */
static int
store_fault_line(const char *s, uintptr_t addr, uintptr_t *lo, uintptr_t *hi)
{
	const char *p = s;

	*lo = store_fault_hex(&p);
	if (*p++ != '-')
		return (0);
	*hi = store_fault_hex(&p);
	if (*p++ != ' ' || addr < *lo || addr >= *hi || strlen(p) < 4 ||
	    p[3] != 's')
		return (0);
	return (store_fault_ends(s, "-shm") ||
	    store_fault_ends(s, "-shm (deleted)"));
}

/* Find the -shm mapping holding addr in /proc/self/maps; 1 if found. */
static int
store_fault_find(uintptr_t addr, uintptr_t *lo, uintptr_t *hi)
{
	static char buf[4096], line[4096 + 1];
	static size_t len;
	ssize_t n, i;
	int fd, found = 0;

	if ((fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC)) == -1)
		return (0);
	len = 0;
	while (!found && (n = read(fd, buf, sizeof(buf))) > 0) {
		for (i = 0; i < n && !found; i++) {
			if (buf[i] != '\n') {
				if (len < sizeof(line) - 1)
					line[len++] = buf[i];
				continue;
			}
			line[len] = '\0';
			len = 0;
			found = store_fault_line(line, addr, lo, hi);
		}
	}
	close(fd);
	return (found);
}

/*
 * Put private anonymous memory with the same bytes in place of the pages
 * lo to hi.  0, or -1.
 */
static int
store_fault_replace(uintptr_t lo, uintptr_t hi)
{
	static char copy[STORE_FAULT_PAGE_MAX];
	size_t ps = (size_t)store_fault_pagesize;
	struct iovec local, remote;
	uintptr_t p;
	int ok;

	for (p = lo; p < hi; p += ps) {
		local.iov_base = copy;
		local.iov_len = ps;
		remote.iov_base = (void *)p;
		remote.iov_len = ps;
		/* A read that fails here (EFAULT) would fault in memcpy. */
		ok = process_vm_readv(getpid(), &local, 1, &remote, 1, 0) ==
		    (ssize_t)ps;
		if (mmap((void *)p, ps, PROT_READ | PROT_WRITE,
		        MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1,
		        0) == MAP_FAILED)
			return (-1);
		if (ok)
			memcpy((void *)p, copy, ps);
	}
	return (0);
}

static void
store_fault_handler(int sig, siginfo_t *si, void *uc)
{
	struct sigaction dfl;
	uintptr_t lo, hi;
	int saved = errno;

	(void)uc;
	if (si->si_code == BUS_ADRERR &&
	    store_fault_find((uintptr_t)si->si_addr, &lo, &hi) &&
	    store_fault_replace(lo, hi) == 0) {
		store_fault_count++;
		errno = saved;
		return;
	}
	/* Not state.db-shm's: what SIGBUS did before. */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	(void)sigaction(sig, &dfl, NULL);
	(void)raise(sig);
	errno = saved;
}

/*
 * Catch SIGBUS in SQLite's shared memory for the rest of the process (see
 * above).  Return 0, or -1 with errno (sigaction's).
 */
int
store_fault_guard(void)
{
	struct sigaction sa;

	store_fault_pagesize = sysconf(_SC_PAGESIZE);
	if (store_fault_pagesize <= 0 ||
	    store_fault_pagesize > STORE_FAULT_PAGE_MAX) {
		errno = ENOTSUP;
		return (-1);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = store_fault_handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	return (sigaction(SIGBUS, &sa, NULL));
}

/*
 * Has a fault been made harmless since the last call?  Then the store
 * must be closed and opened again.  1 or 0.
 */
int
store_fault_taken(void)
{
	sig_atomic_t n = store_fault_count;

	if (n == store_fault_seen)
		return (0);
	store_fault_seen = n;
	return (1);
}
