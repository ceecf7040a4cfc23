#!/bin/bash
# restart --rolling: one instance at a time, each RUNNING past min_uptime
# before the next goes down, so that at every moment at least 3 of 4 run;
# all 4 pids change.  Judged by the runs' own stamps (issue 43): each
# instance's TERM, stamped by the instance when it gets it, and its new
# run's ready time in vigild's run history; a sampler of `status` from
# outside must never see fewer than 3 RUNNING, however few samples a busy
# machine lets it take.  An instance that fails to come back ends the roll
# with exit 1, naming the instances not restarted, which keep running as
# they were.
. "$(dirname "$0")/lib.sh"

need_cmd jq jq

# Each instance stamps the TERM it gets ("INSTANCE MICROSECONDS" in
# $T/terms) and takes 200 ms more to stop (STOPPING meanwhile); w@2 fails
# to start while $T/broken exists.
cat >"$T/w.sh" <<END
trap 'echo "\$VIGIL_INSTANCE \$(date +%s%6N)" >>$T/terms; sleep 0.2; exit 0' TERM
[ "\$VIGIL_INSTANCE" = 2 ] && [ -e $T/broken ] && exit 1
sleep 100000 &
wait
END
job w "command = {\"sh\", \"$T/w.sh\"}" \
	'instances = 4' 'min_uptime = "300ms"' 'restart_delay = "5s"'
start_vigild
for i in 0 1 2 3; do wait_state "w@$i" RUNNING; done
pids() { for i in 0 1 2 3; do job_pid "w@$i"; done | tr '\n' ' '; }
before=$(pids)
# shellcheck disable=SC2086
track $before

# sampled CMD...: run CMD while counting RUNNING instances every 10 ms
# into $T/samples; CMD's exit status.
sampled() {
	local rc=0
	rm -f "$T/stop-sampling"
	(
		while [ ! -e "$T/stop-sampling" ]; do
			ctl status w 2>/dev/null | grep -c '^w@[0-9] *RUNNING' || true
			sleep 0.01
		done
	) >"$T/samples" &
	SAMPLER=$!
	track "$SAMPLER"
	"$@" || rc=$?
	touch "$T/stop-sampling"
	wait "$SAMPLER"
	return "$rc"
}
lowest() { sort -n "$T/samples" | head -n 1; }
all_running() { [ "$(ctl status w | grep -c '^w@[0-9] *RUNNING')" -eq 4 ]; }

# ready_since US: in $T/ready, "INSTANCE READY_US" of each instance's run
# started after US, once vigild has recorded all four as ready.
ready_since() {
	ctl --json history -n 50 w 2>/dev/null | jq -r --argjson t "$1" '
		[.runs[] | select(.started_us > $t and .ready_us != null)] |
		group_by(.instance) | map(max_by(.started_us)) |
		.[] | "\(.instance) \(.ready_us)"' >"$T/ready" 2>/dev/null &&
		[ "$(wc -l <"$T/ready")" -eq 4 ]
}
now_us() { date +%s%6N; }

# down_windows: each instance's window down, from its TERM stamp to its
# new run's ready time: "INSTANCE TERM_US READY_US", in order of TERM.
down_windows() {
	sort -k1,1 "$T/terms" | join - <(sort -k1,1 "$T/ready") | sort -n -k2,2
}

# The control: a plain restart takes all 4 down at once: every TERM comes
# before any new run is ready.
: >"$T/terms"
t0=$(now_us)
ctl restart w >"$T/out0" 2>&1 || fail "restart: $(cat "$T/out0")"
retry 10 ready_since "$t0" || fail "no new ready runs: $(ctl history w)"
[ "$(wc -l <"$T/terms")" -eq 4 ] || fail "TERMs: $(cat "$T/terms")"
down_windows >"$T/win0"
[ "$(awk 'NR == 1 || $2 > m { m = $2 } END { print m }' "$T/win0")" -lt \
	"$(awk 'NR == 1 || $3 < m { m = $3 } END { print m }' "$T/win0")" ] ||
	fail "the stamps missed a plain restart's overlap: $(cat "$T/win0")"
retry 5 all_running || fail "not all running: $(ctl status w)"
before=$(pids)
# shellcheck disable=SC2086
track $before

: >"$T/terms"
t0=$(now_us)
sampled ctl restart --rolling w >"$T/out" 2>&1 ||
	fail "restart --rolling: $(cat "$T/out")"
for i in 0 1 2 3; do
	grep -qx "w@$i: started" "$T/out" || fail "no 'w@$i: started': $(cat "$T/out")"
done
# In order: w@0 before w@1 before w@2 before w@3.
[ "$(grep -o 'w@[0-9]' "$T/out" | tr '\n' ' ')" = "w@0 w@1 w@2 w@3 " ] ||
	fail "not in order: $(cat "$T/out")"
retry 10 ready_since "$t0" || fail "no new ready runs: $(ctl history w)"
down_windows >"$T/win"
# Four TERMs, in order, and no two windows down overlap: each instance's
# new run was ready before the next instance got its TERM.
[ "$(cut -d' ' -f1 "$T/win" | tr '\n' ' ')" = "0 1 2 3 " ] ||
	fail "TERMs not one per instance in order: $(cat "$T/win")"
awk 'NR > 1 && $2 <= ready { exit 1 } { ready = $3 }' "$T/win" ||
	fail "two instances down at once (instance TERM_us READY_us): $(cat "$T/win")"
n=$(wc -l <"$T/samples")
low=$(lowest)
[ "$n" -eq 0 ] || [ "$low" -ge 3 ] ||
	fail "the sampler saw $low RUNNING of 4 (of $n samples), not 3"
after=$(pids)
for p in $before; do
	case " $after " in *" $p "*) fail "pid $p survived the roll: $before -> $after" ;; esac
done
log "rolled 4 instances one at a time: $(tr '\n' ';' <"$T/win"); $n samples, never fewer than ${low:-?} running"

# A failure ends the roll: w@2 does not come back, w@3 is not touched.
# shellcheck disable=SC2086
track $after
p3=$(job_pid w@3)
touch "$T/broken"
rc=0
ctl restart --rolling w >"$T/out2" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "a failed roll exited $rc: $(cat "$T/out2")"
grep -q '^w@2: BACKOFF' "$T/out2" || fail "no failure of w@2: $(cat "$T/out2")"
grep -qx 'rolling restart stopped; not restarted: w@3' "$T/out2" ||
	fail "no 'not restarted' line: $(cat "$T/out2")"
[ "$(job_pid w@3)" = "$p3" ] || fail "w@3 was restarted after the failure"
is_state w@3 RUNNING || fail "w@3 is $(state w@3)"

# --rolling needs the waits.
rc=0
ctl restart --rolling --no-wait w >"$T/out3" 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "--rolling --no-wait exited $rc: $(cat "$T/out3")"
stop_vigild
