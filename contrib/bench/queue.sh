#!/bin/bash
# Queue throughput: messages per second end to end for a trivial command
# (`true`) at concurrency 1, 2 and 8, against a bare posix_spawn + waitpid
# loop (spawnloop.c, the physical ceiling), and enqueues per second through
# vigilctl (vigild running) and through `enqueue --direct` (vigild down).
#
# usage: contrib/bench/queue.sh [MESSAGES] [REPETITIONS]
# VIGILD and VIGILCTL name the binaries (default: the build in the tree).
# Prints a markdown table of medians with min-max.
set -eu

N=${1:-1000}
REPS=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
: "${VIGILD:=$here/../../supervisord/vigild}"
: "${VIGILCTL:=$here/../../supervisord/vigilctl}"
T=$(mktemp -d "${TMPDIR:-/tmp}/vigil-bench.XXXXXX")
PID=
cleanup() {
	if [ -n "$PID" ]; then
		kill -TERM "$PID" 2>/dev/null || true
		wait "$PID" 2>/dev/null || true
	fi
	rm -rf "$T"
}
trap cleanup EXIT
${CC:-cc} -O2 -o "$T/spawnloop" "$here/spawnloop.c"

now_ns() { date +%s%N; }
# stats V...: "median (min-max)" of integers.
stats() {
	printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END {
		printf "%d (%d-%d)", v[int((NR + 1) / 2)], v[1], v[NR] }'
}

# fresh C: a new directory with queue job q at concurrency C, not started.
fresh() {
	rm -rf "$T/d"
	mkdir -p "$T/d/jobs" "$T/d/state"
	: >"$T/d/vigil.conf"
	printf 'kind = "queue"\nconcurrency = %s\nautostart = false\ncommand = "true"\n' \
		"$1" >"$T/d/jobs/q.conf"
}
# start: vigild on that directory.
start() {
	"$VIGILD" -c "$T/d/vigil.conf" -j "$T/d/jobs" --runtime-dir "$T/d/run" \
		--state-dir "$T/d/state" --log-dir "$T/d/log" --log-level warning \
		>>"$T/vigild.log" 2>&1 &
	PID=$!
	for _ in $(seq 1 500); do
		ctl ping >/dev/null 2>&1 && return 0
		sleep 0.01
	done
	echo "vigild did not start" >&2
	exit 1
}
stop() {
	kill -TERM "$PID"
	wait "$PID" || true
	PID=
}
ctl() { "$VIGILCTL" -s "$T/d/run/vigild.sock" "$@"; }
left() { ctl --json queue q | jq '.queues[0] | .available + .delayed + .running'; }

# rate C: messages/s of vigild at concurrency C, N messages queued first.
rate() {
	local i t0 t1 deadline
	fresh "$1"
	for i in $(seq 1 "$N"); do
		"$VIGILCTL" --state-dir "$T/d/state" enqueue --direct q "m$i" >/dev/null 2>&1
	done
	start
	t0=$(now_ns)
	ctl start q >/dev/null
	deadline=$((t0 + 600000000000))
	while [ "$(left)" != 0 ]; do
		[ "$(now_ns)" -lt "$deadline" ] || {
			echo "queue not drained" >&2
			exit 1
		}
		sleep 0.005
	done
	t1=$(now_ns)
	stop
	echo $((N * 1000000000 / (t1 - t0)))
}

enqueue_rate() {
	local i t0 t1 direct=$1
	fresh 1
	[ "$direct" = 1 ] || start
	t0=$(now_ns)
	for i in $(seq 1 "$N"); do
		if [ "$direct" = 1 ]; then
			"$VIGILCTL" --state-dir "$T/d/state" enqueue --direct q "m$i" >/dev/null 2>&1
		else
			ctl enqueue q "m$i" >/dev/null
		fi
	done
	t1=$(now_ns)
	[ "$direct" = 1 ] || stop
	echo $((N * 1000000000 / (t1 - t0)))
}

echo "| workload | vigil | bare spawn loop | vigil/bare |"
echo "|---|---|---|---|"
for c in 1 2 8; do
	v='' b=
	for _ in $(seq 1 "$REPS"); do
		v="$v $(rate "$c")"
		b="$b $("$T/spawnloop" "$N" "$c" true)"
	done
	# shellcheck disable=SC2086
	vm=$(stats $v | cut -d' ' -f1) bm=$(stats $b | cut -d' ' -f1)
	# shellcheck disable=SC2086
	echo "| messages/s, concurrency $c | $(stats $v) | $(stats $b) | $((100 * vm / bm)) % |"
done
for d in 0 1; do
	e=
	for _ in $(seq 1 "$REPS"); do e="$e $(enqueue_rate "$d")"; done
	# shellcheck disable=SC2086
	echo "| enqueues/s, $([ "$d" = 1 ] && echo "--direct (vigild down)" || echo "vigilctl enqueue") | $(stats $e) | | |"
done
