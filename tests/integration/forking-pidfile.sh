#!/bin/bash
# type = "forking" and its pid_file (issue 19), with cgroups and without:
# a daemon that writes its pid_file after its starter exited is waited
# for (RUNNING once it is there, a stop reaches it, even in a session of
# its own); a pid_file naming a process that is not the job's (one this
# test started) is not believed: the run ends with a warning and that
# process is never signalled.
. "$(dirname "$0")/lib.sh"

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
	if [ "$mode" = auto ] && grep -q "cgroup: .*tracked by process group" "$VLOG"; then
		log "no cgroups here: $(grep 'cgroup:' "$VLOG")"
		stop_vigild
		break
	fi
	wait_state late RUNNING
	[ -s "$T/late.pid" ] || fail "$mode: late is RUNNING before its pid file"
	d=$(cat "$T/late.pid")
	[ "$(job_pid late)" = "$d" ] || fail "$mode: late's pid is $(job_pid late), the daemon $d"
	grep -q "late: starter pid [0-9]* exited 0; main pid $d" "$VLOG" ||
		fail "$mode: no main pid line: $(cat "$VLOG")"
	ctl stop late >/dev/null || fail "$mode: stop late"
	retry 5 dead "$d" || fail "$mode: the daemon $d outlived the stop"

	ctl start liar >/dev/null 2>&1 || true
	warned() { grep -q "liar: the starter exited 0 but no main process of the job was found" "$VLOG"; }
	retry 10 warned || fail "$mode: no warning for a foreign pid_file: $(cat "$VLOG")"
	grep -q "liar: starter pid [0-9]* exited 0; main pid" "$VLOG" &&
		fail "$mode: vigild believed a pid_file naming pid $OTHER"
	ctl stop liar >/dev/null 2>&1 || true
	alive "$OTHER" || fail "$mode: vigild signalled pid $OTHER, named by a job's pid_file"
	stop_vigild
	alive "$OTHER" || fail "$mode: pid $OTHER gone after vigild stopped"
	log "$mode: late daemon followed, foreign pid $OTHER left alone"
done
kill "$OTHER"
