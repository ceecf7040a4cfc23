#!/bin/bash
# Resource limits of a job (issue 19): memory_max, memory_high, tasks_max,
# cpu_weight, cpu_max, io_weight are written into each instance's cgroup
# where the controller is there; where it is not, one warning per limit
# and the job runs all the same.  Bad values are FILE:LINE errors.  (A
# real memory controller and an OOM kill are not available on every host:
# what this host could not check is said in the test's log.)
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/bad"
printf 'command = "sleep 1"\nmemory_max = "1K"\n' >"$T/bad/m.conf"
printf 'command = "sleep 1"\ncpu_max = "half"\n' >"$T/bad/c.conf"
printf 'command = "sleep 1"\ncpu_weight = 0\n' >"$T/bad/w.conf"
rc=0
"$VIGILD" -t -c "$T/vigil.conf" -j "$T/bad" >"$T/check.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "--check accepted bad limits: $(cat "$T/check.out")"
grep -q "$T/bad/m.conf:2: memory_max: 1K is below one page" "$T/check.out" ||
	fail "memory_max error: $(cat "$T/check.out")"
grep -q "$T/bad/c.conf:2: cpu_max: invalid value \"half\"" "$T/check.out" ||
	fail "cpu_max error: $(cat "$T/check.out")"
grep -q "$T/bad/w.conf:2: cpu_weight" "$T/check.out" ||
	fail "cpu_weight error: $(cat "$T/check.out")"

job lim 'command = "sleep 100000"' 'memory_max = "64M"' \
	'memory_high = "48M"' 'tasks_max = 10' 'cpu_weight = 50' \
	'cpu_max = "50%"' 'io_weight = 20' 'instances = 2'
start_vigild
need_cgroups
wait_state lim@0 RUNNING
wait_state lim@1 RUNNING
base=$(sed -n 's/^.*own cgroup under //p' "$VLOG" | head -1)
cg="$base/lim@0"

# check_limit FILE VALUE OPTION CONTROLLER: written, or said to be ignored.
checked=0 missing=0
check_limit() {
	if [ -e "$cg/$1" ]; then
		[ "$(cat "$cg/$1")" = "$2" ] ||
			fail "$cg/$1 is $(cat "$cg/$1"), not $2"
		checked=$((checked + 1))
		return
	fi
	grep -q "lim: $3 ignored: the $4 controller is not available" "$VLOG" ||
		fail "no warning for $3 without $4: $(cat "$VLOG")"
	[ "$(grep -c "lim: $3 ignored" "$VLOG")" -eq 1 ] ||
		fail "$3 warned more than once for two instances"
	missing=$((missing + 1))
}
check_limit memory.max 67108864 memory_max memory
check_limit memory.high 50331648 memory_high memory
check_limit pids.max 10 tasks_max pids
check_limit cpu.weight 50 cpu_weight cpu
check_limit cpu.max "50000 100000" cpu_max cpu
check_limit io.weight "default 20" io_weight io
log "limits written: $checked; controllers missing here: $missing"

# Where a controller is there, the limit holds for real, not only in the
# file: tasks_max stops forks, cpu_max throttles a busy loop.
enforced=0
if [ -e "$cg/pids.max" ]; then
	# 12 sleepers wanted; with tasks_max = 4 the forks past 3 fail
	# (python, which lives on after a failed fork; sh would exit).
	cat >"$T/forky.py" <<'PY'
import os, time
for i in range(12):
    try:
        if os.fork() == 0:
            time.sleep(100000)
            os._exit(0)
    except OSError:
        pass
time.sleep(100000)
PY
	job forky "command = {\"python3\", \"$T/forky.py\"}" 'tasks_max = 4'
	ctl reload >/dev/null || fail "reload (forky)"
	wait_state forky@0 RUNNING
	fcg="$base/forky@0"
	refused() { [ "$(awk '$1 == "max" { print $2 }' "$fcg/pids.events")" -gt 0 ]; }
	retry 5 refused || fail "tasks_max = 4: no fork refused: $(cat "$fcg/pids.events")"
	n=$(wc -l <"$fcg/cgroup.procs")
	[ "$n" -le 4 ] || fail "tasks_max = 4 but $n processes in $fcg"
	[ "$(cat "$fcg/pids.current")" -le 4 ] || fail "pids.current $(cat "$fcg/pids.current") > 4"
	enforced=$((enforced + 1))
fi
if [ -e "$cg/cpu.max" ]; then
	job spin 'command = {"sh", "-c", "while :; do :; done"}' 'cpu_max = "10%"'
	ctl reload >/dev/null || fail "reload (spin)"
	wait_state spin@0 RUNNING
	scg="$base/spin@0"
	cstat() { awk -v k="$1" '$1 == k { print $2 }' "$scg/cpu.stat"; }
	u0=$(cstat usage_usec) t0=$(now_ms)
	throttled() { [ "$(cstat nr_throttled)" -ge 5 ]; }
	retry 10 throttled || fail "cpu_max = 10%: not throttled: $(cat "$scg/cpu.stat")"
	u1=$(cstat usage_usec) t1=$(now_ms)
	# At most 10% of one CPU, with room for the period it was measured in.
	pct=$(((u1 - u0) / 10 / (t1 - t0 + 1)))
	[ "$pct" -le 20 ] || fail "cpu_max = 10% but the loop had ${pct}% of a CPU"
	log "cpu_max = 10%: a busy loop got ${pct}% of a CPU, $(cstat nr_throttled) throttled periods"
	enforced=$((enforced + 1))
fi
if [ -e "$cg/memory.max" ]; then
	# Past memory_max: the OOM killer ends the run, reason "oom".
	job hog 'command = {"python3", "-c", "b = bytearray(256 << 20); import time; time.sleep(100000)"}' \
		'memory_max = "32M"' 'restart = "no"'
	ctl reload >/dev/null || fail "reload (hog)"
	oomed() { ctl history hog 2>/dev/null | grep -q 'oom (signal KILL)'; }
	retry 10 oomed || fail "memory_max = 32M: no oom end: $(ctl history hog 2>&1)"
	ctl status hog | grep -q 'oom' || fail "status of hog: $(ctl status hog)"
	enforced=$((enforced + 1))
else
	log "no memory controller here: memory_max, memory_high and the oom end not exercised"
fi
log "limits enforced and checked: $enforced"
stop_vigild
