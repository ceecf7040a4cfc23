#!/bin/bash
# type = "forking" with a real daemon (issue 19): redis-server
# --daemonize yes.  RUNNING once the starter exited 0 and the daemon is
# known (its pid_file, within the job's cgroup); kill -9 of the daemon is
# a crash of the run (restarted); a stop leaves no redis; vigild killed
# with SIGKILL, the next vigild reclaims the daemon left in the cgroup
# and starts exactly one.  Needs redis-server and cgroups.
. "$(dirname "$0")/lib.sh"
# Its CPU is mostly a real server's, not vigild's: once, in the gcc
# stage (tests/run-all.sh sets VIGIL_SKIP_HEAVY under ASan; issue 43).
[ -z "${VIGIL_SKIP_HEAVY:-}" ] || skip "VIGIL_SKIP_HEAVY is set (most of its CPU is a real server's, not vigild's: the gcc stage runs it)"
need_cmd redis-server redis-server
REDIS=$(command -v redis-server)
# What /proc/PID/exe shows (Debian's redis-server is a symbolic link).
EXE=$(readlink -f "$REDIS")

port=$(free_port)
cat >"$T/redis.conf" <<END
daemonize yes
port $port
bind 127.0.0.1
pidfile $T/redis.pid
dir $T
save ""
appendonly no
logfile $T/redis.log
END
job red "command = {\"$REDIS\", \"$T/redis.conf\"}" 'type = "forking"' \
	"pid_file = \"$T/redis.pid\"" 'restart_delay = "100ms"'

start_vigild
need_cgroups

# redises: the pids of redis-server processes of this test's config.
redises() {
	local d
	for d in /proc/[0-9]*; do
		if grep -qs -- "$port" "$d/cmdline" &&
			[ "$(readlink "$d/exe" 2>/dev/null)" = "$EXE" ] &&
			alive "${d#/proc/}"; then
			echo "${d#/proc/}"
		fi
	done
	return 0
}
one_redis() { [ "$(redises | wc -l)" -eq 1 ]; }
no_redis() { [ -z "$(redises)" ]; }

wait_state red RUNNING
retry 10 one_redis || fail "not one redis: $(redises)"
p=$(redises)
[ "$(job_pid red)" = "$p" ] || fail "red's pid is $(job_pid red), redis is $p"
grep -q "red: starter pid [0-9]* exited 0; daemon pid $p" "$VLOG" ||
	fail "no main pid line: $(cat "$VLOG")"

# A crash of the daemon is a crash of the run.
kill -9 "$p"
restarted() { [ "$(redises)" != "$p" ] && one_redis; }
retry 10 restarted || fail "redis was not restarted: $(redises)"
wait_state red RUNNING
retry 10 one_redis || fail "not one redis after its crash: $(redises)"
q=$(redises)
[ "$q" != "$p" ] || fail "redis was not restarted"
[ "$(job_pid red)" = "$q" ] || fail "red's pid is $(job_pid red), redis is $q"

# A stop leaves no redis.
ctl stop red >/dev/null || fail "stop red failed"
no_redis || fail "redis outlived the stop: $(redises)"

# SIGKILL of vigild: the daemon outlives it; the next vigild reclaims it
# through the cgroup and starts exactly one.
ctl start red >/dev/null || fail "start red failed"
retry 10 one_redis || fail "not one redis: $(redises)"
old=$(redises)
track "$old"
kill -KILL "$VIGILD_PID"
wait "$VIGILD_PID" 2>/dev/null || true
VIGILD_PID=
alive "$old" || fail "redis did not outlive vigild (it should: a daemon)"
start_vigild
wait_state red RUNNING
dead "$old" || fail "the old redis $old was not reclaimed"
retry 10 one_redis || fail "not exactly one redis: $(redises)"
grep -q "red: its cgroup holds pid" "$VLOG" ||
	fail "no reclaim through the cgroup: $(cat "$VLOG")"
stop_vigild
no_redis || fail "redis outlived vigild's shutdown: $(redises)"
