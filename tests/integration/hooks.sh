#!/bin/bash
# on_failure and on_event (issue 23): a run that fails runs the job's
# on_failure (with alert_repeat = "0": each failed run; alerts.sh has the
# transitions of the default) with its variables (exit status or signal,
# instance, run id),
# into the job's log after a marker; FATAL and a dead queue message are
# events too; a stop asked for is not; hooks of one job never overlap and
# keep their order; a hook that hangs is killed at hook_timeout and the
# job goes on; vigil.conf's on_event sees every state change.
. "$(dirname "$0")/lib.sh"

cat >"$T/vigil.conf" <<EOF
on_event = {"sh", "-c", "echo \"\$VIGIL_JOB \$VIGIL_FROM \$VIGIL_TO \${VIGIL_EXIT_STATUS:-\${VIGIL_EXIT_SIGNAL:--}}\" >>$T/events"}
EOF
# rec NAME: an on_failure that appends its variables to $T/NAME.env.
rec() {
	printf 'on_failure = {"sh", "-c", "env | grep ^VIGIL_ | sort >>%s; echo hook says hello; echo -- >>%s"}' \
		"$T/$1.env" "$T/$1.env"
}
job crash 'alert_repeat = "0"' 'command = "sh -c \"exit 3\""' 'restart_delay = "30s"' "$(rec crash)"
job fatal 'alert_repeat = "0"' 'command = "false"' 'max_restarts = 1' 'restart_delay = "50ms"' \
	"on_failure = {\"sh\", \"-c\", \"echo \$VIGIL_EVENT >>$T/fatal.events\"}"
job killed 'alert_repeat = "0"' 'command = "sleep 100000"' 'restart_delay = "30s"' "$(rec killed)"
job hang 'alert_repeat = "0"' 'command = "false"' 'restart_delay = "30s"' \
	'on_failure = "sleep 100000"' 'hook_timeout = "500ms"'
# Each hook takes 200ms; five failures come faster than that.
job serial 'alert_repeat = "0"' 'command = "false"' 'max_restarts = 4' 'restart_delay = "10ms"' \
	'restart_delay_max = "10ms"' \
	"on_failure = {\"sh\", \"-c\", \"echo start \$(date +%s%N) \$VIGIL_EVENT >>$T/serial; sleep 0.2; echo end \$(date +%s%N) >>$T/serial\"}"
job q 'alert_repeat = "0"' 'kind = "queue"' 'command = "sh -c \"cat >/dev/null; exit 4\""' \
	'max_attempts = 1' "$(rec q)"
job ev 'command = "sleep 100000"' 'autostart = false'
# A periodic run stopped at its timeout has failed.
job slow 'alert_repeat = "0"' 'kind = "periodic"' 'every = "1h"' 'command = "sleep 100000"' \
	'timeout = "200ms"' "$(rec slow)"
start_vigild

# count_is N PATTERN FILE: FILE has N lines matching PATTERN (retry-able:
# evaluated at each try).
count_is() { test "$(grep -c -- "$2" "$3" 2>/dev/null)" = "$1"; }
# content_is FILE TEXT: FILE holds TEXT.
content_is() { test "$(cat "$1" 2>/dev/null)" = "$2"; }

# crash: exit 3, one failure, its variables.
retry 10 grep -q -- '--' "$T/crash.env" 2>/dev/null || fail "crash: no on_failure; log: $(tail "$VLOG")"
check "crash: VIGIL_EVENT=failed" grep -qx 'VIGIL_EVENT=failed' "$T/crash.env"
check "crash: VIGIL_JOB" grep -qx 'VIGIL_JOB=crash' "$T/crash.env"
check "crash: VIGIL_INSTANCE" grep -qx 'VIGIL_INSTANCE=0' "$T/crash.env"
check "crash: VIGIL_EXIT_STATUS=3" grep -qx 'VIGIL_EXIT_STATUS=3' "$T/crash.env"
check "crash: no signal" sh -c "! grep -q VIGIL_EXIT_SIGNAL '$T/crash.env'"
run=$(ctl --json history crash | sed -n 's/.*"run_id":"\([0-9a-f]*\)".*/\1/p' | tail -n 1)
check "crash: the failed run's id" grep -qx "VIGIL_RUN_ID=$run" "$T/crash.env"
check "crash: output in the job's log" retry 5 grep -q 'hook says hello' "$LOGS/crash.log"
check "crash: a marker before it" grep -q 'vigil: on_failure: pid [0-9]* (failed)' "$LOGS/crash.log"
check "crash: the job goes on" is_state crash BACKOFF

# fatal: max_restarts = 1: two failed runs, then FATAL, in that order.
wait_state fatal FATAL
check "fatal: failed, failed, fatal" retry 5 content_is "$T/fatal.events" "$(printf 'failed\nfailed\nfatal')"

# killed: kill -9 is a failure, with the signal's name; a stop asked for
# by the operator is not (the next event's file has only the kill).
wait_state killed RUNNING
ctl stop killed >/dev/null || fail "stop killed"
ctl start killed >/dev/null || fail "start killed"
p=$(job_pid killed)
track "$p"
kill -KILL "$p"
retry 10 grep -q -- '--' "$T/killed.env" 2>/dev/null || fail "killed: no on_failure"
check "killed: VIGIL_EXIT_SIGNAL=KILL" grep -qx 'VIGIL_EXIT_SIGNAL=KILL' "$T/killed.env"
check "killed: no exit status" sh -c "! grep -q VIGIL_EXIT_STATUS '$T/killed.env'"
check "killed: the stop ran no hook" count_is 1 -- "$T/killed.env"

# hang: killed at hook_timeout, logged; the job is untouched.
retry 10 grep -q 'vigil: on_failure: pid' "$LOGS/hang.log" || fail "hang: no hook"
hp=$(sed -n 's/.*vigil: on_failure: pid \([0-9]*\) .*/\1/p' "$LOGS/hang.log" | head -n 1)
check "hang: the hook is killed" retry 5 dead "$hp"
check "hang: said in vigild's log" grep -q "hang: on_failure: pid $hp still running after hook_timeout (500ms): killing it" "$VLOG"
check "hang: said in the job's log" grep -q "on_failure: pid $hp still running after hook_timeout" "$LOGS/hang.log"
check "hang: the job goes on" is_state hang BACKOFF

# serial: seven events, never two hooks at once, in order.
wait_state serial FATAL
retry 10 count_is 7 '^end' "$T/serial" ||
	fail "serial: $(cat "$T/serial" 2>/dev/null)"
check "serial: failed x5 (a crash loop from the second) then fatal" test "$(awk '/^start/ { print $3 }' "$T/serial" | tr '\n' ' ')" = "failed failed crash-loop failed failed failed fatal "
# shellcheck disable=SC2016 # awk's own $2
check "serial: no overlap" awk '
	/^start/ { if (open) bad = 1; open = 1; if ($2 < last) bad = 1 }
	/^end/ { open = 0; last = $2 }
	END { exit bad }' "$T/serial"

# q: a message that fails at its only attempt: failed, then dead.
id=$(ctl enqueue q hello) || fail "enqueue"
retry 10 count_is 2 -- "$T/q.env" || fail "q: $(cat "$T/q.env" 2>/dev/null)"
check "q: failed then dead" test "$(grep VIGIL_EVENT "$T/q.env" | tr '\n' ' ')" = "VIGIL_EVENT=failed VIGIL_EVENT=dead "
check "q: the message id" count_is 2 "^VIGIL_MESSAGE_ID=$id\$" "$T/q.env"
check "q: exit status 4" grep -qx 'VIGIL_EXIT_STATUS=4' "$T/q.env"

# slow: its timeout ended it: failed, with the signal.
ctl start --no-wait slow >/dev/null || fail "start slow"
retry 10 grep -q -- '--' "$T/slow.env" 2>/dev/null || fail "slow: no on_failure; log: $(tail "$VLOG")"
check "slow: a timeout is a failure" grep -qx 'VIGIL_EVENT=failed' "$T/slow.env"
check "slow: VIGIL_EXIT_SIGNAL=TERM" grep -qx 'VIGIL_EXIT_SIGNAL=TERM' "$T/slow.env"

# on_event: every change of ev, in order.
ctl start ev >/dev/null || fail "start ev"
ctl stop ev >/dev/null || fail "stop ev"
want=$(printf 'ev STOPPED STARTING -\nev STARTING RUNNING -\nev RUNNING STOPPING -\nev STOPPING STOPPED TERM')
ev_events() { test "$(grep '^ev ' "$T/events" 2>/dev/null)" = "$want"; }
check "on_event: ev's changes" retry 5 ev_events
# (A slow machine may see the exit before the exec is known: STARTING.)
check "on_event: crash's end" grep -Eq '^crash (STARTING|RUNNING) BACKOFF 3$' "$T/events"
check "on_event: fatal's" grep -Eq '^fatal (STARTING|RUNNING) FATAL 1$' "$T/events"

stop_vigild
checks_passed
log "hooks run on failures and state changes, one at a time, bounded"
