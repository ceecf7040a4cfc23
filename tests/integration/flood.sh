#!/bin/bash
# A job that writes without pause gets only its share of vigild: another
# job's crash-restart cycle keeps its pace, vigilctl status answers at once,
# and a `tail -f` client that never reads is dropped instead of stalling
# vigild.
. "$(dirname "$0")/lib.sh"

job flood 'command = {"sh", "-c", "exec yes flood-flood-flood-flood-flood-flood-flood-flood"}' \
	'log_max_size = "1M"' 'log_keep = 1'
# Runs 200 ms and fails, forever: each run outlives min_uptime, so it is
# restarted at once and the delay never grows.
job crash 'command = {"sh", "-c", "sleep 0.2; exit 1"}' \
	'min_uptime = "100ms"' 'restart_delay = "100ms"'
start_vigild
wait_state flood RUNNING

# The flood really flows through vigild: its file rotates.
retry 30 test -e "$LOGS/flood.log.1" || fail "the flood job's output does not reach its log"

starts() { grep -c 'vigil: started pid' "$LOGS/crash.log" 2>/dev/null || echo 0; }

# window SECONDS: starts of crash within that time, with status timed.
window() {
	local s0 s1 t0 t1 end worst=0
	s0=$(starts)
	end=$(($(now_ms) + $1 * 1000))
	while [ "$(now_ms)" -lt "$end" ]; do
		t0=$(now_ms)
		ctl status >/dev/null || fail "status failed during the flood"
		t1=$(now_ms)
		[ $((t1 - t0)) -gt "$worst" ] && worst=$((t1 - t0))
		sleep 0.1
	done
	s1=$(starts)
	echo "$((s1 - s0)) $worst"
}

# A cycle takes about 200 ms (plus fork and exec): 4 s hold about 19 on
# an idle machine; a busy one (VIGIL_TEST_SLOW) runs everything late, the
# flood's reader and the crash's forks alike: the bounds are scaled, and
# at least 2 restarts show the cycle never stopped.
MIN_RESTARTS=$((7 / VIGIL_TEST_SLOW > 2 ? 7 / VIGIL_TEST_SLOW : 2))
MAX_STATUS_MS=$(slow_s 1000)
read -r n worst < <(window 4)
log "flood: $n crash restarts in 4 s; slowest status ${worst} ms"
[ "$n" -ge "$MIN_RESTARTS" ] || fail "only $n restarts of crash in 4 s while flood writes"
[ "$worst" -lt "$MAX_STATUS_MS" ] || fail "status took $worst ms while flood writes"

# A follower that never reads: its output piles up in vigild until the
# limit, then it is dropped; nothing else waits for it.
mkfifo "$T/fifo"
exec 8<>"$T/fifo"
"$VIGILCTL" -s "$SOCK" tail -f flood >"$T/fifo" 2>/dev/null &
stuck=$!
track "$stuck"
retry 60 grep -q 'not reading its replies, dropped' "$VLOG" ||
	fail "a follower that never reads was not dropped"
read -r n worst < <(window 4)
log "blocked follower: $n crash restarts in 4 s; slowest status ${worst} ms"
[ "$n" -ge "$MIN_RESTARTS" ] || fail "only $n restarts of crash in 4 s with a stuck follower"
[ "$worst" -lt "$MAX_STATUS_MS" ] || fail "status took $worst ms with a stuck follower"

kill -KILL "$stuck"
wait "$stuck" 2>/dev/null || true
exec 8>&-
stop_vigild
log "ok"
