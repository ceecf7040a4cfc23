#!/bin/bash
# shellcheck disable=SC2317 # predicates called through retry
# drain_timeout of queue jobs: with "0s" a stop sends stop_signal at once,
# as a request to cancel: a run that traps TERM cleans up (a marker) and
# exits, and the stop returns at once, its message available again; with
# the default (stop_timeout) the run is left alone until then, and with a
# drain_timeout shorter than stop_timeout it is asked to cancel after it.
# A bad value is reported at FILE:LINE.
. "$(dirname "$0")/lib.sh"

cat >"$T/work.sh" <<EOF
#!/bin/sh
trap 'echo "\$VIGIL_MESSAGE_ID" >"$T/cleaned.\$VIGIL_JOB"; exit 1' TERM
echo "\$VIGIL_MESSAGE_ID" >"$T/started.\$VIGIL_JOB"
while :; do sleep 0.05; done
EOF
chmod +x "$T/work.sh"
job now 'kind = "queue"' "command = \"$T/work.sh\"" 'drain_timeout = "0s"' \
	'stop_timeout = "20s"'
job dflt 'kind = "queue"' "command = \"$T/work.sh\"" 'stop_timeout = "3s"'
start_vigild
started() { [ -s "$T/started.$1" ]; }

# drain_timeout = "0s": TERM at once; the run cleans up and ends.
id=$(ctl enqueue now m) || fail "enqueue now"
retry 10 started now || fail "now: the message did not start"
t0=$(now_ms)
ctl stop now >/dev/null || fail "stop now"
t1=$(now_ms)
# Well before stop_timeout (20 s): 2 s on an idle machine, VIGIL_TEST_SLOW
# times that on a busy one, 15 s at most.
lim=$(($(slow_s 2) * 1000))
[ "$lim" -le 15000 ] || lim=15000
[ $((t1 - t0)) -lt "$lim" ] || fail "stop with drain_timeout 0s took $((t1 - t0)) ms"
[ "$(cat "$T/cleaned.now" 2>/dev/null)" = "$id" ] || fail "now: no cleanup marker"
grep -q "stopping: asking message $id to cancel" "$LOGS/now.log" ||
	fail "now: no stop marker: $(tail -n 3 "$LOGS/now.log")"
avail() { ctl --json queue now | grep -q '"available":1'; }
retry 5 avail || fail "now: the cancelled message is not available again: $(ctl queue now)"

# The default: nothing is sent before stop_timeout (3 s).
id=$(ctl enqueue dflt m) || fail "enqueue dflt"
retry 10 started dflt || fail "dflt: the message did not start"
t0=$(now_ms)
ctl stop --no-wait dflt >/dev/null || fail "stop dflt"
retry 5 grep -q "letting message $id finish (up to 3s)" "$LOGS/dflt.log" ||
	fail "dflt: no drain marker: $(tail -n 3 "$LOGS/dflt.log")"
cleaned() { [ -s "$T/cleaned.$1" ]; }
retry 10 cleaned dflt || fail "dflt: never stopped"
t1=$(now_ms)
[ $((t1 - t0)) -ge 2900 ] || fail "dflt: signalled after $((t1 - t0)) ms, before stop_timeout"
grep -q "message $id still running after drain_timeout (3s)" "$VLOG" ||
	fail "dflt: no drain_timeout line: $(tail -n 3 "$VLOG")"
wait_state dflt STOPPED

# Errors name the file and line.
printf 'kind = "queue"\ncommand = "true"\ndrain_timeout = "soon"\n' >"$JOBS/bad.conf"
printf 'command = "true"\ndrain_timeout = "1s"\n' >"$JOBS/svc.conf"
got=0
"$VIGILD" --check -c "$T/vigil.conf" -j "$JOBS" >"$T/check" 2>&1 || got=$?
[ "$got" -ne 0 ] || fail "--check accepted a bad drain_timeout"
grep -q "bad.conf:3: " "$T/check" || fail "bad drain_timeout: $(cat "$T/check")"
grep -q "svc.conf:2: .*not valid for kind \"service\"" "$T/check" ||
	fail "drain_timeout of a service: $(cat "$T/check")"
rm "$JOBS/bad.conf" "$JOBS/svc.conf"
stop_vigild
