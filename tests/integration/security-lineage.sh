#!/bin/bash
# Issue 34, finding 8: without cgroup tracking (`cgroup = "off"`), a job
# running as nobody whose children leave its process group and session
# (setsid), keep its lock descriptor or close it, or double-fork, must
# still be stopped whole: vigild knows the run's processes by the session
# and group it gave the run at spawn, their descendants, and the orphans
# handed to it that keep the run's lock.  A stop leaves none of them; the
# next start is never BLOCKED on the job's own child; a run whose leader
# dies is over only once they are gone; the shutdown leaves none.
. "$(dirname "$0")/lib.sh"
need_nobody
echo 'cgroup = "off"' >>"$T/vigil.conf"

# TAG: what only this test's escapees carry in their command line.
TAG="100000.$$"
cat >"$T/escape.sh" <<END
#!/bin/sh
# One escapee in a session of its own keeping fd 3 (the lock), one that
# also closes it, one double-forked: all outside the leader's group.
setsid sh -c 'exec sleep ${TAG}1' &
setsid sh -c 'exec sleep ${TAG}2' 3>&- &
( setsid sh -c 'exec sleep ${TAG}3' & ) &
exec sleep 100000
END
chmod 755 "$T/escape.sh"
job esc "command = \"$T/escape.sh\"" 'user = "nobody"' 'stop_timeout = "2s"'

# escapees: the pids of this test's escapees alive now.
escapees() {
	local d
	for d in /proc/[0-9]*; do
		if grep -qs -- "$TAG" "$d/cmdline" && alive "${d#/proc/}"; then
			echo "${d#/proc/}"
		fi
	done
	return 0
}
all_out() { [ "$(escapees | wc -l)" -eq 3 ]; }
none_left() { [ -z "$(escapees)" ]; }
track_escapees() {
	local p
	for p in $(escapees); do track "$p"; done
}

start_vigild
wait_state esc RUNNING
retry 10 all_out || fail "the escapees did not start: $(escapees)"
track_escapees

# A stop leaves nothing of the run.
rc=0
timeout "$(slow_s 30)" "$VIGILCTL" -s "$SOCK" stop esc >/dev/null 2>&1 || rc=$?
check "stop esc returns 0 (exit $rc)" test "$rc" -eq 0
check "no escapee outlives the stop" retry 10 none_left

# The next start is immediate, never BLOCKED on the job's own child.
rc=0
timeout "$(slow_s 30)" "$VIGILCTL" -s "$SOCK" start esc >/dev/null 2>&1 || rc=$?
check "start esc returns 0 (exit $rc)" test "$rc" -eq 0
check "esc is RUNNING, not BLOCKED ($(ctl status esc 2>&1 | tail -n +2))" \
	is_state esc RUNNING
no_stranger() { ! grep -q "which this vigild did not start" "$VLOG"; }
check "vigild never took the job's own child for a stranger" no_stranger
check "the escapees start again" retry 10 all_out
track_escapees

# The leader dies, the escapees live on: what is left of the run is
# stopped, and only then does it start again.
old=$(job_pid esc 2>/dev/null || true)
gone=$(escapees)
check "esc has a leader to kill" test -n "$old"
[ -z "$old" ] || kill -9 "$old"
olds_dead() {
	local p
	for p in $gone; do dead "$p" || return 1; done
}
check "the escapees do not outlive their run" retry 15 olds_dead
check "esc runs again" retry 15 all_out
track_escapees

# The shutdown leaves none (bounded: the stop timeout is 2 s).
kill -TERM "$VIGILD_PID"
exited() { dead "$VIGILD_PID"; }
check "vigild's shutdown ends" retry 30 exited
if exited; then
	wait "$VIGILD_PID" || true
	VIGILD_PID=
fi
check "no escapee outlives vigild's shutdown" none_left
checks_passed
log "ok"
