#!/bin/bash
# Periodic jobs: a run that outlasts its interval never overlaps the next
# (the slot is skipped and recorded); a run that always times out is
# killed and the job keeps firing; catch_up runs once after a restart that
# missed a slot; start runs it now; stop pauses it, across restarts too;
# status shows the next run; bad schedules are FILE:LINE errors.
. "$(dirname "$0")/lib.sh"

# Every second, 1.6 s long.  Each run marks itself in $T/running; a second
# copy at once would find the mark and say so in $T/overlap.
job slow 'kind = "periodic"' 'every = "1s"' \
	"command = {\"sh\", \"-c\", \"mkdir $T/running 2>/dev/null || echo overlap >>$T/overlap; sleep 1.6; rmdir $T/running\"}"
job tmo 'kind = "periodic"' 'every = "700ms"' 'timeout = "200ms"' \
	'stop_timeout = "200ms"' 'command = "sleep 30"'
job hourly 'kind = "periodic"' 'schedule = "@hourly"' 'command = "true"'
job paused 'kind = "periodic"' 'every = "500ms"' 'autostart = false' \
	"command = {\"sh\", \"-c\", \"echo x >>$T/paused-runs\"}"
start_vigild

# history_count JOB REASON: rows of the job's history whose reason starts
# with REASON ("exited" for "exited 0").
history_count() { ctl --json history -n 1000 "$1" | jq --arg r "$2" '[.runs[] | select((.reason // "") | startswith($r))] | length'; }
at_least() { [ "$(history_count "$1" "$2")" -ge "$3" ]; }
# lines_over FILE N: FILE has more than N lines.
lines_over() { [ "$(wc -l <"$1" 2>/dev/null || echo 0)" -gt "$2" ]; }
time_reached() { [ "$(date +%s)" -ge "$1" ]; }

# Never overlap: slots are skipped and recorded while a run goes on.
retry 15 at_least slow exited 2 || fail "slow did not run twice: $(ctl history slow)"
retry 10 at_least slow skipped 2 || fail "no skipped slots recorded: $(ctl history slow)"
[ ! -e "$T/overlap" ] || fail "two runs of slow at once"
# Runs and skipped slots alternate, one run at a time: no run starts
# before the previous ended.
ctl --json history -n 1000 slow | jq -e '[.runs[] | select(.reason != "skipped")] as $r |
	[range(1; $r | length) | select($r[.].started_us < $r[. - 1].ended_us and $r[. - 1].ended_us != null)] | length == 0' >/dev/null ||
	fail "runs overlap in history: $(ctl history slow)"
grep -q 'vigil: slot skipped: pid [0-9]* is still running' "$LOGS/slow.log" ||
	fail "no skipped marker in the job's log"

# A run that always times out: killed, recorded as timeout, fires again.
retry 15 at_least tmo "timed out" 3 || fail "tmo did not time out 3 times: $(ctl history tmo)"
s=$(state tmo)
case $s in
WAITING | RUNNING | STARTING | STOPPING) ;;
*) fail "tmo is $s after timeouts" ;;
esac
ctl --json history tmo | jq -e '[.runs[] | select((.reason // "") | test("^timed out"))][0].signal == "TERM"' >/dev/null ||
	fail "a timed-out run was not ended by stop_signal: $(ctl history tmo)"
grep -q 'vigil: timeout (200ms): stopping the run' "$LOGS/tmo.log" || fail "no timeout marker"

# Status: WAITING with the next run; exit 0 for a periodic job at rest.
wait_state hourly WAITING
ctl status hourly >"$T/st" || fail "status of a WAITING periodic job exits $?"
grep -q 'next run at ' "$T/st" || fail "no next run in status: $(cat "$T/st")"
next=$(ctl --json status hourly | jq '.jobs[0].next_run_us')
want=$((($(date +%s) / 3600 + 1) * 3600 * 1000000))
[ "$next" = "$want" ] || fail "@hourly next run $next, want $want"
ctl --json status hourly | jq -e '.jobs[0].kind == "periodic"' >/dev/null || fail "no kind in JSON"

# autostart = false: paused; start runs it now and turns the schedule on.
wait_state paused STOPPED
[ ! -e "$T/paused-runs" ] || fail "a job with autostart = false ran"
ctl start paused || fail "start of a periodic job failed"
retry 5 test -e "$T/paused-runs" || fail "start did not run the job now"
retry 10 at_least paused exited 3 || fail "the schedule did not go on after start"
# stop pauses it, and it stays paused across a vigild restart.
ctl stop paused || fail "stop of a periodic job failed"
wait_state paused STOPPED
n=$(wc -l <"$T/paused-runs")
stop_vigild
start_vigild
wait_state hourly WAITING
is_state paused STOPPED || fail "paused is $(state paused) after a restart"
ctl status paused | grep -q 'stopped by uid' || fail "the operator's stop is not shown"
[ "$(wc -l <"$T/paused-runs")" -eq "$n" ] || fail "a stopped periodic job ran"
ctl start paused >/dev/null
retry 5 lines_over "$T/paused-runs" "$n" || fail "start after restart did not run it"
stop_vigild

# catch_up: a restart that missed a slot runs the job once at start-up;
# without catch_up the job waits for its next slot.
rm -f "$JOBS"/*.conf
job cu 'kind = "periodic"' 'every = "3s"' 'catch_up = true' \
	"command = {\"sh\", \"-c\", \"echo run >>$T/cu-runs\"}"
job nocu 'kind = "periodic"' 'every = "3s"' \
	"command = {\"sh\", \"-c\", \"echo run >>$T/nocu-runs\"}"
start_vigild
retry 10 test -s "$T/cu-runs" || fail "cu never ran"
retry 10 test -s "$T/nocu-runs" || fail "nocu never ran"
stop_vigild
# Let a slot pass while vigild is down (last run + 3 s).
last=$(date +%s)
retry 10 time_reached $((last + 4)) || fail "the clock did not move"

start_vigild
t0=$(now_ms)
retry 2 lines_over "$T/cu-runs" 1 || fail "catch_up did not run cu at start-up"
log "catch_up ran $(($(now_ms) - t0)) ms after start-up"
[ "$(wc -l <"$T/nocu-runs")" -eq 1 ] || fail "nocu ran at start-up without catch_up"
# Exactly one catch-up run, then the normal schedule.
[ "$(wc -l <"$T/cu-runs")" -eq 2 ] || fail "catch_up ran more than once"
stop_vigild

# Bad schedules: FILE:LINE errors from --check.
mkdir "$T/bad"
printf 'kind = "periodic"\ncommand = "true"\nschedule = "61 * * * *"\n' >"$T/bad/a.conf"
printf 'kind = "periodic"\ncommand = "true"\n' >"$T/bad/b.conf"
printf 'kind = "periodic"\ncommand = "true"\nevery = "1s"\nschedule = "@daily"\n' >"$T/bad/c.conf"
printf 'kind = "periodic"\ncommand = "true"\nschedule = "0 0 * * fry"\n' >"$T/bad/d.conf"
rc=0
"$VIGILD" -c "$T/vigil.conf" -j "$T/bad" --check >"$T/check" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "--check of bad schedules: exit $rc"
grep -q 'a.conf:3: schedule: invalid schedule "61 \* \* \* \*": minute field "61": value out of range 0-59' "$T/check" ||
	fail "no error for a.conf: $(cat "$T/check")"
grep -q 'b.conf:[0-9]*: kind: periodic job needs "every" or "schedule"' "$T/check" ||
	fail "no error for b.conf: $(cat "$T/check")"
grep -q 'c.conf:4: schedule: conflicts with "every"' "$T/check" || fail "no error for c.conf: $(cat "$T/check")"
grep -q 'd.conf:3: schedule: .*fry' "$T/check" || fail "no error for d.conf: $(cat "$T/check")"
log "ok"
