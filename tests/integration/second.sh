#!/bin/bash
# A second vigild on the same runtime dir is refused with a clear message
# and leaves the first one and its jobs alone; so is one on the same state
# dir with another runtime dir (it names the first: pid and runtime dir),
# which would otherwise mark the first's runs lost and run its queue
# message and its service a second time.  enqueue --direct while a vigild
# holds the state dir kicks that vigild, found by its state lock.
. "$(dirname "$0")/lib.sh"

job a 'command = "sleep 1000"'
job q 'kind = "queue"' 'command = "sleep 1000"'
start_vigild
wait_state a RUNNING
pid=$(job_pid a)
ctl enqueue q m1 >/dev/null || fail "enqueue"
running() { [ "$(procs_with VIGIL_JOB=q | wc -l)" -eq 1 ]; }
retry 10 running || fail "q's message did not start"
qpid=$(procs_with VIGIL_JOB=q)
rc=0
"$VIGILD" -c "$T/vigil.conf" -j "$JOBS" --runtime-dir "$RUN" \
	--state-dir "$STATE" --log-dir "$LOGS" >"$T/second.log" 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "second vigild exited 0"
grep -q "another vigild (pid $VIGILD_PID) is running" "$T/second.log" ||
	fail "unclear message: $(cat "$T/second.log")"
ctl ping >/dev/null || fail "first vigild no longer answers"
[ "$(job_pid a)" = "$pid" ] || fail "job was disturbed"
[ "$(procs_with VIGIL_JOB=a | wc -l)" -eq 1 ] || fail "a runs more than once"

# The same state dir, another runtime dir.
"$VIGILD" -c "$T/vigil.conf" -j "$JOBS" --runtime-dir "$T/run2" \
	--state-dir "$STATE" --log-dir "$LOGS" >"$T/third.log" 2>&1 &
p2=$!
track "$p2"
if ! retry 5 dead "$p2"; then
	kill -TERM "$p2"
	wait "$p2" || true
	fail "a second vigild on the same state dir started: $(cat "$T/third.log")"
fi
rc=0
wait "$p2" || rc=$?
[ "$rc" -ne 0 ] || fail "second vigild on the state dir exited 0"
grep -qF "another vigild (pid $VIGILD_PID, runtime directory $RUN) is running with state directory $STATE" \
	"$T/third.log" || fail "unclear message: $(cat "$T/third.log")"
[ "$(job_pid a)" = "$pid" ] || fail "a was disturbed"
[ "$(procs_with VIGIL_JOB=a | wc -l)" -eq 1 ] || fail "a runs more than once"
[ "$(procs_with VIGIL_JOB=q)" = "$qpid" ] || fail "q's message was disturbed"
ctl --json history q | grep -q '"lost"' && fail "q's run was marked lost"

# enqueue --direct with vigilctl pointed at no socket: the holder of the
# state dir is kicked all the same.
k0=$(grep -c ": kick$" "$VLOG" || true)
VIGIL_SOCKET=$T/none.sock "$VIGILCTL" --state-dir "$STATE" \
	enqueue --direct q m2 >/dev/null || fail "enqueue --direct"
kicked() { [ "$(grep -c ": kick$" "$VLOG" || true)" -gt "$k0" ]; }
retry 5 kicked || fail "enqueue --direct did not kick the holder of $STATE"
stop_vigild
log "ok"
