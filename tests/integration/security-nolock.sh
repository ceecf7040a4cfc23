#!/bin/bash
# Issue 16, item 2: no lock, no start.  When the lock file cannot be made
# (the locks dir removed, the runtime file system out of inodes), the
# instance waits in BACKOFF with the reason and never runs unlocked; it
# starts, locked, once the lock can be taken again.
. "$(dirname "$0")/lib.sh"

# none_for MS JOB: no process of JOB runs during the next MS milliseconds.
none_for() {
	local deadline
	deadline=$(($(now_ms) + $1))
	while [ "$(now_ms)" -lt "$deadline" ]; do
		[ -z "$(procs_with "VIGIL_JOB=$2")" ] ||
			fail "$2 runs without its lock: $(tail -n 5 "$VLOG")"
		sleep 0.05
	done
}

# locked PID: the process holds an OFD write lock on its fd 3.
locked() { grep -q 'OFDLCK.*WRITE' "/proc/$1/fdinfo/3" 2>/dev/null; }

reason_has() { ctl --json status "$1" | grep -qF "$2"; }

job svc 'command = "sleep 100000"' 'restart_delay = "100ms"'
start_vigild
wait_state svc RUNNING

# The locks dir goes away: the next start cannot take the lock.
ctl stop svc >/dev/null || fail "stop failed"
rm -rf "$RUN/locks"
ctl start svc >/dev/null 2>&1 || true
retry 10 is_state svc BACKOFF || fail "svc is $(state svc), not BACKOFF"
reason_has svc "open $RUN/locks/svc.lock: No such file or directory" ||
	fail "no reason: $(ctl --json status svc)"
# Longer than the backoff after a failed start (2s): it retries, and fails.
none_for 3000 svc
grep -q 'write lock record' "$VLOG" && fail "a run was started without its lock"
mkdir -m 755 "$RUN/locks"
wait_state svc RUNNING 10
pid=$(job_pid svc)
locked "$pid" || fail "svc runs without holding its lock"
stop_vigild

# A runtime file system without a free inode.
[ "$(id -u)" = 0 ] || { log "not root: no tmpfs"; exit 0; }
RT=$T/rt
mkdir "$RT"
mount -t tmpfs -o size=1m,nr_inodes=24,mode=755 vigil-test "$RT" ||
	skip "cannot mount a tmpfs (no mount namespace or no CAP_SYS_ADMIN here)"
# shellcheck disable=SC2329 # called by lib.sh's cleanup
cleanup_hook() { umount -l "$RT" 2>/dev/null; }
RUN=$RT/run SOCK=$RT/run/vigild.sock
export VIGIL_SOCKET=$SOCK
rm -f "$JOBS/svc.conf"
job svc 'command = "sleep 100000"'
start_vigild
wait_state svc RUNNING
i=0
while : >"$RT/fill$i" 2>/dev/null; do
	i=$((i + 1))
	[ "$i" -lt 100 ] || fail "the tmpfs never filled"
done
job late 'command = "sleep 100000"'
ctl reload >/dev/null || fail "reload failed"
retry 10 is_state late BACKOFF || fail "late is $(state late), not BACKOFF"
reason_has late "No space left on device" || fail "no reason: $(ctl --json status late)"
none_for 3000 late
rm -f "$RT"/fill*
wait_state late RUNNING 10
locked "$(job_pid late)" || fail "late runs without holding its lock"
stop_vigild
log ok
