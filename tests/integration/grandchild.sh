#!/bin/bash
# Stopping a job whose grandchild ignores SIGTERM leaves nothing behind:
# the group gets stop_signal, then SIGKILL after stop_timeout, and the job
# is STOPPED only once the whole group is gone.
. "$(dirname "$0")/lib.sh"
need_helper ignore-term

job gc "command = {\"sh\", \"-c\", \"$HELPERS/ignore-term $T/gc.pid & exec sleep 1000\"}" \
	'stop_timeout = "500ms"'
# An orphan (its parent exits) is reparented to vigild, the subreaper,
# and reaped when it exits (the test ends it, once it has seen it
# reparented: however slow the machine): no zombie is left.
job orphan "command = {\"sh\", \"-c\", \"sh -c 'sleep 1000 & echo \\\$! > $T/orphan.pid'; exec sleep 1000\"}"
start_vigild
retry 5 test -s "$T/orphan.pid" || fail "orphan did not start"
o=$(cat "$T/orphan.pid")
track "$o"
ppid_is_vigild() { [ "$(awk '/^PPid:/ { print $2 }' "/proc/$o/status" 2>/dev/null)" = "$VIGILD_PID" ]; }
retry 5 ppid_is_vigild || fail "orphan $o was not reparented to vigild"
kill -TERM "$o"
retry 5 test ! -e "/proc/$o" || fail "orphan $o was not reaped (zombie left)"
wait_state gc RUNNING
retry 5 test -s "$T/gc.pid" || fail "grandchild did not start"
gpid=$(cat "$T/gc.pid")
track "$gpid"
alive "$gpid" || fail "grandchild not alive"
t0=$(now_ms)
ctl stop gc >/dev/null || fail "stop failed"
took=$(($(now_ms) - t0))
dead "$gpid" || fail "grandchild $gpid alive after stop returned"
is_state gc STOPPED || fail "gc is $(state gc)"
[ "$took" -ge 400 ] || fail "stop returned after $took ms, before stop_timeout"
log "stop took $took ms"

# A leader that exits on its own: what is left of its group is stopped
# before the restart, so no straggler overlaps the next run.
rm -f "$T/gc.pid"
job gc2 "command = {\"sh\", \"-c\", \"$HELPERS/ignore-term $T/gc2.pid & sleep 0.3; exit 3\"}" \
	'stop_timeout = "300ms"' 'restart = "never"'
stop_vigild
start_vigild
retry 5 test -s "$T/gc2.pid" || fail "gc2 grandchild did not start"
g2=$(cat "$T/gc2.pid")
track "$g2"
wait_state gc2 EXITED 10
dead "$g2" || fail "straggler $g2 of gc2 survived its leader"
stop_vigild
log "ok"
