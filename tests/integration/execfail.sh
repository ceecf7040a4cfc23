#!/bin/bash
# exec of a missing binary, or a directory that is not there, is a failed
# start with a clear message, retried with backoff, and reported by start;
# the same from the first child (vfork) and from the later ones (clone).
. "$(dirname "$0")/lib.sh"

job bad 'command = "/nonexistent/bin/x --flag"' 'restart_delay = "200ms"'
job nopath 'command = "no-such-command-vigil"' 'autostart = false'
job nodir 'command = "sleep 1000"' 'directory = "/nonexistent/dir"' 'restart_delay = "200ms"'
job up 'command = "sleep 1000"' 'instances = 3'
start_vigild
retry 10 grep -q "exec /nonexistent/bin/x: No such file or directory" "$VLOG" ||
	fail "no exec error in the log"
retry 10 sh -c "\"$VIGILCTL\" -s \"$SOCK\" status bad | grep -q 'reason: exec /nonexistent/bin/x: No such file or directory'" ||
	fail "status does not give the reason"
st=$(state bad)
case $st in BACKOFF | STARTING) ;; *) fail "bad is $st" ;; esac
retry 10 sh -c "\"$VIGILCTL\" -s \"$SOCK\" status nodir | grep -q 'reason: chdir /nonexistent/dir: No such file or directory'" ||
	fail "status does not give the chdir failure"
[ "$(procs_with VIGIL_JOB=nodir | wc -l)" -eq 0 ] || fail "nodir runs without its directory"
# Once the others run, fail again: a child made where theirs were made.
for i in 0 1 2; do wait_state "up@$i" RUNNING; done
chdir_fails() { grep -c "failed to start: chdir /nonexistent/dir: No such file" "$LOGS/nodir.log" || true; }
n=$(chdir_fails)
retry 10 sh -c "[ \"\$(grep -c 'failed to start: chdir /nonexistent/dir: No such file' '$LOGS/nodir.log')\" -gt $n ]" ||
	fail "nodir was not retried with the same message"
rc=0
out=$(ctl start nopath 2>&1) || rc=$?
[ "$rc" -eq 1 ] || fail "start of a missing command exited $rc"
printf '%s' "$out" | grep -q "exec no-such-command-vigil: No such file or directory" ||
	fail "start did not report the exec error: $out"
stop_vigild
log "ok"
