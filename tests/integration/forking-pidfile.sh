#!/bin/bash
# type = "forking" and its pid_file (issue 19), with cgroups and without:
# a daemon that writes its pid_file after its starter exited is waited
# for (RUNNING once it is there, a stop reaches it, even in a session of
# its own); a pid_file naming a process that is not the job's (one this
# test started) is not believed: the run ends with a warning and that
# process is never signalled.
. "$(dirname "$0")/lib.sh"

# logged PATTERN: vigild logged PATTERN since the line count in $N0.
logged() { tail -n +$((N0 + 1)) "$VLOG" | grep -q -- "$1"; }

# The test's own process, named in the pid file of job "liar".
sleep 100000 &
OTHER=$!
track "$OTHER"

for mode in off auto; do
	printf 'cgroup = "%s"\n' "$mode" >"$T/vigil.conf"
	# A fresh state: the operator stops of the last round are remembered.
	rm -rf "$JOBS"/*.conf "$T"/*.pid "${STATE:?}"/*
	# The daemon leaves the starter's session, waits 300 ms, then writes
	# its pid file: the starter has long exited 0 by then.
	job late 'type = "forking"' "pid_file = \"$T/late.pid\"" \
		"command = {\"sh\", \"-c\", \"(setsid sh -c 'sleep 0.3; echo \$\$ >$T/late.pid.tmp; mv $T/late.pid.tmp $T/late.pid; exec sleep 100000' &); exit 0\"}"
	echo "$OTHER" >"$T/liar.pid"
	job liar 'type = "forking"' "pid_file = \"$T/liar.pid\"" \
		'command = {"true"}' 'ready_timeout = "500ms"' 'autostart = false'
	start_vigild
	if [ "$mode" = auto ] && no_cgroups; then
		stop_vigild
		break
	fi
	wait_state late RUNNING
	[ -s "$T/late.pid" ] || fail "$mode: late is RUNNING before its pid file"
	d=$(cat "$T/late.pid")
	[ "$(job_pid late)" = "$d" ] || fail "$mode: late's pid is $(job_pid late), the daemon $d"
	grep -q "late: starter pid [0-9]* exited 0; daemon pid $d" "$VLOG" ||
		fail "$mode: no main pid line: $(cat "$VLOG")"
	ctl stop late >/dev/null || fail "$mode: stop late"
	retry 5 dead "$d" || fail "$mode: the daemon $d outlived the stop"

	N0=$(wc -l <"$VLOG")
	ctl start liar >/dev/null 2>&1 || true
	retry 10 logged "liar: no daemon pid within ready_timeout (500ms): stopping it" ||
		fail "$mode: no warning for a foreign pid_file: $(cat "$VLOG")"
	# A failed start (backoff), with the reason in history.
	failed() { ctl history liar 2>/dev/null | grep -q 'ready timeout (exit 0)'; }
	retry 5 failed || fail "$mode: liar's run: $(ctl history liar 2>&1)"
	retry 5 logged "liar: restarting in .* (failed start 1)" ||
		fail "$mode: liar's end was not a failed start: $(cat "$VLOG")"
	logged "liar: starter pid [0-9]* exited 0; daemon pid" &&
		fail "$mode: vigild believed a pid_file naming pid $OTHER"
	ctl stop liar >/dev/null 2>&1 || true
	alive "$OTHER" || fail "$mode: vigild signalled pid $OTHER, named by a job's pid_file"
	stop_vigild
	alive "$OTHER" || fail "$mode: pid $OTHER gone after vigild stopped"
	if [ "$mode" = off ]; then
		# Without a ready_timeout the wait ends after 10 s: a failed
		# start, "failed to start: ..." with the cause.
		sed -i 's/^ready_timeout = .*/ready_timeout = "0"/' "$JOBS/liar.conf"
		N0=$(wc -l <"$VLOG")
		start_vigild
		ctl start liar >/dev/null 2>&1 || true
		retry 20 logged 'liar: pid [0-9]* failed to start: the starter exited 0 but no daemon pid of the job was found' ||
			fail "no give-up after 10 s: $(cat "$VLOG")"
		retry 5 logged "liar: restarting in .* (failed start 1)" ||
			fail "the give-up was not a failed start: $(cat "$VLOG")"
		stop_vigild
		alive "$OTHER" || fail "pid $OTHER gone after the give-up"
	fi
	log "$mode: late daemon followed, foreign pid $OTHER left alone"
done
kill "$OTHER"
