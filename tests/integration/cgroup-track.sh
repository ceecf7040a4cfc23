#!/bin/bash
# cgroup = "auto" (issue 19): each instance runs in its own cgroup, so a
# process that leaves the job's session (setsid) or double-forks is still
# the job's.  A stop leaves no process of the job behind, checked from
# /proc; the next start is immediate, never BLOCKED on a leftover holding
# the lock; a run whose leader dies while its escapees live is over only
# once they are gone; after a SIGKILL of vigild, the next one reclaims the
# escapees left in the cgroup before it starts anything.  Skipped where vigild cannot use cgroups (not root,
# no writable cgroup2): its log says why.
. "$(dirname "$0")/lib.sh"

# TAG: what only this test's escapees carry in their command line (sleep
# takes a fraction: 100000.PID1 and 100000.PID2).
TAG="100000.$$"
cat >"$T/escape.sh" <<END
#!/bin/sh
# One escapee in a session of its own, one double-forked; both keep fd 3.
setsid sh -c 'exec sleep ${TAG}1' &
( sh -c 'exec sleep ${TAG}2' & ) &
exec sleep 100000
END
chmod 755 "$T/escape.sh"
job esc "command = \"$T/escape.sh\""

start_vigild
need_cgroups
grep -q "cgroup: each instance runs in its own cgroup under " "$VLOG" ||
	fail "no cgroup line in vigild's log: $(cat "$VLOG")"
base=$(sed -n 's/^.*own cgroup under //p' "$VLOG" | head -1)

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
both_out() { [ "$(escapees | wc -l)" -eq 2 ]; }
none_left() { [ -z "$(escapees)" ]; }

wait_state esc RUNNING
retry 10 both_out || fail "the escapees did not start: $(escapees)"
cg="$base/esc@0"
[ -d "$cg" ] || fail "no cgroup $cg"
for p in $(escapees); do
	grep -q "/esc@0\$" "/proc/$p/cgroup" ||
		fail "escapee $p is not in the job's cgroup: $(cat "/proc/$p/cgroup")"
done

# status counts the cgroup's processes and what they use.
ctl --json status esc | jq -e '.jobs[0] | .tasks == 3 and
	(.cpu_usec | type) == "number" and .memory_bytes > 0' >/dev/null ||
	fail "usage in status: $(ctl --json status esc)"
ctl status esc | grep -Eq '^  cpu [0-9.]+s, memory [0-9.]+M, 3 tasks$' ||
	fail "usage in the status detail: $(ctl status esc)"

# A stop leaves nothing: the escapees went with the run.
ctl stop esc >/dev/null || fail "stop esc failed"
none_left || fail "escapees outlived the stop: $(escapees)"
grep -q "populated 0" "$cg/cgroup.events" || fail "the cgroup is not empty"

# The next start is immediate: never BLOCKED on a leftover's lock.
ctl start esc >/dev/null || fail "start esc failed: $(state esc)"
! grep -q "esc: lock held" "$VLOG" ||
	fail "the start met a leftover: $(grep 'lock held' "$VLOG")"
retry 10 both_out || fail "the escapees did not start again"

# The leader dies, the escapees live on: what is left of the run is
# stopped, and only then does it start again.
old=$(job_pid esc)
gone=$(escapees)
kill -9 "$old"
olds_dead() {
	local p
	for p in $gone; do dead "$p" || return 1; done
}
retry 10 olds_dead || fail "the escapees outlived their run: $(escapees)"
wait_state esc RUNNING
[ "$(job_pid esc)" != "$old" ] || fail "esc was not restarted"
grep -q "esc: stopping what is left" "$VLOG" ||
	fail "no stop of what was left: $(cat "$VLOG")"

# vigild killed: its leader dies with it (PDEATHSIG), the escapees do
# not.  The next vigild finds them in the instance's cgroup, reclaims it,
# and only then starts the job: never two copies.
old=$(escapees | tr '\n' ' ')
for p in $old; do track "$p"; done
kill -KILL "$VIGILD_PID"
wait "$VIGILD_PID" 2>/dev/null || true
VIGILD_PID=
[ "$(escapees | wc -l)" -eq 2 ] || fail "the escapees did not outlive vigild"
start_vigild
wait_state esc RUNNING
for p in $old; do
	dead "$p" || fail "escapee $p of the killed vigild still lives"
done
retry 10 both_out || fail "not exactly two escapees: $(escapees)"
grep -q "esc: its cgroup holds pid .*left by an earlier vigild" "$VLOG" ||
	fail "no reclaim through the cgroup: $(cat "$VLOG")"

stop_vigild
none_left || fail "escapees outlived vigild's shutdown: $(escapees)"
[ ! -d "$cg" ] || fail "the instance's cgroup was left behind"
[ ! -d "$base" ] || fail "vigild's cgroup $base was left behind"
