#!/bin/bash
# A TERM-ignoring job (and its TERM-ignoring child) survive a SIGKILL of
# vigild and keep the lock.  The next vigild shows BLOCKED, reclaims the
# lock (stop_signal, then SIGKILL after stop_timeout) and only then starts
# one new instance: never two copies at once.
. "$(dirname "$0")/lib.sh"
need_helper ignore-term

job blk "command = {\"$HELPERS/ignore-term\", \"$T/ready\", \"fork\"}" \
	'stop_timeout = "1500ms"'
start_vigild
wait_state blk RUNNING
old=$(job_pid blk)
old_run=$(tr '\0' '\n' <"/proc/$old/environ" | sed -n 's/^VIGIL_RUN_ID=//p')
old_all=$(procs_with "VIGIL_RUN_ID=$old_run")
for p in $old_all; do track "$p"; done
kill -KILL "$VIGILD_PID"
wait "$VIGILD_PID" 2>/dev/null || true
VIGILD_PID=
# The leftovers ignore the parent-death TERM.
alive "$old" || fail "the TERM-ignoring leftover died; the test is moot"

start_vigild
# BLOCKED lasts about stop_timeout: watch for it with cheap polls first
# (the scan of /proc below can take longer than that on a busy machine).
retry 10 is_state blk BLOCKED || fail "never saw BLOCKED (state $(state blk))"
# Watch the run ids of live blk processes until a new one runs alone.
seen_blocked=1
deadline=$(($(now_ms) + $(slow_s 15) * 1000))
while :; do
	runs=$(for p in $(procs_with VIGIL_JOB=blk); do
		tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" | sed -n 's/^VIGIL_RUN_ID=//p'
	done | sort -u)
	n=$(printf '%s' "$runs" | grep -c . || true)
	[ "$n" -le 1 ] || fail "two copies at once: run ids $runs"
	st=$(state blk)
	[ "$st" = BLOCKED ] && seen_blocked=1
	if [ "$st" = RUNNING ] && [ "$n" -eq 1 ] && [ "$runs" != "$old_run" ]; then
		break
	fi
	[ "$(now_ms)" -lt "$deadline" ] || fail "no new instance (state $st)"
	sleep 0.02
done
[ "$seen_blocked" -eq 1 ] || fail "never saw BLOCKED"
for p in $old_all; do dead "$p" || fail "leftover $p still alive"; done
# By its lock and record, or (cgroup = "auto") by its cgroup.
grep -Eq "lock held by leftover pid $old|blk: its cgroup holds pid [0-9]+" "$VLOG" ||
	fail "no reclaim message"
grep -q "outlived stop_timeout, sending KILL" "$VLOG" || fail "no KILL message"
stop_vigild
log "ok"
