#!/bin/bash
# Every vigilctl verb and every exit code: 0 ok, 1 failed, 2 usage,
# 3 not running, 4 no such job, 69 vigild unreachable.
# vigilctl is the subject: LeakSanitizer checks it too (lib.sh).
VIGIL_CTL_LEAKS=1
. "$(dirname "$0")/lib.sh"

job a "command = {\"sh\", \"-c\", \"trap 'echo usr1 >> $T/usr1' USR1; while :; do sleep 0.05; done\"}"
job many 'command = "sleep 1000"' 'instances = 2'
job off 'command = "sleep 1000"' 'autostart = false'
job crash 'command = "false"' 'autostart = false' 'restart_delay = "5s"'

# rc EXPECTED COMMAND...: run a vigilctl command, check its exit code.
rc() {
	local want=$1 got=0
	shift
	ctl "$@" >"$T/out" 2>"$T/err" || got=$?
	[ "$got" -eq "$want" ] ||
		fail "vigilctl $* exited $got, expected $want: $(cat "$T/out" "$T/err")"
}

rc 69 status
grep -q "cannot reach vigild at $SOCK: No such file or directory; is vigild running?" "$T/err" ||
	fail "unclear message when unreachable: $(cat "$T/err")"

start_vigild
wait_state a RUNNING
wait_state many@1 RUNNING

rc 0 ping
grep -qx pong "$T/out" || fail "ping"
rc 0 version
grep -q "^vigild [0-9]" "$T/out" || fail "version"
"$VIGILCTL" --version | grep -q "^vigilctl [0-9]" || fail "vigilctl --version"
"$VIGILD" --version | grep -q "^vigild [0-9]" || fail "vigild --version"
"$VIGILCTL" --help | grep -q "^usage: vigilctl" || fail "vigilctl --help"
# --help lists every verb of vigild's table, each line as list-commands
# prints it (issue 17: history, tail, logrotate, kick were missing).
"$VIGILCTL" --help >"$T/help"
rc 0 list-commands
[ "$(grep -c . "$T/out")" -ge 20 ] || fail "list-commands is short"
while IFS= read -r line; do
	grep -qxF "  $line" "$T/help" || fail "vigilctl --help lacks: $line"
done <"$T/out"
"$VIGILD" --help | grep -q "^usage: vigild" || fail "vigild --help"

# status: all, named, detail, exit 3 and 4.
rc 0 status
[ "$(grep -c . "$T/out")" -eq 6 ] || fail "status shows $(grep -c . "$T/out") lines"
rc 0 status a
rc 0 st a
rc 3 status off
rc 3 status a off
rc 4 status nosuch
grep -q "nosuch: no such job" "$T/err" || fail "no such job message"
rc 4 status many@2
rc 0 status many@0

# pid
rc 0 pid
[ "$(cat "$T/out")" = "$VIGILD_PID" ] || fail "pid of vigild"
rc 0 pid a
alive "$(cat "$T/out")" || fail "pid a"
rc 3 pid off
rc 4 pid nosuch
# One job: bare pids (scripts use them); several targets or all: NAME PID,
# "-" for none (issue 17).
rc 0 pid many
grep -qxE '[0-9]+' "$T/out" && [ "$(grep -c . "$T/out")" -eq 2 ] ||
	fail "pid many: $(cat "$T/out")"
rc 0 pid a many@1
[ "$(cat "$T/out")" = "a $(job_pid a)
many@1 $(job_pid many@1)" ] || fail "pid a many@1: $(cat "$T/out")"
rc 3 pid all
grep -qxE "a [0-9]+" "$T/out" && grep -qxE "many@0 [0-9]+" "$T/out" &&
	grep -qx "off -" "$T/out" || fail "pid all: $(cat "$T/out")"
rc 3 pid a off
rc 4 pid a nosuch

# signal
rc 0 signal USR1 a
retry 5 test -s "$T/usr1" || fail "USR1 did not reach a"
rc 0 kill SIGUSR1 a
rc 2 signal NOSUCHSIG a
rc 1 signal TERM off
rc 4 signal TERM nosuch

# start, stop, restart; job@N; --no-wait; all
rc 0 start off
is_state off RUNNING || fail "start returned before RUNNING"
[ "$(cat "$T/out")" = "off: started" ] || fail "start printed: $(cat "$T/out")"
p=$(job_pid many@1)
rc 0 stop many@1
[ "$(cat "$T/out")" = "many@1: stopped" ] || fail "stop printed: $(cat "$T/out")"
dead "$p" || fail "stop returned while many@1 alive"
is_state many@0 RUNNING || fail "stop many@1 touched many@0"
rc 0 stop --no-wait many@0
[ ! -s "$T/out" ] || fail "stop --no-wait printed: $(cat "$T/out")"
wait_state many@0 STOPPED
rc 0 restart many
printf 'many@0: started\nmany@1: started\n' | cmp -s - "$T/out" ||
	fail "restart printed: $(cat "$T/out")"
is_state many@0 RUNNING && is_state many@1 RUNNING || fail "restart many"
p=$(job_pid a)
rc 0 restart --quiet a
[ ! -s "$T/out" ] || fail "restart --quiet printed: $(cat "$T/out")"
[ "$(job_pid a)" != "$p" ] || fail "restart kept the pid"
dead "$p" || fail "old a still alive"
rc 1 start crash
grep -q "crash: BACKOFF: exit 1" "$T/err" || fail "start of a crashing job: $(cat "$T/err")"
[ ! -s "$T/out" ] || fail "a failed start printed: $(cat "$T/out")"
rc 0 stop crash
rc 4 start nosuch
rc 4 stop a nosuch
is_state a RUNNING || fail "a stopped although another target was bad"
rc 0 stop all
for j in a many@0 many@1 off; do is_state "$j" STOPPED || fail "$j not stopped"; done
rc 0 start a

# wait
rc 0 wait a
rc 0 wait --state stopped off
rc 1 wait --state STOPPED --timeout 200ms a
grep -q "a: timed out (state is RUNNING)" "$T/err" || fail "wait timeout message"
rc 2 wait --state NOPE a
rc 2 wait --timeout soon a
rc 4 wait nosuch
( ctl wait --timeout 10s off >"$T/w.out" 2>&1; echo $? >"$T/w.rc" ) &
w=$!
ctl start --no-wait off >/dev/null
wait "$w"
[ "$(cat "$T/w.rc")" = 0 ] || fail "wait did not return 0 once off ran: $(cat "$T/w.out")"

# options may follow the job names; flags take no value
rc 0 wait a --state RUNNING --timeout 5s
rc 0 stop off --no-wait
wait_state off STOPPED
rc 2 stop --no-wait=yes a
grep -q "takes no value" "$T/err" || fail "flag with a value accepted"
rc 0 start -- off
is_state off RUNNING || fail "start -- off"

# usage errors
rc 2 nosuchcommand
rc 2 s a
grep -q "ambiguous command" "$T/err" || fail "ambiguous prefix"
rc 0 stat a
rc 2 start
rc 2 stop --bogus a
rc=0
"$VIGILCTL" >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "vigilctl without a command exited $rc"
rc=0
"$VIGILCTL" --bogus status >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "vigilctl --bogus exited $rc"

# list-commands names every verb
rc 0 list-commands
for v in list-commands pid ping reload restart shutdown signal start status stop version wait; do
	grep -q "^$v" "$T/out" || fail "list-commands lacks $v"
done

# shutdown waits until every job is gone, then vigild exits 0.
a=$(job_pid a)
rc 0 shutdown
dead "$a" || fail "a alive after shutdown returned"
rc=0
wait "$VIGILD_PID" || rc=$?
VIGILD_PID=
[ "$rc" -eq 0 ] || fail "vigild exited $rc after shutdown"
log "ok"
