#!/bin/bash
# signal ... all reaches every instance that has a process and exits 0,
# whatever else there is: a periodic job WAITING for its slot, a free
# queue slot, a stopped job.  A target named without a process is still
# "NAME: not running" with exit 1, and the others still get the signal.
. "$(dirname "$0")/lib.sh"

job svc "command = {\"sh\", \"-c\", \"trap 'echo hup >>$T/svc.hup' HUP; while :; do sleep 0.05; done\"}"
job q 'kind = "queue"' 'concurrency = 2' \
	"command = {\"sh\", \"-c\", \"cat >/dev/null; trap 'echo hup >>$T/q.hup' HUP; while :; do sleep 0.05; done\"}"
job tick 'kind = "periodic"' 'every = "1h"' 'command = "true"'
job off 'command = "sleep 1000"' 'autostart = false'
start_vigild

wait_state svc RUNNING
wait_state tick WAITING
ctl enqueue q work >/dev/null || fail "enqueue failed"
busy() { [ -n "$(ctl pid q@0 2>/dev/null)" ] || [ -n "$(ctl pid q@1 2>/dev/null)" ]; }
retry 10 busy || fail "no slot of q took the message: $(ctl status q)"
# The trap is set once the payload is read: the slot's log says started,
# and the shell is in its loop when a sleep child shows up.
looping() { pgrep -P "$1" -x sleep >/dev/null; }
for i in 0 1; do
	p=$(ctl pid "q@$i" 2>/dev/null) || continue
	retry 10 looping "$p" || fail "q@$i did not reach its loop"
done
retry 10 looping "$(job_pid svc)" || fail "svc did not reach its loop"

rc=0
ctl signal HUP all >"$T/out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || fail "signal HUP all exited $rc: $(cat "$T/out")"
[ ! -s "$T/out" ] || fail "signal HUP all printed: $(cat "$T/out")"
retry 5 test -s "$T/svc.hup" || fail "svc did not get HUP"
retry 5 test -s "$T/q.hup" || fail "the busy slot of q did not get HUP"

# Named targets without a process are still errors.
for t in tick off; do
	rc=0
	ctl signal HUP "$t" >"$T/out" 2>&1 || rc=$?
	[ "$rc" -eq 1 ] || fail "signal HUP $t exited $rc"
	grep -qx "$t: not running" "$T/out" || fail "signal HUP $t said: $(cat "$T/out")"
done
# A named queue job: its free slot is named too; the busy one gets it.
: >"$T/q.hup"
rc=0
ctl signal HUP q >"$T/out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "signal HUP q exited $rc"
grep -q "^q@[01]: not running$" "$T/out" || fail "signal HUP q said: $(cat "$T/out")"
retry 5 test -s "$T/q.hup" || fail "signal HUP q did not reach the busy slot"
stop_vigild
