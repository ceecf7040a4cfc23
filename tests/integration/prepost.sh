#!/bin/bash
# exec_start_pre, exec_start_post, exec_stop_post (issue 20): the pre
# command runs first, as the job, into its log; the command starts only
# once it exited 0; a failing or hanging pre command is a failed start
# (backoff) and the command never runs; the post-start command runs once
# RUNNING; the post-stop command runs after every end of the run, a
# kill -9 included, and after a failed pre command.
. "$(dirname "$0")/lib.sh"

job app "exec_start_pre = {\"sh\", \"-c\", \"echo migrating; touch $T/migrated\"}" \
	"command = {\"sh\", \"-c\", \"[ -e $T/migrated ] || exit 3; exec sleep 100000\"}" \
	"exec_start_post = {\"sh\", \"-c\", \"echo warming; touch $T/warm\"}" \
	"exec_stop_post = {\"sh\", \"-c\", \"echo cleaning; echo x >>$T/cleaned\"}" \
	'restart_delay = "50ms"'
job badpre 'exec_start_pre = "false"' "command = {\"touch\", \"$T/badpre-ran\"}" \
	"exec_stop_post = {\"touch\", \"$T/badpre-cleaned\"}" \
	'restart_delay = "30s"'
job slowpre 'exec_start_pre = "sleep 100000"' 'command = "sleep 100000"' \
	'stop_timeout = "300ms"' 'restart_delay = "30s"'
job held 'exec_start_pre = "sleep 100000"' 'command = "sleep 100000"' \
	'autostart = false'
start_vigild

# app: pre, then the command, then the post-start command.
wait_state app RUNNING
[ -e "$T/migrated" ] || fail "app RUNNING without its pre command"
retry 5 test -e "$T/warm" || fail "exec_start_post did not run"
L=$LOGS/app.log
retry 5 grep -q 'warming' "$L" || fail "no post-start output in the log: $(cat "$L")"
grep -q 'vigil: exec_start_pre: pid' "$L" || fail "no pre marker: $(cat "$L")"
grep -q '^.*migrating$' "$L" || fail "no pre output: $(cat "$L")"
grep -q 'vigil: exec_start_post: pid' "$L" || fail "no post-start marker"
# The pre command's line comes before the command's start.
pre_line=$(grep -n 'migrating' "$L" | head -n 1 | cut -d: -f1)
cmd_line=$(grep -n 'vigil: command: pid' "$L" | head -n 1 | cut -d: -f1)
[ -n "$cmd_line" ] && [ "$pre_line" -lt "$cmd_line" ] || fail "order in the log: $(cat "$L")"

# kill -9 of the command: exec_stop_post runs, then a restart with pre.
p=$(job_pid app)
track "$p"
rm -f "$T/migrated"
kill -9 "$p"
retry 5 test -e "$T/cleaned" || fail "exec_stop_post did not run after kill -9"
retry 5 grep -q 'cleaning' "$L" || fail "no post-stop output"
wait_state app RUNNING
[ "$(job_pid app)" != "$p" ] || fail "app was not restarted"
[ -e "$T/migrated" ] || fail "the restart did not run the pre command again"
# A stop runs it too.
ctl stop app >/dev/null || fail "stop app"
cleaned_twice() { test "$(wc -l <"$T/cleaned")" -eq 2; }
retry 5 cleaned_twice || fail "exec_stop_post did not run after stop"
is_state app STOPPED || fail "app is $(state app) after stop"

# badpre: a failed start, the command never ran, post-stop ran.
wait_state badpre BACKOFF
ctl status badpre | grep -q 'reason: exec_start_pre exited 1' ||
	fail "badpre: $(ctl status badpre)"
ctl history badpre | grep -q 'failed to start: exec_start_pre exited 1' ||
	fail "badpre history: $(ctl history badpre)"
[ ! -e "$T/badpre-ran" ] || fail "the command ran after a failed pre command"
retry 5 test -e "$T/badpre-cleaned" || fail "no exec_stop_post after a failed pre command"

# slowpre: killed after stop_timeout, a failed start.
wait_state slowpre BACKOFF
ctl status slowpre | grep -q 'exec_start_pre still running after stop_timeout' ||
	fail "slowpre: $(ctl status slowpre)"

# A stop while the pre command runs: STOPPED, not a failure.
ctl start --no-wait held >/dev/null || fail "start held"
retry 5 grep -q 'held: started pid' "$VLOG" || fail "held did not start"
ctl stop held >/dev/null || fail "stop held"
is_state held STOPPED || fail "held is $(state held)"
ctl status held | grep -q 'failed to start' && fail "a stop in pre was a failed start: $(ctl status held)"
stop_vigild
