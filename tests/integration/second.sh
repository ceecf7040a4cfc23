#!/bin/bash
# A second vigild on the same runtime dir is refused with a clear message
# and leaves the first one and its jobs alone.
. "$(dirname "$0")/lib.sh"

job a 'command = "sleep 1000"'
start_vigild
wait_state a RUNNING
pid=$(job_pid a)
rc=0
"$VIGILD" -c "$T/vigil.conf" -j "$JOBS" --runtime-dir "$RUN" \
	--state-dir "$STATE" --log-dir "$LOGS" >"$T/second.log" 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "second vigild exited 0"
grep -q "another vigild (pid $VIGILD_PID) is running" "$T/second.log" ||
	fail "unclear message: $(cat "$T/second.log")"
ctl ping >/dev/null || fail "first vigild no longer answers"
[ "$(job_pid a)" = "$pid" ] || fail "job was disturbed"
[ "$(procs_with VIGIL_JOB=a | wc -l)" -eq 1 ] || fail "a runs more than once"
stop_vigild
log "ok"
