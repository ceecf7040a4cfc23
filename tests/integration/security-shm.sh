#!/bin/bash
# shellcheck disable=SC2317 # predicates called through retry
# state.db-shm made immutable (chattr +i) under a running vigild: SQLite's
# next write into its shared memory faulted (SIGBUS) and vigild died with
# "Bus error".  vigild must live on: supervision from memory, state.db
# given up with a warning naming the file, and taken up again once the
# file is writable.  Needs a file system with chattr +i (ext4, xfs).
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "not root: chattr +i needs CAP_LINUX_IMMUTABLE"
need_cmd chattr e2fsprogs
need_cmd lsattr e2fsprogs
need_cmd jq jq
# Does the state directory's file system take the immutable flag?
mkdir -p "$STATE"
chmod 0700 "$STATE"
touch "$STATE/probe"
if ! chattr +i "$STATE/probe" 2>/dev/null; then
	skip "chattr +i does not work on $(df --output=fstype "$STATE" | tail -n 1)"
fi
chattr -i "$STATE/probe"
rm -f "$STATE/probe"

SHM=$STATE/state.db-shm
unlock() { chattr -i "$SHM" 2>/dev/null || true; }
at_cleanup unlock

job q 'kind = "queue"' 'command = {"true"}'
job svc 'command = {"sleep", "1000"}'
start_vigild
wait_state svc RUNNING
VPID=$VIGILD_PID
ctl enqueue q first >/dev/null || fail "enqueue failed"
# queued: the messages not yet done.
queued() { ctl --json queue q | jq '.queues[0] | .available + .delayed + .running'; }
drained() { [ "$(queued)" = 0 ]; }
retry 10 drained || fail "first message not done: $(ctl queue q)"
[ -s "$SHM" ] || fail "no $SHM"

chattr +i "$SHM"
i=0
while [ "$i" -lt 5 ]; do
	ctl enqueue q "more $i" >/dev/null 2>&1 || true
	i=$((i + 1))
done
alive() { kill -0 "$VPID" 2>/dev/null; }
answers() { timeout "$(slow_s 3)" "$VIGILCTL" -s "$SOCK" status svc >/dev/null 2>&1; }
check "vigild alive after writes into an immutable -shm" alive
check "vigild answers" retry 10 answers
named() { grep -qF "$SHM: a write into SQLite's shared memory faulted" "$VLOG"; }
check "the fault logged, the file named" retry 10 named

# Writable again: state.db is taken up again, a message runs.
unlock
again() { ctl enqueue q again >/dev/null 2>&1; }
check "enqueue works again" retry 60 again
check "the message runs" retry 60 drained
check "vigild still alive" alive
checks_passed
stop_vigild
log "ok"
