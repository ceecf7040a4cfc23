#!/bin/bash
# Issue 16, item 3: a job file named like an instance ("x@1.conf") would
# share its lock file and status name with instance 1 of job x, and vigild
# would reclaim its own child in a loop.  "@" is not allowed in job names:
# --check reports FILE:LINE, and the instances of x run undisturbed.
. "$(dirname "$0")/lib.sh"

job x 'command = "sleep 100000"' 'instances = 2'
job x@1 'command = "sleep 100000"'
rc=0
out=$("$VIGILD" --check -c "$T/vigil.conf" -j "$JOBS" 2>&1) || rc=$?
[ "$rc" = 1 ] || fail "--check exited $rc: $out"
printf '%s\n' "$out" | grep -qF "$JOBS/x@1.conf:1: invalid job name \"x@1\": \"@\" is kept for instance names" ||
	fail "--check did not report x@1.conf: $out"

start_vigild
wait_state x@0 RUNNING
wait_state x@1 RUNNING
p0=$(job_pid x@0)
p1=$(job_pid x@1)
# Nothing takes instance 1's lock from it, for a while.
deadline=$(($(now_ms) + 2500))
while [ "$(now_ms)" -lt "$deadline" ]; do
	[ "$(job_pid x@1)" = "$p1" ] && alive "$p1" || fail "x@1 was restarted"
	sleep 0.05
done
[ "$(job_pid x@0)" = "$p0" ] || fail "x@0 was restarted"
[ "$(procs_with VIGIL_JOB=x@1 | wc -l)" = 0 ] || fail "the job x@1 runs"
grep -q 'x@1.conf:1: invalid job name' "$VLOG" || fail "vigild did not report x@1.conf"
grep -q reclaiming "$VLOG" && fail "vigild reclaimed a lock of its own"
stop_vigild
log ok
