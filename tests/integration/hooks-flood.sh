#!/bin/bash
# on_event that cannot keep up (issue 23): 20 flapping instances make
# hundreds of state changes a second for an on_event that takes 300ms
# each.  Events beyond its queue are dropped and counted in vigild's log;
# never more than one on_event runs at a time; vigild answers at once
# all along and the jobs go on flapping; a shutdown is not held up.
. "$(dirname "$0")/lib.sh"
# A flood's timing: run in stage 1 of tests/run-all.sh, not again
# under valgrind nor in distcheck.
[ -z "${VIGILD_WRAPPER:-}" ] || skip "timing under valgrind"
[ -z "${VIGIL_SKIP_SLOW:-}" ] || skip "VIGIL_SKIP_SLOW is set"
[ -z "${VIGIL_SKIP_TIMING:-}" ] || skip "VIGIL_SKIP_TIMING is set (a timing, load or container test: the gcc stage runs it)"

# The hook's command line names this test's root: its processes are ours.
cat >"$T/vigil.conf" <<EOF
on_event = {"sh", "-c", "echo b >>\"\$0.stamps\"; sleep 0.3; echo e >>\"\$0.stamps\"", "$T/on-event"}
EOF
# Each instance restarts every 50 ms: a few hundred changes a second,
# twelve times what the hook takes, without a fork storm that would
# starve every other test running beside this one (issue 43).
job flap 'command = "false"' 'instances = 20' 'restart_delay = "50ms"' \
	'restart_delay_max = "50ms"'
start_vigild

# hooks: the pids of this test's on_event processes.
# (One grep over every process, not a process per process; vigild's
# children only: a hook's own child, between its fork and exec, has the
# hook's command line too.)
hooks() {
	local p s
	grep -laF -- "$T/on-event" /proc/[0-9]*/cmdline 2>/dev/null |
		sed 's|^/proc/||; s|/cmdline$||' | while read -r p; do
		read -r s 2>/dev/null <"/proc/$p/stat" || continue
		# shellcheck disable=SC2086 # the fields after the name: state, ppid
		set -- ${s##*) }
		[ "${2:-}" != "$VIGILD_PID" ] || echo "$p"
	done
}
most=0
sample() {
	local n
	n=$(hooks | wc -l)
	[ "$n" -le "$most" ] || most=$n
}

retry 20 grep -q 'on_event: [0-9]* events dropped: the hook cannot keep up' "$VLOG" ||
	fail "no drop said; log: $(tail -n 5 "$VLOG")"
log "$(grep -m 1 'events dropped' "$VLOG")"
# vigild answers at once while the flood goes on, and the jobs flap.
restarts() { ctl --json status flap@0 | sed -n 's/.*"restarts":\([0-9]*\).*/\1/p'; }
r1=$(restarts)
slow=0
for _ in $(seq 1 20); do
	sample
	t0=$(now_ms)
	ctl ping >/dev/null || fail "ping"
	[ $(($(now_ms) - t0)) -lt "$(slow_s 1000)" ] || slow=$((slow + 1))
done
check "vigild answers within $(slow_s 1) s" test "$slow" -eq 0
restarts_grew() { [ "$(restarts)" -gt "$r1" ]; }
check "the jobs go on restarting" retry 5 restarts_grew
check "never two on_event at once (most seen: $most)" test "$most" -le 1
# One runs nearly all the time: a sampler that never saw one proves nothing.
check "the sampler saw on_event running" test "$most" -ge 1
# The hooks' own stamps: each writes b as it begins and e as it ends, so
# two at once would leave "b b" in the file.  Some must have run.
check "on_event ran, at least twice" test "$(grep -c '^e$' "$T/on-event.stamps")" -ge 2
check "the hooks' stamps never overlap" test -z "$(uniq -d "$T/on-event.stamps" | grep '^b$')"

t0=$(now_ms)
stop_vigild
check "the shutdown is not held up ($(($(now_ms) - t0))ms)" test $(($(now_ms) - t0)) -lt "$(slow_s 5000)"
checks_passed
log "a slow on_event drops what it cannot take and holds nothing up"
