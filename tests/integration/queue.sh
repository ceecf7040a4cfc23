#!/bin/bash
# shellcheck disable=SC2317 # predicates called through retry
# Queue jobs: 40 messages at concurrency 4 are all worked, never more than
# 4 at once, each payload intact on stdin with VIGIL_MESSAGE_ID and
# VIGIL_ATTEMPT; a failing message is tried exactly max_attempts times,
# then dead with its exit and output tail; a timeout is a failure; a
# delayed message waits for its time; --unique refuses a duplicate; a stop
# lets running messages finish, and one that outlives stop_timeout is
# stopped and given back without losing an attempt.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/running" "$T/out" "$T/max"
# Each run marks itself in running/ while it works: the number of marks
# it sees is at most the number of runs at once.
cat >"$T/work.sh" <<EOF
#!/bin/sh
touch "$T/running/\$VIGIL_MESSAGE_ID"
ls "$T/running" | wc -l >"$T/max/\$VIGIL_MESSAGE_ID"
cat >"$T/out/\$VIGIL_MESSAGE_ID.tmp"
echo "\$VIGIL_ATTEMPT" >"$T/out/\$VIGIL_MESSAGE_ID.attempt"
sleep 0.2
rm "$T/running/\$VIGIL_MESSAGE_ID"
mv "$T/out/\$VIGIL_MESSAGE_ID.tmp" "$T/out/\$VIGIL_MESSAGE_ID"
EOF
cat >"$T/fail.sh" <<EOF
#!/bin/sh
echo "\$VIGIL_MESSAGE_ID \$VIGIL_ATTEMPT" >>"$T/fail-runs"
echo "boom at attempt \$VIGIL_ATTEMPT"
exit 3
EOF
chmod +x "$T/work.sh" "$T/fail.sh"

job work 'kind = "queue"' 'concurrency = 4' "command = \"$T/work.sh\""
job failing 'kind = "queue"' 'max_attempts = 3' 'retry_delay = "100ms"' \
	'retry_delay_max = "200ms"' "command = \"$T/fail.sh\""
job slowq 'kind = "queue"' 'timeout = "300ms"' 'stop_timeout = "200ms"' \
	'max_attempts = 2' 'retry_delay = "100ms"' 'command = "sleep 30"'
job later 'kind = "queue"' \
	"command = {\"sh\", \"-c\", \"date +%s%N >$T/later-ran\"}"
# A drain's runs outlast the test's steps from "2 running" to the stop:
# 2 s, VIGIL_TEST_SLOW times that on a busy machine (ASan under load
# once let the first two end and two more start in between).
job drain 'kind = "queue"' 'concurrency = 2' "stop_timeout = \"$((10 * VIGIL_TEST_SLOW))s\"" \
	"command = {\"sh\", \"-c\", \"touch $T/drain-started-\$VIGIL_MESSAGE_ID; sleep $((2 * VIGIL_TEST_SLOW)); touch $T/drain-done-\$VIGIL_MESSAGE_ID\"}"
job stuck 'kind = "queue"' 'stop_timeout = "300ms"' \
	"command = {\"sh\", \"-c\", \"echo \$VIGIL_ATTEMPT >>$T/stuck-attempts; sleep 30\"}"
start_vigild

count() { ctl --json queue "$1" | jq ".queues[0].$2"; }
files_in() { find "$1" -maxdepth 1 -type f ! -name '*.tmp' ! -name '*.attempt' | wc -l; }
has_files() { [ "$(files_in "$1")" -ge "$2" ]; }
queue_is() { [ "$(count "$1" "$2")" = "$3" ]; }
exists() { [ -e "$1" ]; }
lines_at_least() { [ "$(wc -l <"$1" 2>/dev/null || echo 0)" -ge "$2" ]; }

# 40 messages at concurrency 4.
declare -A want
for i in $(seq 1 40); do
	id=$(ctl enqueue work "payload $i with spaces & 'quotes'") ||
		fail "enqueue $i failed"
	want[$id]="payload $i with spaces & 'quotes'"
done
retry 60 has_files "$T/out" 40 || fail "only $(files_in "$T/out") of 40 messages done"
for id in "${!want[@]}"; do
	[ "$(cat "$T/out/$id")" = "${want[$id]}" ] ||
		fail "message $id payload: '$(cat "$T/out/$id")', want '${want[$id]}'"
	[ "$(cat "$T/out/$id.attempt")" = 1 ] || fail "message $id attempt $(cat "$T/out/$id.attempt")"
done
most=$(cat "$T"/max/* | sort -n | tail -n 1)
[ "$most" -le 4 ] || fail "$most runs at once with concurrency 4"
[ "$most" -ge 2 ] || fail "never more than $most run at once: no parallelism"
retry 10 queue_is work available 0 || fail "work not empty: $(ctl queue work)"
[ "$(count work running)" = 0 ] || fail "messages still running: $(ctl queue work)"
[ "$(count work dead)" = 0 ] || fail "dead messages: $(ctl queue work)"
# Every run is in the history.
runs=$(ctl --json history -n 1000 work | jq '[.runs[] | select(.exit_code == 0)] | length')
[ "$runs" -ge 40 ] || fail "history has $runs successful runs of work"
log "40 messages, at most $most at once"

# Binary payload from stdin, byte for byte.
head -c 3000 /dev/urandom >"$T/blob"
id=$(ctl enqueue work - <"$T/blob") || fail "enqueue from stdin failed"
retry 10 exists "$T/out/$id" || fail "stdin message $id not worked"
cmp -s "$T/blob" "$T/out/$id" || fail "binary payload changed on its way"

# A failing message: exactly max_attempts runs, then dead.
id=$(ctl enqueue failing x) || fail "enqueue failing"
retry 15 queue_is failing dead 1 || fail "failing message not dead: $(ctl queue failing)"
[ "$(grep -c "^$id " "$T/fail-runs")" = 3 ] ||
	fail "failing message ran $(grep -c "^$id " "$T/fail-runs") times, want 3"
[ "$(grep "^$id " "$T/fail-runs" | awk '{ print $2 }' | tr '\n' ' ')" = "1 2 3 " ] ||
	fail "attempts seen: $(cat "$T/fail-runs")"
ctl --json queue --dead failing | jq -e --argjson id "$id" \
	'.messages[0].id == $id and .messages[0].attempts == 3 and .messages[0].last_exit == 3 and
	 .messages[0].last_error == null' >/dev/null ||
	fail "dead list: $(ctl --json queue --dead failing)"
# ERROR is "-" for a plain exit: LAST-EXIT says it (issue 38).
ctl queue --dead failing | awk -v id="$id" '$1 == id && $3 " " $4 == "exit 3" && $NF == "-" { ok = 1 } END { exit !ok }' ||
	fail "dead list's ERROR for a plain exit: $(ctl queue --dead failing)"
tail=$(sqlite3 "$STATE/state.db" "SELECT CAST(output AS TEXT) FROM queue WHERE id = $id")
case $tail in
*"boom at attempt 3"*) ;;
*) fail "dead message's output tail: '$tail'" ;;
esac
# queue --dead --output ID shows it without sqlite3 (issue 38): the
# output as kept on standard output, what the message was on standard
# error; --json has both.
ctl queue --dead --output "$id" failing >"$T/out.o" 2>"$T/out.e" || fail "queue --dead --output $id"
[ "$(cat "$T/out.o")" = "boom at attempt 3" ] || fail "queue --dead --output: '$(cat "$T/out.o")'"
grep -qx "failing: message $id: 3 attempts, last exit 3; payload 1 bytes; output 18 bytes (the end of its last run's)" "$T/out.e" ||
	fail "queue --dead --output, standard error: $(cat "$T/out.e")"
ctl --json queue --dead --output "$id" failing | jq -e --argjson id "$id" \
	'.id == $id and .payload_bytes == 1 and .output == "boom at attempt 3\n" and .attempts == 3' >/dev/null ||
	fail "queue --dead --output --json: $(ctl --json queue --dead --output "$id" failing)"
rc=0
ctl queue --dead --output 999999 failing >/dev/null 2>"$T/out.e" || rc=$?
[ "$rc" = 1 ] && grep -q "failing: no dead message 999999 (vigilctl queue --dead failing lists them)" "$T/out.e" ||
	fail "queue --dead --output of no such message: rc $rc: $(cat "$T/out.e")"
rc=0
ctl queue --output "$id" failing >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "queue --output without --dead: exit $rc, want 2"
# Nothing runs it again on its own.
sleep 0.5
[ "$(grep -c "^$id " "$T/fail-runs")" = 3 ] || fail "a dead message ran again"
# retry: back to work, three attempts more.
ctl retry "$id" >/dev/null || fail "retry $id failed"
retry 15 lines_at_least "$T/fail-runs" 6 || fail "retried message did not run again"
retry 15 queue_is failing dead 1 || fail "retried message not dead again"

# A timeout is a failure: stopped, retried, then dead.
ctl enqueue slowq x >/dev/null
retry 15 queue_is slowq dead 1 || fail "timed-out message not dead: $(ctl queue slowq)"
ctl --json queue --dead slowq | jq -e '.messages[0].attempts == 2 and .messages[0].last_signal == "TERM" and
	(.messages[0].last_error | test("^timed out"))' >/dev/null ||
	fail "timed-out message: $(ctl --json queue --dead slowq)"

# A delayed message runs at its time, not before.
t0=$(date +%s%N)
ctl enqueue --delay 1500ms later x >/dev/null
[ "$(count later delayed)" = 1 ] || fail "delayed message not counted as delayed: $(ctl queue later)"
# Not empty: the shell makes the file before date writes into it.
retry 10 test -s "$T/later-ran" || fail "delayed message never ran"
ran=$(cat "$T/later-ran")
[ $(((ran - t0) / 1000000)) -ge 1400 ] || fail "delayed message ran after $(((ran - t0) / 1000000)) ms"
[ $(((ran - t0) / 1000000)) -le 4000 ] || fail "delayed message ran only after $(((ran - t0) / 1000000)) ms"

# --unique: a duplicate is refused with the first id.
ctl stop later >/dev/null
id1=$(ctl enqueue --unique k1 later a)
rc=0
id2=$(ctl enqueue --unique k1 later b 2>/dev/null) || rc=$?
[ "$rc" = 1 ] || fail "duplicate enqueue exited $rc"
[ "$id2" = "$id1" ] || fail "duplicate printed '$id2', want $id1"
[ "$(count later available)" = 1 ] || fail "duplicate was queued: $(ctl queue later)"

# A stop drains: both running messages finish, the rest wait.
for i in 1 2 3 4; do ctl enqueue drain "m$i" >/dev/null; done
retry 10 queue_is drain running 2 || fail "drain did not start 2: $(ctl queue drain)"
ctl stop drain >/dev/null || fail "stop drain failed"
n=$(find "$T" -maxdepth 1 -name 'drain-done-*' | wc -l)
[ "$n" = 2 ] || fail "$n messages finished during the drain, want 2"
[ "$(count drain running)" = 0 ] || fail "running after the drain: $(ctl queue drain)"
[ "$(count drain available)" = 2 ] || fail "the waiting messages: $(ctl queue drain)"
n=$(find "$T" -maxdepth 1 -name 'drain-started-*' | wc -l)
[ "$n" = 2 ] || fail "$n messages started, none should after the stop"
ctl start drain >/dev/null
retry 15 queue_is drain available 0 || fail "drain did not finish after start"

# A drain that outlives stop_timeout: stopped, given back, attempt kept.
ctl enqueue stuck x >/dev/null
retry 10 queue_is stuck running 1 || fail "stuck did not start"
ctl stop stuck >/dev/null || fail "stop stuck failed"
[ -z "$(procs_with VIGIL_JOB=stuck)" ] || fail "stuck run still alive after stop"
[ "$(count stuck available)" = 1 ] || fail "stopped message not available: $(ctl queue stuck)"
grep -q 'stopping: letting message [0-9]* finish' "$LOGS/stuck.log" || fail "no drain marker"
ctl start stuck >/dev/null
retry 10 lines_at_least "$T/stuck-attempts" 2 || fail "stuck did not run again"
[ "$(tr '\n' ' ' <"$T/stuck-attempts")" = "1 1 " ] ||
	fail "attempts of a stopped message: $(cat "$T/stuck-attempts")"
# A reload that changes a queue job drains it and starts the new slots.
job work 'kind = "queue"' 'concurrency = 2' "command = \"$T/work.sh\""
ctl reload >/dev/null || fail "reload failed"
wait_state work@1 WAITING
id=$(ctl enqueue work after-reload)
retry 10 exists "$T/out/$id" || fail "no work after a reload: $(ctl status work)"
[ "$(cat "$T/out/$id")" = after-reload ] || fail "payload after reload"

stop_vigild
[ -z "$(procs_with VIGIL_JOB=stuck)" ] || fail "stuck run alive after vigild stopped"
[ "$(sqlite3 "$STATE/state.db" "SELECT state, attempts FROM queue WHERE job = 'stuck'")" = "0|0" ] ||
	fail "message after shutdown: $(sqlite3 "$STATE/state.db" "SELECT * FROM queue WHERE job = 'stuck'")"
exit 0
