#!/bin/bash
# A reload that changes only `instances` of a service (two or more before
# and after) starts or stops only the difference: the other instances keep
# their pids.  1 <-> N renames the instance (NAME <-> NAME@0): all restart.
# A job that is not meant to run gets no new running instance.
. "$(dirname "$0")/lib.sh"

job w 'command = "sleep 100000"' 'instances = 3'
job idle 'command = "sleep 100000"' 'instances = 2' 'autostart = false'
start_vigild
for i in 0 1 2; do wait_state "w@$i" RUNNING; done
p0=$(job_pid w@0) p1=$(job_pid w@1) p2=$(job_pid w@2)
track "$p0" "$p1" "$p2"

# 3 -> 5: w@3 and w@4 start; the three others are untouched.
job w 'command = "sleep 100000"' 'instances = 5'
job idle 'command = "sleep 100000"' 'instances = 3' 'autostart = false'
ctl reload >/dev/null || fail "reload 3 -> 5"
wait_state w@3 RUNNING
wait_state w@4 RUNNING
[ "$(job_pid w@0) $(job_pid w@1) $(job_pid w@2)" = "$p0 $p1 $p2" ] ||
	fail "3 -> 5 restarted an instance: $(ctl status w)"
grep -q "w: instances 3 -> 5" "$VLOG" || fail "no resize line: $(cat "$VLOG")"
is_state idle@2 STOPPED || fail "idle@2 is $(state idle@2), not STOPPED"
p3=$(job_pid w@3)
track "$p3" "$(job_pid w@4)"
p4=$(job_pid w@4)

# 5 -> 2: w@2, w@3, w@4 stop and go; w@0 and w@1 are untouched.
job w 'command = "sleep 100000"' 'instances = 2'
ctl reload >/dev/null || fail "reload 5 -> 2"
gone() {
	local rc=0
	ctl status "$1" >/dev/null 2>&1 || rc=$?
	[ "$rc" -eq 4 ]
}
retry 10 gone w@4 || fail "w@4 still there: $(ctl status w)"
gone w@2 && gone w@3 || fail "w@2/w@3 still there: $(ctl status w)"
for p in "$p2" "$p3" "$p4"; do
	retry 5 dead "$p" || fail "pid $p of a removed instance is alive"
done
[ "$(job_pid w@0) $(job_pid w@1)" = "$p0 $p1" ] ||
	fail "5 -> 2 restarted w@0 or w@1: $(ctl status w)"
[ "$(ctl status w | grep -c "^w@")" -eq 2 ] ||
	fail "not two instances: $(ctl status w)"

# Grow again after the shrink settled: w@2 is a new instance.
job w 'command = "sleep 100000"' 'instances = 3'
ctl reload >/dev/null || fail "reload 2 -> 3"
wait_state w@2 RUNNING
[ "$(job_pid w@0) $(job_pid w@1)" = "$p0 $p1" ] || fail "2 -> 3 restarted w@0/w@1"
track "$(job_pid w@2)"

# 3 -> 1: the instance is called w now: everything restarts.
job w 'command = "sleep 100000"' 'instances = 1'
ctl reload >/dev/null || fail "reload 3 -> 1"
wait_state w RUNNING
track "$(job_pid w)"
retry 5 dead "$p0" || fail "w@0's pid $p0 alive after 3 -> 1"
stop_vigild
