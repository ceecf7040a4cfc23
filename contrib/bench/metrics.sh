#!/bin/bash
# The cost of `vigilctl metrics` with many jobs: N services (default
# 1000), stopped and then running, scraped REPETITIONS times (default
# 20) each; beside it `vigilctl ping`, whose round trip is the fixed
# cost of a vigilctl run, so that metrics - ping is about the time spent
# in vigild (and in the transfer of the text).
#
# usage: contrib/bench/metrics.sh [JOBS] [REPETITIONS]
# VIGILD and VIGILCTL name the binaries (default: the build in the tree).
# Prints a markdown table of medians with min-max, in microseconds.
set -eu

N=${1:-1000}
REPS=${2:-20}
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

now_ns() { date +%s%N; }
stats() {
	printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END {
		printf "%d (%d-%d)", v[int((NR + 1) / 2)], v[1], v[NR] }'
}
ctl() { "$VIGILCTL" -s "$T/run/vigild.sock" "$@"; }
# us COMMAND...: microseconds COMMAND took, its output discarded.
us() {
	local t0
	t0=$(now_ns)
	"$@" >/dev/null
	echo $((($(now_ns) - t0) / 1000))
}
row() {
	local what=$1 p='' m='' bytes
	for _ in $(seq 1 "$REPS"); do
		p="$p $(us ctl ping)"
		m="$m $(us ctl metrics)"
	done
	bytes=$(ctl metrics | wc -c)
	# shellcheck disable=SC2086
	echo "| $what | $(stats $m) | $(stats $p) | $bytes |"
}

mkdir -p "$T/jobs"
: >"$T/vigil.conf"
for i in $(seq 1 "$N"); do
	printf 'command = "sleep 100000"\nautostart = false\n' >"$T/jobs/j$i.conf"
done
"$VIGILD" -c "$T/vigil.conf" -j "$T/jobs" --runtime-dir "$T/run" \
	--state-dir "$T/state" --log-dir "$T/log" --log-level warning \
	>>"$T/vigild.log" 2>&1 &
PID=$!
for _ in $(seq 1 1000); do
	ctl ping >/dev/null 2>&1 && break
	sleep 0.01
done
echo "| $N jobs | metrics (us) | ping (us) | bytes |"
echo "|---|---|---|---|"
row "stopped"
ctl start all >/dev/null
row "running (cgroup figures read)"
