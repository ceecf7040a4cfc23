#!/bin/bash
# Issue 34, finding 5: what a job's on_failure, vigil.conf's on_event and
# a job's exec_start_post and exec: health probe leave behind (`setsid
# sleep &`) must not escape
# vigild.  With cgroups, every process vigild starts for a job runs in a
# cgroup vigild tracks: on_failure in the job's NAME@hooks (the job's
# limits apply), on_event in @on_event, exec_start_post and the probe in
# the instance's NAME@INDEX; a hook's leftovers end with the hook, the
# instance's with the instance, and none outlives vigild's shutdown.
# Without cgroups, a hook's process group goes with it and
# the escapees of exec_start_post and the probe are the run's lineage
# (its VIGIL_RUN_ID).
. "$(dirname "$0")/lib.sh"

# TAG: what only this test's leftovers carry in their command line.
TAG="1000.$$"

# leftover N: the pid that hook N wrote, once it is there.
leftover() { cat "$T/left$1.pid" 2>/dev/null; }
written() { [ -s "$T/left$1.pid" ]; }
# cg_is PID NAME: the process is in a cgroup named NAME.
cg_is() { grep -q "^0::.*/$2\$" "/proc/$1/cgroup"; }

for mode in auto off; do
	rm -rf "$JOBS"/*.conf "${STATE:?}"/* "$T"/left*.pid "$T"/once* \
		"$T"/release
	# Without cgroups a hook's group is what goes with it: no setsid.
	setsid=setsid
	[ "$mode" = off ] && setsid=
	# hook N: leave a sleep behind (once), then wait for $T/release.
	hook() {
		# shellcheck disable=SC2016 # \$ is for the hook's shell
		printf '{"sh", "-c", "[ -e %s/once%s ] && exit 0; : >%s/once%s; %s sleep %s%s & echo \\$! >%s/left%s.pid; i=0; while [ ! -e %s/release ] && [ \\$i -lt 1000 ]; do sleep 0.05; i=\\$((i + 1)); done"}' \
			"$T" "$1" "$T" "$1" "$2" "$TAG" "$1" "$T" "$1" "$T"
	}
	printf 'cgroup = "%s"\non_event = %s\nhook_timeout = "60s"\n' \
		"$mode" "$(hook 3 "$setsid")" >"$T/vigil.conf"
	job bad 'command = "false"' 'restart_delay = "30s"' 'tasks_max = 50' \
		"on_failure = $(hook 1 "$setsid")" 'hook_timeout = "60s"'
	job good 'command = "sleep 100000"' 'stop_timeout = "2s"' \
		"exec_start_post = {\"sh\", \"-c\", \"setsid sleep ${TAG}2 & echo \\\$! >$T/left2.pid\"}"
	# The health probe leaves a sleep behind once, and passes.
	printf '[ -e %s/once4 ] && exit 0\n: >%s/once4\nsetsid sleep %s4 &\necho $! >%s/left4.pid\n' \
		"$T" "$T" "$TAG" "$T" >"$T/probe.sh"
	job probed 'command = "sleep 100000"' 'stop_timeout = "2s"' \
		"health = \"exec:/bin/sh $T/probe.sh\"" 'health_interval = "1s"'
	start_vigild
	if [ "$mode" = auto ] && no_cgroups; then
		log "$mode: skipped: vigild cannot use cgroups here"
		stop_vigild
		continue
	fi
	for n in 1 2 3 4; do
		retry 15 written "$n" || fail "$mode: hook $n left nothing: $(tail "$VLOG")"
		track "$(leftover "$n")"
	done
	if [ "$mode" = auto ]; then
		check "on_failure's leftover is in bad@hooks: $(grep '^0::' "/proc/$(leftover 1)/cgroup")" \
			cg_is "$(leftover 1)" 'bad@hooks'
		check "exec_start_post's leftover is in good@0: $(grep '^0::' "/proc/$(leftover 2)/cgroup")" \
			cg_is "$(leftover 2)" 'good@0'
		check "the probe's leftover is in probed@0: $(grep '^0::' "/proc/$(leftover 4)/cgroup")" \
			cg_is "$(leftover 4)" 'probed@0'
		check "on_event's leftover is in @on_event: $(grep '^0::' "/proc/$(leftover 3)/cgroup")" \
			cg_is "$(leftover 3)" '@on_event'
		base=$(sed -n 's/^.*own cgroup under //p' "$VLOG" | head -1)
		if [ -e "$base/bad@hooks/pids.max" ]; then
			check "the job's tasks_max applies to its hooks" \
				grep -qx 50 "$base/bad@hooks/pids.max"
		else
			log "tasks_max not checked: no pids controller in $base"
		fi
	fi

	# The hooks end: what they left goes with them.
	: >"$T/release"
	check "$mode: on_failure's leftover ends with it" retry 10 dead "$(leftover 1)"
	check "$mode: on_event's leftover ends with it" retry 10 dead "$(leftover 3)"
	check "$mode: exec_start_post's leftover lives while good runs" \
		alive "$(leftover 2)"
	rc=0
	timeout "$(slow_s 30)" "$VIGILCTL" -s "$SOCK" stop all >/dev/null 2>&1 || rc=$?
	check "$mode: stop all returns (exit $rc)" test "$rc" -ne 124
	check "$mode: exec_start_post's leftover ends with stop all" \
		retry 10 dead "$(leftover 2)"
	check "$mode: the probe's leftover ends with stop all" \
		retry 10 dead "$(leftover 4)"

	# At shutdown: an on_event hook still running and an instance's
	# exec_start_post leave processes behind; none outlives vigild.
	rm -f "$T"/once3 "$T"/left2.pid "$T"/left3.pid "$T"/release
	ctl start good >/dev/null 2>&1 || fail "$mode: start good"
	for n in 2 3; do
		retry 15 written "$n" || fail "$mode: hook $n left nothing again"
		track "$(leftover "$n")"
	done
	kill -TERM "$VIGILD_PID"
	exited() { dead "$VIGILD_PID"; }
	check "$mode: vigild's shutdown ends" retry 30 exited
	if exited; then
		wait "$VIGILD_PID" || true
		VIGILD_PID=
	fi
	for n in 2 3; do
		check "$mode: leftover $n ($(leftover "$n")) gone after the shutdown" \
			retry 5 dead "$(leftover "$n")"
	done
	if [ "$mode" = auto ]; then
		check "the hooks' cgroups went at exit" test ! -e "$base/bad@hooks" -a ! -e "$base/@on_event"
	fi
	: >"$T/release"
	[ -z "$VIGILD_PID" ] || stop_vigild
done
checks_passed
log "ok"
