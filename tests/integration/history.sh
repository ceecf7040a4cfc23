#!/bin/bash
# state.db: a row per run with exit code or signal and a reason; retention
# at history_keep; the operator's stop and start survive a vigild restart;
# a run open when vigild was killed is recorded as lost; a corrupt or
# read-only state.db never stops supervision.  history JOB@N shows the
# runs of that instance only.
. "$(dirname "$0")/lib.sh"
need_cmd jq jq

printf 'history_keep = 50\n' >"$T/vigil.conf"
job seven 'command = {"sh", "-c", "exit 7"}' 'restart = "never"'
job victim 'command = "sleep 1000"' 'restart = "never"'
job outside 'command = "sleep 1003"' 'restart = "never"'
job many 'command = "true"' 'min_uptime = "0"' 'restart_delay = "0"'
job held 'command = "sleep 1001"'
job manual 'command = "sleep 1002"' 'autostart = false'
# (Started only for the last case: it restarts every 20 ms, and CI is
# CPU-bound, issue 43.)
job crash 'command = "false"' 'restart_delay = "10ms"' 'restart_delay_max = "20ms"' \
	'autostart = false'
job two 'command = {"sh", "-c", "exit 3"}' 'instances = 2' 'restart = "never"'
# shellcheck disable=SC2016 # the job's shell expands it
job hq 'kind = "queue"' 'command = {"sh", "-c", "cat >/dev/null; exit $((VIGIL_MESSAGE_ID % 2))"}' \
	'max_attempts = 1'
# An exec error names the path: its whole reason is kept (issue 38).
long=$T/$(printf 'd%.0s' $(seq 1 120))/cmd
job longwhy "command = \"$long\"" 'restart = "never"'
# vigild in a zone that is not UTC: times carry its offset.
TZ=IST-5:30 start_vigild
wait_state seven EXITED
wait_state victim RUNNING
ctl signal KILL victim >/dev/null
wait_state victim EXITED
wait_state outside RUNNING
kill -9 "$(job_pid outside)"
wait_state outside EXITED

retry 10 sh -c "'$VIGILCTL' -s '$SOCK' history longwhy | grep -qF 'exec $long: No such file or directory'" ||
	fail "history's reason is cut: $(ctl history longwhy)"
ctl --json history longwhy | jq -e --arg p "$long" '.runs[0].reason | endswith($p + ": No such file or directory")' >/dev/null ||
	fail "history --json's reason is cut: $(ctl --json history longwhy)"
ctl --json history seven >"$T/h.json" || fail "history seven"
jq -e '.runs | length == 1 and .[0].exit_code == 7 and .[0].signal == null
	and .[0].reason == "exited 7" and .[0].duration_s >= 0' "$T/h.json" >/dev/null ||
	fail "seven: $(cat "$T/h.json")"
ctl --json history victim | jq -e '.runs[0].signal == "KILL" and .runs[0].exit_code == null' \
	>/dev/null || fail "victim: $(ctl --json history victim)"
ctl history seven | grep -q "exit 7 .*exited 7$" || fail "history table: $(ctl history seven)"
# One description of a run's end in history, vigild's log and the job log.
ctl --json history outside | jq -e '.runs[0].reason == "killed by signal KILL"' \
	>/dev/null || fail "outside: $(ctl --json history outside)"
grep -q "outside: pid [0-9]* killed by signal KILL after " "$VLOG" ||
	fail "vigild's log line for outside: $(grep outside: "$VLOG")"
grep -q "vigil: pid [0-9]* killed by signal KILL after " "$LOGS/outside.log" ||
	fail "job log marker for outside: $(cat "$LOGS/outside.log")"

# One instance's runs (issue 17: history JOB@N failed while tail worked).
wait_state two@0 EXITED
wait_state two@1 EXITED
ctl --json history two | jq -e '[.runs[].instance] | sort == [0, 1]' >/dev/null ||
	fail "history two: $(ctl --json history two)"
ctl --json history two@1 >"$T/h1.json" 2>&1 || fail "history two@1: $(cat "$T/h1.json")"
jq -e '[.runs[].instance] == [1]' "$T/h1.json" >/dev/null ||
	fail "history two@1: $(cat "$T/h1.json")"
[ "$(ctl history two@0 | grep -c 'exited 3$')" -eq 1 ] ||
	fail "history two@0: $(ctl history two@0 2>&1)"
rc=0
ctl history two@2 >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 4 ] || fail "history two@2 exited $rc, not 4"

# Retention: ten times history_keep runs, never more than history_keep rows.
runs() { ctl status many | awk 'NR == 2 { print $5 }'; }
lots() { [ "$(runs)" -ge 500 ]; }
retry 120 lots || fail "many made only $(runs) runs"
# (A run still open is never pruned: count once the last one ended.)
ctl stop many >/dev/null
n=$(ctl --json history -n 100000 many | jq '.runs | length')
[ "$n" -eq 50 ] || fail "many has $n rows, history_keep is 50"

# The operator's intent outlives vigild.
ctl stop held >/dev/null
ctl start manual >/dev/null
ctl --json history held | jq -e '.runs[0].reason == "stopped by operator (signal TERM)"' \
	>/dev/null || fail "held: $(ctl --json history held)"
grep -q "held: pid [0-9]* stopped by operator (signal TERM) after " "$VLOG" ||
	fail "vigild's log line for held: $(grep held: "$VLOG")"
grep -q "vigil: pid [0-9]* stopped by operator (signal TERM) after " "$LOGS/held.log" ||
	fail "job log marker for held: $(cat "$LOGS/held.log")"
# The time with vigild's UTC offset, as every time shown (issue 38):
# vigild runs in another zone than UTC here.
ctl status held | grep -Eq "stopped by uid $(id -u) at [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}\+05:30\$" ||
	fail "status does not say who stopped held, and when: $(ctl status held)"
stop_vigild
start_vigild
wait_state manual RUNNING
is_state held STOPPED || fail "held was started again by a restart of vigild"
is_state many STOPPED || fail "many was started again by a restart of vigild"
ctl start held >/dev/null
stop_vigild
start_vigild
wait_state held RUNNING

# kill -9 of vigild: the open run is recorded as lost.
hp=$(job_pid held)
track "$hp"
kill -KILL "$VIGILD_PID"
wait "$VIGILD_PID" 2>/dev/null || true
VIGILD_PID=
retry 2 dead "$hp" || fail "held survived vigild"
start_vigild
wait_state held RUNNING
ctl --json history held | jq -e '[.runs[] | select(.reason == "lost")] | length >= 1' \
	>/dev/null || fail "no lost run: $(ctl --json history held)"
grep -q "recorded as lost" "$VLOG" || fail "no lost message"

# A queue job's history has the message of each run (issue 38).
m1=$(ctl enqueue hq one) && m2=$(ctl enqueue hq two) || fail "enqueue"
two_runs() { [ "$(ctl --json history hq | jq '[.runs[] | select(.ended_us != null)] | length')" -ge 2 ]; }
retry 10 two_runs || fail "hq did not run twice: $(ctl history hq)"
ctl history hq >"$T/hq"
head -n 1 "$T/hq" | grep -q '^START  *END  *DURATION EXIT  *MESSAGE  *REASON$' ||
	fail "no MESSAGE column: $(head -n 1 "$T/hq")"
for m in "$m1" "$m2"; do
	grep -Eq "(exit [01]|-) +$m +exited [01]$" "$T/hq" || fail "no run of message $m: $(cat "$T/hq")"
done
[ "$(ctl --json history hq | jq -c '[.runs[].message]')" = "[$m1,$m2]" ] ||
	fail "history --json: $(ctl --json history hq | jq -c '[.runs[].message]')"
[ "$(ctl --json history seven | jq -c '[.runs[].message] | unique')" = '[null]' ] ||
	fail "a service run has a message: $(ctl --json history seven)"
ctl history seven | head -n 1 | grep -q MESSAGE && fail "a service's history has a MESSAGE column"

# Corrupt state.db under a running vigild: crash restarts go on.
ctl start --no-wait crash >/dev/null
wait_state crash BACKOFF
dd if=/dev/zero of="$STATE/state.db" bs=4096 count=4 conv=notrunc status=none
rm -f "$STATE/state.db-wal" "$STATE/state.db-shm"
r0=$(ctl status crash | awk 'NR == 2 { print $5 }')
more() { [ "$(ctl status crash | awk 'NR == 2 { print $5 }')" -ge $((r0 + 20)) ]; }
retry 20 more || fail "crash stopped restarting after state.db was corrupted"
ctl ping >/dev/null || fail "vigild does not answer"
stop_vigild

# A corrupt state.db at start-up is moved aside.
dd if=/dev/zero of="$STATE/state.db" bs=4096 count=4 conv=notrunc status=none
rm -f "$STATE/state.db-wal" "$STATE/state.db-shm"
start_vigild
retry 5 sh -c "ls '$STATE'/state.db.corrupt-* >/dev/null 2>&1" ||
	fail "the corrupt state.db was not moved aside"
wait_state held RUNNING
stop_vigild

# A state dir vigild cannot write does not stop supervision.
printf 'not a directory\n' >"$T/file"
start_vigild --state-dir "$T/file/state"
wait_state held RUNNING
wait_state seven EXITED
rc=0
ctl history seven >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "history without state.db exited $rc"
stop_vigild
log "ok"
