#!/bin/bash
# stdin = "pipe": the job's stdin is a pipe whose write end vigild holds
# while the run goes, so a worker that reads stdin never sees EOF and keeps
# running; the default, /dev/null, gives EOF at once.  The write end goes
# with the run: vigild's descriptors stay flat over restarts.  A queue job
# (whose stdin is the message) cannot have it: FILE:LINE error.
. "$(dirname "$0")/lib.sh"

reader="command = {\"sh\", \"-c\", \"read x; echo got-eof; exit 1\"}"
job piped "$reader" 'stdin = "pipe"'
job plain "$reader" 'restart = "never"'
job explicit "$reader" 'stdin = "null"' 'restart = "never"'
mkdir -p "$T/bad"
printf 'kind = "queue"\ncommand = "cat"\nstdin = "pipe"\n' >"$T/bad/q.conf"
printf 'command = "cat"\nstdin = "socket"\n' >"$T/bad/w.conf"

rc=0
"$VIGILD" -t -c "$T/vigil.conf" -j "$T/bad" >"$T/check.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "--check accepted stdin = \"pipe\" for a queue job"
grep -q "$T/bad/q.conf:3: stdin: .*queue" "$T/check.out" ||
	fail "no FILE:LINE error for a queue job's stdin: $(cat "$T/check.out")"
grep -q "$T/bad/w.conf:2: stdin" "$T/check.out" ||
	fail "no FILE:LINE error for a bad stdin word: $(cat "$T/check.out")"

start_vigild
# The default: EOF at once, the run ends.
wait_state plain EXITED
wait_state explicit EXITED
grep -q got-eof "$LOGS/plain.log" || fail "plain did not see EOF"
grep -q got-eof "$LOGS/explicit.log" || fail "explicit did not see EOF"

# A pipe: no EOF, it keeps running past min_uptime.
wait_state piped RUNNING
p=$(job_pid piped)
ctl wait --timeout 5s piped >/dev/null || fail "piped is $(state piped)"
sleep_until() { [ "$(now_ms)" -ge "$1" ]; }
retry 5 sleep_until $(($(now_ms) + 1500))
is_state piped RUNNING || fail "piped is $(state piped)"
[ "$(job_pid piped)" = "$p" ] || fail "piped was restarted"
pipe=$(readlink "/proc/$p/fd/0")
case $pipe in
pipe:*) ;;
*) fail "piped's stdin is $pipe" ;;
esac
! grep -q got-eof "$LOGS/piped.log" || fail "piped saw EOF"
# holds PIPE: vigild has a descriptor of that pipe (its write end).
holds() {
	local f
	for f in "/proc/$VIGILD_PID"/fd/*; do
		[ "$(readlink "$f")" != "$1" ] || return 0
	done
	return 1
}
holds "$pipe" || fail "vigild does not hold the write end of $pipe"

# No descriptor of vigild is left behind by a run: restarts keep the count.
fds() { find "/proc/$VIGILD_PID/fd" -mindepth 1 -maxdepth 1 | wc -l; }
ctl restart piped >/dev/null || fail "restart piped failed"
before=$(fds)
for _ in 1 2 3 4 5; do
	ctl restart piped >/dev/null || fail "restart piped failed"
done
# A descriptor can be open for a moment (a control connection vigild has
# not yet seen close, a file valgrind reads): the count must come back, a
# leak never does.
fds_at_most() { [ "$(fds)" -le "$1" ]; }
retry 10 fds_at_most "$before" ||
	fail "vigild's descriptors grew from $before to $(fds): $(ls -l "/proc/$VIGILD_PID/fd")"
! holds "$pipe" || fail "vigild still holds $pipe of an ended run"
# A stop closes the write end of the run's pipe.
q=$(job_pid piped)
pipe=$(readlink "/proc/$q/fd/0")
ctl stop piped >/dev/null || fail "stop piped failed"
dead "$q" || fail "piped outlived its stop"
! holds "$pipe" || fail "vigild still holds $pipe after the stop"
stop_vigild
