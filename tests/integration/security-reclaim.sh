#!/bin/bash
# Attack (issue 16, item 1): a job running as nobody keeps its lock in a
# session of its own and forges the holder record through its lock
# descriptor (fd 3) to name a victim, an unrelated root process.  vigild
# must never signal the victim: the record it trusts is in a file no job
# can write, and the kernel's view of who holds the lock decides.  While
# vigild lives, that escapee is the run's (its lineage: security-lineage.sh);
# once vigild was killed, the next one cannot prove it started the
# escapee that holds the lock: it names it and waits, signalling nothing.
. "$(dirname "$0")/lib.sh"
need_nobody
# The lock's own defence, without cgroups (which would kill the leftover
# with the run: cgroup-track.sh).
echo 'cgroup = "off"' >>"$T/vigil.conf"
mkdir -m 1777 "$T/evil"

# The victim: a root process leading a session of its own.
setsid sleep 100000 &
victim=$!
track "$victim"
leads() { [ "$(ps -o pgid= -p "$victim" | tr -d ' ')" = "$victim" ]; }
retry 10 leads || fail "the victim does not lead its group"
vstart=$(sed 's/^.*) //' "/proc/$victim/stat" | cut -d' ' -f20)
forged="$victim $victim $vstart 1"

cat >"$T/evil.sh" <<EOF
#!/bin/sh
# Once: keep the lock in a new session and forge a record in the lock
# file; the run goes on until vigild is killed.
[ -e "$T/evil/done" ] && exit 0
: >"$T/evil/done"
setsid sh -c 'sleep 0.5; printf "%s\\n" "$forged" >&3; exec sleep 100000' &
echo \$! >"$T/evil/leftover"
exec sleep 100000
EOF
chmod 755 "$T/evil.sh"
job evil 'kind = "periodic"' 'every = "1s"' 'user = "nobody"' \
	"command = \"$T/evil.sh\""
start_vigild
exists() { [ -s "$1" ]; }
retry 10 exists "$T/evil/leftover" || fail "the job never ran"
leftover=$(cat "$T/evil/leftover")
track "$leftover"
forged_in() { grep -qF "$forged" "$RUN/locks/evil.lock"; }
retry 10 forged_in || fail "the leftover did not forge a record"

# vigild is killed: the run's leader dies with it (PDEATHSIG), the
# escapee does not.  The next vigild finds the lock held by it.
leader=$(job_pid evil)
kill -KILL "$VIGILD_PID"
wait "$VIGILD_PID" 2>/dev/null || true
VIGILD_PID=
retry 10 dead "$leader" || fail "the leader $leader outlived vigild"
alive "$leftover" || fail "the leftover did not outlive vigild"
start_vigild

# The next slot finds the lock held by the leftover.
retry 15 is_state evil BLOCKED || fail "evil never BLOCKED (is $(state evil))"
# vigild would signal at once on entering BLOCKED; give it a moment more.
deadline=$(($(now_ms) + 2500))
while [ "$(now_ms)" -lt "$deadline" ]; do
	alive "$victim" || fail "vigild killed the victim named by a forged record"
	sleep 0.05
done
alive "$leftover" || fail "vigild signalled the leftover it cannot prove it started"
grep -q "evil: lock held by pid $leftover (sleep) uid $(id -u nobody), which this vigild did not start" "$VLOG" ||
	fail "the holder is not named in the log"
ctl --json status evil | grep -q "lock held by pid $leftover (sleep)" ||
	fail "the holder is not named in status: $(ctl --json status evil)"
grep -q reclaiming "$VLOG" && fail "vigild tried to reclaim"

# Once the leftover lets go, the job runs again.
runs=$(ctl history evil | grep -c . || true)
kill -KILL "$leftover"
more_runs() { [ "$(ctl history evil | grep -c .)" -gt "$runs" ]; }
retry 15 more_runs || fail "evil never ran again (is $(state evil))"
alive "$victim" || fail "the victim died"
stop_vigild
log ok
