#!/bin/bash
# SIGTERM to vigild: every job gets its stop_signal and time to finish its
# handler; vigild exits 0 once all are gone.
. "$(dirname "$0")/lib.sh"

job slow "command = {\"sh\", \"-c\", \"trap 'sleep 0.5; echo done > $T/cleanup; exit 0' TERM; while :; do sleep 0.05; done\"}"
job fast 'command = "sleep 1000"'
start_vigild
wait_state slow RUNNING
wait_state fast RUNNING
p1=$(job_pid slow)
p2=$(job_pid fast)
kill -TERM "$VIGILD_PID"
rc=0
wait "$VIGILD_PID" || rc=$?
VIGILD_PID=
[ "$rc" -eq 0 ] || fail "vigild exited $rc"
[ "$(cat "$T/cleanup" 2>/dev/null)" = "done" ] || fail "TERM handler did not finish"
dead "$p1" || fail "slow survived"
dead "$p2" || fail "fast survived"
[ ! -e "$SOCK" ] || [ -S "$SOCK" ] || fail "socket path is not a socket"
log "ok"
