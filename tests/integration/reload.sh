#!/bin/bash
# Reload (vigilctl reload and SIGHUP): new jobs start, removed ones stop,
# changed ones restart, untouched ones keep their pid; --dry-run and a
# broken file change nothing.
. "$(dirname "$0")/lib.sh"

job same 'command = "sleep 1001"'
job change 'command = "sleep 1002"'
job gone 'command = "sleep 1003"'
job held 'command = "sleep 1004"'
job grow 'command = "sleep 1005"' 'instances = 2'
job broke 'command = "false"' 'max_restarts = 1' 'restart_delay = "10ms"'
start_vigild
wait_state same RUNNING
wait_state change RUNNING
wait_state gone RUNNING
wait_state grow@1 RUNNING
wait_state broke FATAL
ctl stop held >/dev/null
same=$(job_pid same) change=$(job_pid change) gone=$(job_pid gone)
g0=$(job_pid grow@0)

job new 'command = "sleep 1006"'
job change 'command = "sleep 1012"'
rm "$JOBS/gone.conf"
job held 'command = "sleep 1014"'
job grow 'command = "sleep 1005"' 'instances = 3'
job broke 'command = "sleep 1007"'

# --dry-run prints the plan and changes nothing.
ctl reload --dry-run >"$T/plan" || fail "reload --dry-run failed"
grep -qx "added: new" "$T/plan" || fail "plan: $(cat "$T/plan")"
grep -qx "changed: broke change grow held" "$T/plan" || fail "plan: $(cat "$T/plan")"
grep -qx "removed: gone" "$T/plan" || fail "plan: $(cat "$T/plan")"
grep -qx "unchanged: 1" "$T/plan" || fail "plan: $(cat "$T/plan")"
[ "$(job_pid change)" = "$change" ] && [ "$(job_pid gone)" = "$gone" ] ||
	fail "--dry-run changed something"
rc=0
ctl status new >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 4 ] || fail "--dry-run added a job"

# A broken file anywhere: errors reach the caller, nothing changes.
job zbad 'command = "sleep 1"' 'stop_signal = "NOPE"'
rc=0
ctl reload >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" -eq 1 ] || fail "reload with a broken file exited $rc"
grep -q "$JOBS/zbad.conf:2: stop_signal" "$T/err" || fail "no FILE:LINE error: $(cat "$T/err")"
grep -q "nothing changed" "$T/err" || fail "$(cat "$T/err")"
[ "$(job_pid change)" = "$change" ] && [ "$(job_pid gone)" = "$gone" ] ||
	fail "a broken reload changed something"
rm "$JOBS/zbad.conf"

ctl reload >"$T/out" || fail "reload failed"
grep -qx "added: new" "$T/out" || fail "reload output: $(cat "$T/out")"
wait_state new RUNNING
wait_state change RUNNING
[ "$(job_pid same)" = "$same" ] || fail "unchanged job was restarted"
[ "$(job_pid change)" != "$change" ] || fail "changed job kept its pid"
grep -q 1012 "/proc/$(job_pid change)/cmdline" || fail "changed job runs the old command"
dead "$change" || fail "old process of the changed job is alive"
retry 5 dead "$gone" || fail "removed job still runs"
wait_gone() { ! ctl status gone >/dev/null 2>&1; }
retry 5 wait_gone || fail "removed job still listed"
wait_state grow@2 RUNNING
[ "$(job_pid grow@0)" = "$g0" ] || fail "grow@0 was restarted: only instances changed"
is_state held STOPPED || fail "an operator-stopped job was started by reload"
wait_state broke RUNNING
grep -q 1007 "/proc/$(job_pid broke)/cmdline" || fail "fixed FATAL job did not restart"

# The operator's stop outlives further reloads.
job held 'command = "sleep 1024"'
ctl reload >/dev/null || fail "second reload failed"
wait_state change RUNNING
is_state held STOPPED || fail "a second reload started the operator-stopped job"
# A reload that adds one job and changes another never shows a stranger
# holding a lock (a child between fork and exec holds vigild's fds).
grep -q "held by a process vigild did not start" "$VLOG" &&
	fail "spurious BLOCKED: $(grep "did not start" "$VLOG")"

# A start while a changed job is still stopping waits for the new spec.
job slow "command = {\"sh\", \"-c\", \"trap 'sleep 0.5; exit 0' TERM; while :; do sleep 0.05; done\"}"
ctl reload >/dev/null
wait_state slow RUNNING
job slow "command = {\"sh\", \"-c\", \"trap 'sleep 0.5; exit 0' TERM; while :; do sleep 0.06; done\"}"
ctl reload >/dev/null
ctl start slow >"$T/out" 2>&1 || fail "start during a reload swap failed: $(cat "$T/out")"
is_state slow RUNNING || fail "slow is $(state slow)"
grep -q "0.06" "/proc/$(job_pid slow)/cmdline" || fail "slow runs the old command"

# SIGHUP does the same.
same=$(job_pid same)
job same 'command = "sleep 1011"'
kill -HUP "$VIGILD_PID"
is_new() { p=$(job_pid same 2>/dev/null) && [ "$p" != "$same" ] && grep -q 1011 "/proc/$p/cmdline"; }
retry 10 is_new || fail "SIGHUP did not apply the change"
stop_vigild
log "ok"
