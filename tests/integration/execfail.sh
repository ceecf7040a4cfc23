#!/bin/bash
# exec of a missing binary is a failed start with a clear message, retried
# with backoff, and reported by start.
. "$(dirname "$0")/lib.sh"

job bad 'command = "/nonexistent/bin/x --flag"' 'restart_delay = "200ms"'
job nopath 'command = "no-such-command-vigil"' 'autostart = false'
start_vigild
retry 10 grep -q "exec /nonexistent/bin/x: No such file or directory" "$VLOG" ||
	fail "no exec error in the log"
retry 10 sh -c "\"$VIGILCTL\" -s \"$SOCK\" status bad | grep -q 'reason: exec /nonexistent/bin/x: No such file or directory'" ||
	fail "status does not give the reason"
st=$(state bad)
case $st in BACKOFF | STARTING) ;; *) fail "bad is $st" ;; esac
rc=0
out=$(ctl start nopath 2>&1) || rc=$?
[ "$rc" -eq 1 ] || fail "start of a missing command exited $rc"
printf '%s' "$out" | grep -q "exec no-such-command-vigil: No such file or directory" ||
	fail "start did not report the exec error: $out"
stop_vigild
log "ok"
