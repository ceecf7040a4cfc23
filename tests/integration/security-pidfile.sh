#!/bin/bash
# Attack (issue 34, finding 3): without cgroup tracking, a forking job
# running as nobody writes the pid of a root service of vigild into its
# pid_file.  vigild must refuse that pid (a failed start, with the
# reason), never signal the victim when the job is stopped, and end its
# shutdown within the stop timeouts.
. "$(dirname "$0")/lib.sh"
need_nobody
echo 'cgroup = "off"' >>"$T/vigil.conf"
mkdir -m 1777 "$T/evil"

job victim 'command = "sleep 100000"' 'stop_timeout = "2s"'
# The starter names the victim (whose pid it reads from the file the test
# writes; ps would do as well) and exits 0.
job evil 'type = "forking"' 'user = "nobody"' 'autostart = false' \
	"pid_file = \"$T/evil/evil.pid\"" 'ready_timeout = "3s"' \
	'stop_timeout = "2s"' \
	"command = {\"sh\", \"-c\", \"cat $T/evil/target >$T/evil/evil.pid; exit 0\"}"
start_vigild
wait_state victim RUNNING
v=$(job_pid victim)
track "$v"
echo "$v" >"$T/evil/target"

rc=0
timeout "$(slow_s 30)" "$VIGILCTL" -s "$SOCK" start evil >"$T/start.out" 2>&1 || rc=$?
log "start evil: exit $rc: $(cat "$T/start.out")"
check "start evil fails (exit $rc), never hangs" \
	test "$rc" -ne 0 -a "$rc" -ne 124
refused() { grep -q "evil: pid_file $T/evil/evil.pid names pid $v, not a process of this run" "$VLOG"; }
check "vigild says why it refused pid $v" retry 10 refused
check "evil never shows the victim's pid" \
	test "$(job_pid evil 2>/dev/null)" != "$v"
rc=0
timeout "$(slow_s 30)" "$VIGILCTL" -s "$SOCK" stop evil >/dev/null 2>&1 || rc=$?
check "stop evil returns (exit $rc)" test "$rc" -ne 124
check "the victim $v survives stop evil" alive "$v"
check "the victim is still RUNNING as pid $v" \
	test "$(state victim) $(job_pid victim)" = "RUNNING $v"

# The shutdown ends within the stop timeouts (2 s each; a generous bound).
kill -TERM "$VIGILD_PID"
gone() { dead "$VIGILD_PID"; }
check "vigild's shutdown ends" retry 30 gone
if gone; then
	wait "$VIGILD_PID" || true
	VIGILD_PID=
fi
check "the victim went with the shutdown" retry 5 dead "$v"
checks_passed
log "ok"
