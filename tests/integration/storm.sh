#!/bin/bash
# A restart storm (issue 43): 60 jobs that each run for an instant and,
# with min_uptime = 0, are restarted at once when reaped.  On a slow or
# busy machine every fork takes long enough for another child to end
# meanwhile: vigild once reaped and forked in one call for good, never
# came back to its loop, and answered neither vigilctl nor SIGTERM
# (seen under ASan: ping unanswered for 20 s, TERM never read).  Now it
# reaps a few per turn and serves its control socket first: it answers,
# stops every job on request, and exits on TERM, while the storm goes on.
. "$(dirname "$0")/lib.sh"
[ -z "${VIGIL_SKIP_SLOW:-}" ] || skip "VIGIL_SKIP_SLOW is set"
[ -z "${VIGIL_SKIP_TIMING:-}" ] || skip "VIGIL_SKIP_TIMING is set (a timing, load or container test: the gcc stage runs it)"

for i in $(seq 1 60); do
	job "s$i" 'command = "true"' 'restart = "always"' 'min_uptime = "0"'
done
start_vigild

# The storm is on: runs end and start over by the hundred.
restarts() { ctl --json status s1 | jq -r '.jobs[0].restarts'; }
stormy() { [ "$(restarts)" -ge 20 ]; }
retry 60 stormy || fail "s1 restarted only $(restarts) times"
log "s1 restarted $(restarts) times"

# vigilctl is answered again and again while it lasts.
for i in $(seq 1 10); do
	timeout "$(slow_s 20)" "$VIGILCTL" -s "$SOCK" ping >/dev/null ||
		fail "ping $i not answered within $(slow_s 20) s during the storm"
done
log "10 pings answered during the storm"

# A stop of every job is carried out: no run of this test is left.
timeout "$(slow_s 60)" "$VIGILCTL" -s "$SOCK" stop all >/dev/null ||
	fail "stop all not answered"
none() { [ -z "$(procs_with "VIGIL_TEST_ROOT=$T")" ]; }
retry 60 none || fail "runs left after stop all: $(procs_with "VIGIL_TEST_ROOT=$T")"
check "s1 is STOPPED" is_state s1 STOPPED

# Start them again, and TERM vigild in the middle of the storm.
ctl start all >/dev/null
retry 60 stormy || fail "the storm did not start again"
kill -TERM "$VIGILD_PID"
exited() { dead "$VIGILD_PID"; }
retry 60 exited || fail "vigild did not exit on TERM during a storm"
VIGILD_PID=
check "vigild said it stopped them all" grep -q 'all jobs stopped, exiting' "$VLOG"
checks_passed
log "a restart storm: vigild answers, stops and exits"
