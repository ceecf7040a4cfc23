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
if grep -q "cgroup: .*tracked by process group" "$VLOG"; then
	log "$(grep 'cgroup:' "$VLOG")"
	exit 77
fi
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
stop_vigild
