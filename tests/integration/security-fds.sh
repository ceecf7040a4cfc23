#!/bin/bash
# Out of descriptors (issue 34, finding 9, F15): a job set that takes
# every descriptor vigild may open (80 jobs, a limit of 64) must not
# leave the control socket nor the HTTP server unusable: a spare
# descriptor always lets one client in, `status` and the log say which
# jobs could not start for lack of descriptors, and the jobs that did
# start are left alone.  vigild raises its own soft limit to the hard one
# at start; its jobs keep the limit vigild was given.
. "$(dirname "$0")/lib.sh"

# valgrind needs descriptors of its own.
[ -z "${VIGILD_WRAPPER:-}" ] || skip "a descriptor limit under valgrind"
need_cmd prlimit util-linux
need_cmd curl curl

# start_limited SOFT:HARD: vigild under that RLIMIT_NOFILE; waits only for
# its socket (it may be too short of descriptors to answer).
start_limited() {
	prlimit --nofile="$1" "$VIGILD" -c "$T/vigil.conf" -j "$JOBS" \
		--runtime-dir "$RUN" --state-dir "$STATE" --log-dir "$LOGS" \
		>>"$VLOG" 2>&1 &
	VIGILD_PID=$!
	track "$VIGILD_PID"
	retry 20 test -S "$SOCK" || fail "no control socket; log: $(tail -n 20 "$VLOG")"
}
ctl_t() { timeout "$(slow_s 10)" "$VIGILCTL" -s "$SOCK" "$@"; }

# (a) 80 jobs, 64 descriptors (soft and hard).
cat >"$T/vigil.conf" <<EOF
http_listen = "127.0.0.1:0"
EOF
for i in $(seq 1 80); do
	job "j$i" 'command = "sleep 100000"'
done
start_limited 64:64
# Some jobs could not start.
short() { grep -q 'cannot start' "$VLOG"; }
retry 20 short || fail "no job ran out of descriptors: $(tail -n 5 "$VLOG")"
http_port
status_ok() { ctl_t status >"$T/status" 2>"$T/status.err"; }
check "status answers with the descriptors exhausted" retry 20 status_ok
log "status said on stderr: $(head -c 300 "$T/status.err")"
check "status names the jobs that could not start" \
	grep -q 'could not start: out of file descriptors' "$T/status.err"
# A job that could not start (status names it): its reason says why.
reason_ok() {
	local starved
	starved=$(ctl_t status 2>&1 >/dev/null | sed -n 's/^.*out of file descriptors: \(j[0-9]*\) .*$/\1/p')
	[ -n "$starved" ] || return 1
	ctl_t status "$starved" >"$T/starved" 2>/dev/null || true
	grep -q 'reason: out of file descriptors' "$T/starved"
}
check "status NAME gives the reason" retry 20 reason_ok
log "$(grep reason: "$T/starved")"
check "the log says vigild's limit" grep -q "out of file descriptors (vigild may open 64)" "$VLOG"
running=$(awk '$2 == "RUNNING"' "$T/status" | wc -l)
log "$running jobs running"
check "some jobs run" test "$running" -gt 0
check "ping answers again and again" retry 20 ctl_t ping
code() { curl -sS -m 10 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/$1" 2>/dev/null; }
http_ok() { [ "$(code healthz)" = 200 ]; }
check "the HTTP server answers with the descriptors exhausted" retry 20 http_ok
check "vigild is still there" alive "$VIGILD_PID"
# Stopping needs descriptors too (a cgroup's members, a pidfd): the
# spares; at worst a job is killed at stop_timeout (10 s), never stuck.
kill -TERM "$VIGILD_PID"
check "vigild stops its jobs and exits at TERM" retry 60 dead "$VIGILD_PID"
stop_vigild

# (b) A soft limit below the hard one: vigild raises its own, its jobs
# keep what vigild was given.
rm -f "$JOBS"/*.conf
: >"$T/vigil.conf"
job one 'command = "sleep 100000"'
start_limited 64:256
wait_state one RUNNING
soft() { awk '/^Max open files/ { print $4 }' "/proc/$1/limits"; }
check "vigild's soft limit is its hard limit" test "$(soft "$VIGILD_PID")" = 256
check "a job keeps the soft limit vigild was given" test "$(soft "$(job_pid one)")" = 64
stop_vigild
checks_passed
log "out of descriptors: the control socket and the HTTP server still answer"
