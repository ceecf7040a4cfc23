#!/bin/bash
# Signals whose default action is to terminate (USR1, ALRM, PWR, IO, the
# real-time ones...) must not end vigild without a graceful stop of its
# jobs: each is logged once and ignored; the job keeps its pid; TERM still
# stops everything gracefully, and a job does not inherit the mask.
. "$(dirname "$0")/lib.sh"

job app 'command = {"sh", "-c", "grep ^SigBlk: /proc/self/status; grep ^SigIgn: /proc/self/status; exec sleep 1000"}'
start_vigild
wait_state app RUNNING
p=$(job_pid app)

# A job gets an empty mask and no ignored signal, whatever vigild blocks
# (but signals 32 and 33, the C library's own, which vigild cannot reset
# and may inherit ignored from whoever started it).
retry 10 grep -q '^SigIgn:' "$LOGS/app.log" || fail "no mask in the job's log"
mask() { awk -v k="$1:" '$1 == k { print $2 }' "$LOGS/app.log"; }
[ $((16#$(mask SigBlk))) -eq 0 ] ||
	fail "the job inherited blocked signals: $(mask SigBlk)"
[ $((16#$(mask SigIgn) & ~0x180000000)) -eq 0 ] ||
	fail "the job inherited ignored signals: $(mask SigIgn)"

rtmin=$(kill -l RTMIN 2>/dev/null || echo 34)
for sig in USR1 ALRM PWR IO VTALRM PROF XCPU XFSZ "$((rtmin + 3))" USR1; do
	case $sig in
	[0-9]*) kill -s "$sig" "$VIGILD_PID" 2>/dev/null || kill -"$sig" "$VIGILD_PID" ;;
	*) kill -s "$sig" "$VIGILD_PID" ;;
	esac
	retry 5 ctl ping >/dev/null 2>&1 ||
		fail "vigild stopped answering after SIG$sig"
	alive "$VIGILD_PID" || fail "vigild died of SIG$sig"
done
wait_state app RUNNING
[ "$(job_pid app)" = "$p" ] || fail "the job was restarted or replaced"
alive "$p" || fail "the job died"
retry 5 grep -q 'ignoring SIGUSR1' "$VLOG" || fail "SIGUSR1 not logged"
retry 5 grep -q 'ignoring SIGRTMIN+3' "$VLOG" || fail "SIGRTMIN+3 not logged"
[ "$(grep -c 'ignoring SIGUSR1' "$VLOG")" -eq 1 ] || fail "SIGUSR1 logged more than once"

# HUP and USR2 keep their meanings.
kill -HUP "$VIGILD_PID"
retry 5 grep -q 'received HUP' "$VLOG" || fail "HUP not a reload"
kill -USR2 "$VIGILD_PID"
retry 5 grep -q 'received USR2' "$VLOG" || fail "USR2 not a log reopen"

# TERM: the graceful stop, exit 0.
kill -TERM "$VIGILD_PID"
rc=0
wait "$VIGILD_PID" || rc=$?
VIGILD_PID=
[ "$rc" -eq 0 ] || fail "vigild exited $rc after TERM"
retry 5 dead "$p" || fail "the job survived vigild"
grep -q 'shutting down' "$VLOG" || fail "no graceful shutdown"
log "ok"
