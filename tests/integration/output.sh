#!/bin/bash
# Job output: stdout and stderr lines reach NAME.log in the order written
# and `vigilctl tail`; ISO 8601 timestamps; instance tags; vigil's own
# lifecycle lines; logrotate/SIGUSR2 reopen the file; journal jobs; bad
# log options are FILE:LINE errors.
. "$(dirname "$0")/lib.sh"
need_helper ignore-term

# Writes on both streams, then waits to be told to go on and exits 3.
job talk 'command = {"sh", "-c", "echo out-1; echo err-1 >&2; echo out-2; printf partial; while [ ! -e '"$T"'/go ]; do sleep 0.05; done; echo \" end\"; exit 3"}' \
	'log_timestamps = true' 'restart = "never"'
# shellcheck disable=SC2016 # $VIGIL_INSTANCE is for the job's shell
job multi 'command = {"sh", "-c", "echo hello-$VIGIL_INSTANCE; exec sleep 1000"}' \
	'instances = 2'
job stubborn "command = {\"$HELPERS/ignore-term\"}" 'stop_timeout = "300ms"'
job quiet 'command = {"sh", "-c", "echo secret; exec sleep 1000"}' \
	'stdout = "null"' 'stderr = "null"'
job jour 'command = {"sh", "-c", "echo to-journal-$$; exec sleep 1000"}' \
	'stdout = "journal"' 'stderr = "journal"'
start_vigild
wait_state multi RUNNING
L=$LOGS/talk.log

# Both streams, in order, with timestamps; the unfinished line waits.
retry 10 grep -q ' out-2$' "$L" || fail "no output in $L: $(cat "$L" 2>/dev/null)"
grep -v ' vigil: ' "$L" | sed 's/^[^ ]* //' >"$T/plain"
printf 'out-1\nerr-1\nout-2\n' | cmp -s - "$T/plain" ||
	fail "stdout/stderr lines not as written: $(cat "$T/plain")"
grep -q partial "$L" && fail "an unfinished line was written before its newline"
while read -r ts _; do
	[[ $ts =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}[+-][0-9]{2}:[0-9]{2}$ ]] ||
		fail "not an ISO 8601 time with milliseconds: $ts"
	secs=$(date -d "$ts" +%s) || fail "date cannot parse $ts"
	[ $((secs - $(date +%s))) -le 5 ] && [ $(($(date +%s) - secs)) -le 60 ] ||
		fail "time $ts is not now"
done <"$L"

# The start marker names the pid and the run id the job got.
pid=$(job_pid talk)
grep -q " vigil: started pid $pid run [0-9a-f]\{16\}\$" "$L" ||
	fail "no start marker for pid $pid: $(cat "$L")"
run=$(sed -n 's/.* vigil: started pid [0-9]* run \([0-9a-f]*\)$/\1/p' "$L")
tr '\0' '\n' <"/proc/$pid/environ" | grep -qx "VIGIL_RUN_ID=$run" ||
	fail "marker run id $run is not the job's VIGIL_RUN_ID"

# The exit marker comes after the run's last line (the end of the partial).
touch "$T/go"
wait_state talk EXITED
retry 5 grep -q ' vigil: pid [0-9]* exited 3 after ' "$L" ||
	fail "no exit marker: $(cat "$L")"
tail -n 2 "$L" | head -n 1 | grep -q ' partial end$' ||
	fail "partial line or order wrong: $(tail -n 3 "$L")"

# tail: the last lines, -n, and JSON.
ctl tail talk >"$T/t1" || fail "tail failed"
tail -n 10 "$L" | cmp -s - "$T/t1" || fail "tail differs from the file's last 10 lines"
ctl tail -n 2 talk >"$T/t2"
[ "$(wc -l <"$T/t2")" -eq 2 ] && tail -n 2 "$L" | cmp -s - "$T/t2" ||
	fail "tail -n 2: $(cat "$T/t2")"
[ -z "$(ctl tail -n 0 talk)" ] || fail "tail -n 0 printed lines"
ctl --json tail -n 3 talk | jq -e --arg f "$L" '.job == "talk" and .file == $f and (.lines | length) == 3' >/dev/null ||
	fail "tail --json: $(ctl --json tail -n 3 talk)"
rc=0
ctl --json tail -f talk >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "--json tail -f: exit $rc, want 2"
rc=0
ctl tail nosuch >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 4 ] || fail "tail of an unknown job: exit $rc, want 4"
rc=0
ctl tail -n -1 talk >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "tail -n -1: exit $rc, want 2"

# Instances share the file, each line tagged.
ML=$LOGS/multi.log
retry 10 grep -qx 'multi@0: hello-0' "$ML" || fail "no tagged line for multi@0: $(cat "$ML")"
retry 10 grep -qx 'multi@1: hello-1' "$ML" || fail "no tagged line for multi@1: $(cat "$ML")"
grep -q '^multi@1: vigil: started pid ' "$ML" || fail "markers not tagged: $(cat "$ML")"

# Stop markers: stopping, then SIGKILL after stop_timeout.
wait_state stubborn RUNNING
ctl stop stubborn >/dev/null || fail "stop stubborn failed"
SL=$LOGS/stubborn.log
grep -Eq ' *vigil: stopping: sending TERM to (process group |its cgroup)' "$SL" ||
	fail "no stopping marker: $(cat "$SL")"
grep -q 'vigil: still running after stop_timeout (300ms): sending KILL' "$SL" ||
	fail "no kill marker: $(cat "$SL")"
grep -q 'vigil: pid [0-9]* stopped by operator (signal KILL after stop_timeout) after ' "$SL" ||
	fail "no end marker: $(cat "$SL")"

# null: nothing is written, and tail says so.
wait_state quiet RUNNING
[ ! -s "$LOGS/quiet.log" ] || fail "stdout = null wrote $(cat "$LOGS/quiet.log")"
rc=0
ctl tail quiet >/dev/null 2>"$T/err" || rc=$?
[ "$rc" -eq 1 ] && grep -q 'not captured' "$T/err" || fail "tail of a null job: exit $rc, $(cat "$T/err")"

# journal: straight to journald, or to the file with a warning without it.
wait_state jour RUNNING
if [ -S /run/systemd/journal/stdout ]; then
	rc=0
	ctl tail jour >/dev/null 2>"$T/err" || rc=$?
	[ "$rc" -eq 1 ] && grep -q 'journalctl -t jour' "$T/err" ||
		fail "tail of a journal job: exit $rc, $(cat "$T/err")"
	grep -q to-journal "$LOGS/jour.log" 2>/dev/null && fail "journal output also in the file"
else
	retry 10 grep -q '^to-journal-' "$LOGS/jour.log" ||
		fail "no journald and no fallback to the file"
	grep -q 'jour: journal not available' "$VLOG" || fail "no fallback warning"
	ctl tail jour | grep -q '^to-journal-' || fail "tail of the fallback file"
fi

# logrotate: the file is reopened; later lines go to a new NAME.log.
mv "$ML" "$ML.old"
ctl restart multi@0 >/dev/null
grep -q 'hello-0' "$ML.old" || fail "lines before the rotation are lost"
[ "$(grep -c 'hello-0' "$ML.old")" -eq 2 ] || fail "no reopen: new lines still go to the moved file"
ctl logrotate | grep -q '^reopened [0-9]* log files$' || fail "logrotate printed nothing"
ctl restart multi@1 >/dev/null
retry 10 grep -qx 'multi@1: hello-1' "$ML" || fail "no new $ML after logrotate"
# SIGUSR2 does the same.
mv "$ML" "$ML.old2"
kill -USR2 "$VIGILD_PID"
retry 10 grep -q 'reopening log files' "$VLOG" || fail "no USR2 in the log"
ctl restart multi@0 >/dev/null
retry 10 grep -qx 'multi@0: hello-0' "$ML" || fail "no new $ML after SIGUSR2"
grep -q 'hello-0' "$ML.old2" && fail "line written to the file moved away after SIGUSR2"

# Bad log options: FILE:LINE errors, nothing started.
mkdir "$T/bad"
printf 'command = "true"\nlog_max_size = "100"\n' >"$T/bad/x.conf"
printf 'command = "true"\nlog_keep = -1\n' >"$T/bad/y.conf"
printf 'command = "true"\nstdout = "syslog"\n' >"$T/bad/z.conf"
rc=0
"$VIGILD" -c "$T/vigil.conf" -j "$T/bad" --check >"$T/check" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "--check of bad log options: exit $rc"
grep -q 'x.conf:2: log_max_size: ' "$T/check" || fail "no error for log_max_size: $(cat "$T/check")"
grep -q 'y.conf:2: log_keep: ' "$T/check" || fail "no error for log_keep: $(cat "$T/check")"
grep -q 'z.conf:2: stdout: ' "$T/check" || fail "no error for stdout: $(cat "$T/check")"

stop_vigild
log "ok"
