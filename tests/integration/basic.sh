#!/bin/bash
# One child per job and per instance; each holds its own OFD lock with a
# holder record; stop really ends the process; start brings a new one.
. "$(dirname "$0")/lib.sh"

job one 'command = "sleep 1000"'
job many 'command = "sleep 1001"' 'instances = 3'
job manual 'command = "sleep 1002"' 'autostart = false'
start_vigild

wait_state one RUNNING
for i in 0 1 2; do wait_state "many@$i" RUNNING; done
is_state manual STOPPED || fail "autostart = false job was started"

# Exactly one process per instance, each with its own identity.
[ "$(procs_with VIGIL_JOB=one | wc -l)" -eq 1 ] || fail "one: not one process"
[ "$(procs_with VIGIL_JOB=many | wc -l)" -eq 3 ] || fail "many: not three processes"
pid=$(job_pid one)
alive "$pid" || fail "pid $pid of one is not alive"
tr '\0' '\n' <"/proc/$pid/environ" | grep -qx VIGIL_INSTANCE=0 || fail "VIGIL_INSTANCE"
tr '\0' '\n' <"/proc/$pid/environ" | grep -q '^VIGIL_RUN_ID=.' || fail "VIGIL_RUN_ID"
[ "$(sed -n 's/^.*) [A-Za-z] [0-9]* \([0-9]*\).*$/\1/p' "/proc/$pid/stat")" = "$pid" ] ||
	fail "child is not its own process group leader (setsid)"
for i in 0 1 2; do
	p=$(job_pid "many@$i")
	tr '\0' '\n' <"/proc/$p/environ" | grep -qx "VIGIL_INSTANCE=$i" ||
		fail "many@$i has the wrong VIGIL_INSTANCE"
	[ -f "$RUN/locks/many@$i.lock" ] || fail "no lock file for many@$i"
done

# The lock is really held (an OFD lock on the file's inode), nobody else
# may open the lock file, and the holder is recorded in a file of its own
# that no job gets a descriptor of.
ino=$(stat -c %i "$RUN/locks/one.lock")
grep -q "OFDLCK.*:$ino " /proc/locks || fail "one.lock is not OFD-locked"
[ "$(stat -c %a "$RUN/locks/one.lock")" = 600 ] || fail "one.lock is not 0600"
read -r rpid rpgid _ rvigild <"$RUN/locks/one.holder"
[ "$rpid" = "$pid" ] && [ "$rpgid" = "$pid" ] && [ "$rvigild" = "$VIGILD_PID" ] ||
	fail "holder record '$rpid $rpgid $rvigild' does not match pid $pid"
# The child holds the lock descriptor as fd 3.
[ "$(readlink "/proc/$pid/fd/3")" = "$RUN/locks/one.lock" ] || fail "fd 3 is not the lock"
[ ! -e "/proc/$pid/fd/4" ] || fail "child inherited an extra fd 4"
# Every child, the first (made by vfork) and the later ones (by clone,
# sharing vigild's descriptor table until it execs): exactly 0..3, its
# own lock on 3, its output pipe on 1 and 2.
for label in one many@0 many@1 many@2; do
	p=$(job_pid "$label")
	fds=$(find "/proc/$p/fd" -mindepth 1 -printf '%f\n' | sort -n | tr '\n' ' ')
	[ "$fds" = "0 1 2 3 " ] || fail "$label has descriptors $fds, not 0 1 2 3"
	[ "$(readlink "/proc/$p/fd/3")" = "$RUN/locks/$label.lock" ] ||
		fail "$label: fd 3 is $(readlink "/proc/$p/fd/3")"
	case $(readlink "/proc/$p/fd/1") in pipe:*) ;; *) fail "$label: stdout is no pipe" ;; esac
	[ "$(readlink "/proc/$p/fd/1")" = "$(readlink "/proc/$p/fd/2")" ] ||
		fail "$label: stdout and stderr differ"
	[ "$(readlink "/proc/$p/fd/0")" = /dev/null ] || fail "$label: stdin is not /dev/null"
done

# stop waits until the process is gone and releases the lock.
ctl stop one >/dev/null
dead "$pid" || fail "pid $pid still alive after stop returned"
is_state one STOPPED || fail "one is $(state one) after stop"
grep -q "OFDLCK.*:$ino " /proc/locks && fail "one.lock still locked after stop"
read -r rpid _ <"$RUN/locks/one.holder" || true
[ -z "${rpid:-}" ] || fail "holder record '$rpid' left after stop"

ctl start one >/dev/null || fail "start one failed"
is_state one RUNNING || fail "one not RUNNING after start returned"
pid2=$(job_pid one)
[ "$pid2" != "$pid" ] || fail "start did not make a new process"

ctl start manual >/dev/null
is_state manual RUNNING || fail "manual not RUNNING after start"

stop_vigild
dead "$pid2" || fail "job outlived vigild's graceful exit"
log "ok"
