#!/bin/bash
# SIGKILL of vigild: its children die with it (PR_SET_PDEATHSIG); a new
# vigild starts exactly one copy of each job again.
. "$(dirname "$0")/lib.sh"

job a 'command = "sleep 1000"'
job b 'command = "sleep 1000"' 'instances = 2'
job c 'command = {"sh", "-c", "trap \"exit 0\" INT; while :; do sleep 0.1; done"}' \
	'stop_signal = "INT"'
asroot=0
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
	asroot=1
	# Credentials change after PR_SET_PDEATHSIG would clear it.
	job d 'command = "sleep 1000"' 'user = "nobody"'
fi
start_vigild
wait_state a RUNNING
wait_state b@1 RUNNING
wait_state c RUNNING
pids="$(job_pid a) $(job_pid b) $(job_pid c)"
if [ "$asroot" -eq 1 ]; then
	wait_state d RUNNING
	dp=$(job_pid d)
	pids="$pids $dp"
	[ "$(awk '/^Uid:/ { print $2 }' "/proc/$dp/status")" = "$(id -u nobody)" ] ||
		fail "d does not run as nobody"
	[ "$(awk '/^Gid:/ { print $2 }' "/proc/$dp/status")" = "$(id -g nobody)" ] ||
		fail "d does not run in nobody's primary group"
	[ "$(awk '/^Groups:/ { print $2 }' "/proc/$dp/status")" != 0 ] ||
		fail "d kept root's supplementary group"
fi
for p in $pids; do track "$p"; done
kill -KILL "$VIGILD_PID"
wait "$VIGILD_PID" 2>/dev/null || true
VIGILD_PID=
t0=$(now_ms)
for p in $pids; do
	retry 1 dead "$p" || fail "pid $p alive 1 s after vigild was killed"
done
log "children gone $(($(now_ms) - t0)) ms after SIGKILL of vigild"

start_vigild
wait_state a RUNNING
wait_state b@0 RUNNING
wait_state b@1 RUNNING
[ "$(procs_with VIGIL_JOB=a | wc -l)" -eq 1 ] || fail "a runs more than once"
[ "$(procs_with VIGIL_JOB=b | wc -l)" -eq 2 ] || fail "b does not run twice"
stop_vigild
log "ok"
