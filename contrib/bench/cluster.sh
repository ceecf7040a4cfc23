#!/bin/bash
# Cluster mode's figures (issue 21), with the test suite's harness: a
# private PostgreSQL (fsync on: durable commits, as in production) and
# vigild "nodes" on this machine.
#  - failover: SIGKILL of the holder's vigild, time until another node's
#    copy beats (REPS times, default 5), with lease_ttl 5s, renew 1s;
#    and a graceful stop (SIGTERM) of the holder, the same way;
#  - renew round trip, as vigild measures it (send to answer), for one
#    node holding N leases (default 100);
#  - an idle node holding those N leases with renew_interval 5s: CPU
#    (user + system) and wakeups (voluntary context switches) of vigild
#    and its keeper over IDLE seconds (default 30);
#  - memory per lease: vigild's RSS with N and N/10 cluster services
#    against the same services without cluster mode.
#
# usage: contrib/bench/cluster.sh [REPS] [N] [IDLE]
# VIGILD and VIGILCTL name the binaries (default: the build in the tree).
# Needs root and PostgreSQL (as the cluster tests do).  Prints markdown.
set -eu

REPS=${1:-5}
N=${2:-100}
IDLE=${3:-30}
here=$(cd "$(dirname "$0")" && pwd)
: "${VIGILD:=$here/../../supervisord/vigild}"
: "${VIGILCTL:=$here/../../supervisord/vigilctl}"
: "${HELPERS:=$here/../../tests/helpers}"
: "${TOP_SRCDIR:=$here/../..}"
export VIGILD VIGILCTL HELPERS
src=$TOP_SRCDIR/tests/integration
. "$src/lib.sh"
. "$src/pg-lib.sh"
. "$src/cluster-lib.sh"
set +x
pg_need
pg_start
# Durable commits, as a production server has them.
pg_sql "ALTER SYSTEM SET fsync = on" >/dev/null
pg_restart

stats() {
	printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END {
		printf "%.0f (%.0f-%.0f)", v[int((NR + 1) / 2)], v[1], v[NR] }'
}
holder() {
	local i
	for i in 1 2 3; do
		if node_runs "$i" svc 2>/dev/null; then
			echo "$i"
			return
		fi
	done
	return 1
}
other_runs() { local x; x=$(holder) && [ "$x" != "$1" ]; }

# --- Failover, TTL 5 s, renew 1 s.
CLUSTER_LEASE_TTL=5s CLUSTER_RENEW_INTERVAL=1s CLUSTER_QUERY_TIMEOUT=1s \
	CLUSTER_CONNECT_TIMEOUT=1s CLUSTER_FENCE_MARGIN=1s
export CLUSTER_LEASE_TTL CLUSTER_RENEW_INTERVAL CLUSTER_QUERY_TIMEOUT \
	CLUSTER_CONNECT_TIMEOUT CLUSTER_FENCE_MARGIN
cluster_job svc <<EOF
command = "sleep 100000"
cluster = true
stop_timeout = "500ms"
EOF
for i in 1 2 3; do node_start "$i"; done
retry 20 holder >/dev/null || fail "nobody runs svc"
kills=() terms=()
for _ in $(seq 1 "$REPS"); do
	h=$(holder)
	# A random phase within the renew interval.
	sleep "0.$((RANDOM % 10))"
	t0=$(now_us)
	node_kill "$h" KILL
	retry 15 other_runs "$h" || fail "no takeover after SIGKILL"
	kills+=("$((($(now_us) - t0) / 1000))")
	node_start "$h"
	h=$(holder)
	t0=$(now_us)
	kill -TERM "$(node_pid "$h")"
	retry 15 other_runs "$h" || fail "no takeover after SIGTERM"
	terms+=("$((($(now_us) - t0) / 1000))")
	node_stop "$h"
	node_start "$h"
done
for i in 1 2 3; do node_stop "$i"; done
echo "## Failover (lease_ttl 5s, renew_interval 1s, fence_margin 1s, $REPS runs)"
echo
echo "| event | another node runs it after, ms: median (min-max) |"
echo "| --- | --- |"
echo "| SIGKILL of the holder's vigild | $(stats "${kills[@]}") |"
echo "| SIGTERM of the holder's vigild (graceful) | $(stats "${terms[@]}") |"
echo

# --- One node, N leases, renew 5 s: renew round trip, idle cost, PSS.
rm -f "$T"/n*/jobs.d/*.conf
for j in $(seq 1 "$N"); do
	printf 'command = "sleep 100000"\ncluster = true\nstop_timeout = "500ms"\n' \
		>"$T/n1/jobs.d/c$j.conf"
done
CLUSTER_LEASE_TTL=30s CLUSTER_RENEW_INTERVAL=5s CLUSTER_QUERY_TIMEOUT=5s \
	CLUSTER_CONNECT_TIMEOUT=5s CLUSTER_FENCE_MARGIN=2s
: >"$(node_log 1)"
node_start 1 'log_level = "debug"'
all_running() { [ "$(nctl 1 --json status | jq '[.jobs[] | select(.state == "RUNNING")] | length')" = "$N" ]; }
retry 60 all_running || fail "not all $N cluster services run"
pid=$(node_pid 1)
kpid=$(for c in /proc/[0-9]*; do
	[ "$(cat "$c/comm" 2>/dev/null)" = vigild-keeper ] &&
		[ "$(awk '{ print $4 }' "$c/stat")" = "$pid" ] && basename "$c"
done | head -n 1)
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
sw() { awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$1/status"; }
# RSS, not PSS: the keeper is a fork of vigild and shares its pages
# until they are written, which halves their PSS by chance.
rss() { awk '/^Rss:/ { print $2 }' "/proc/$1/smaps_rollup"; }
sleep 2
c0=$(cpu "$pid") w0=$(sw "$pid") kc0=$(cpu "$kpid") kw0=$(sw "$kpid")
sleep "$IDLE"
c1=$(cpu "$pid") w1=$(sw "$pid") kc1=$(cpu "$kpid") kw1=$(sw "$kpid")
mapfile -t rtts < <(grep -o "renewed $N leases in [0-9]* us" "$(node_log 1)" |
	awk '{ print $5 }')
node_stop 1

# running_at SOCK COUNT: COUNT instances RUNNING in that vigild.
running_at() {
	[ "$("$VIGILCTL" -s "$1" --json status 2>/dev/null |
		jq '[.jobs[] | select(.state == "RUNNING")] | length')" = "$2" ]
}

# RSS of vigild with COUNT services, cluster (node 1) or local.
rss_of() {
	local kind=$1 count=$2 j d=$T/local p sock
	rm -f "$T"/n1/jobs.d/*.conf
	for j in $(seq 1 "$count"); do
		printf 'command = "sleep 100000"\nstop_timeout = "500ms"\n%s' \
			"$([ "$kind" = cluster ] && echo 'cluster = true')" \
			>"$T/n1/jobs.d/c$j.conf"
	done
	if [ "$kind" = cluster ]; then
		node_start 1 >&2
		p=$(node_pid 1)
		sock=$T/n1/run/vigild.sock
	else
		: >"$T/local.conf"
		rm -rf "$d"
		mkdir -p "$d"
		"$VIGILD" -c "$T/local.conf" -j "$T/n1/jobs.d" --runtime-dir "$d/run" \
			--state-dir "$d/state" --log-dir "$d/log" >"$d/vigild.log" 2>&1 &
		p=$!
		track "$p"
		sock=$d/run/vigild.sock
	fi
	retry 60 running_at "$sock" "$count" || fail "not all $count $kind services run"
	sleep 2
	rss "$p"
	if [ "$kind" = cluster ]; then
		node_stop 1 >&2
	else
		kill -TERM "$p"
		retry 20 dead "$p" || true
		wait "$p" 2>/dev/null || true
	fi
}
n10=$((N / 10))
c_n=$(rss_of cluster "$N")
l_n=$(rss_of local "$N")
c_10=$(rss_of cluster "$n10")
l_10=$(rss_of local "$n10")
per=$((((c_n - l_n) - (c_10 - l_10)) * 1024 / (N - n10)))
fixed=$(((c_10 - l_10) - per * n10 / 1024))
hz=$(getconf CLK_TCK)
echo "## One node holding $N leases"
echo
echo "| figure | value |"
echo "| --- | --- |"
echo "| renew round trip (one statement for all $N), us: median (min-max) of ${#rtts[@]} | $(stats "${rtts[@]}") |"
echo "| vigild CPU over ${IDLE}s idle, renew 5s | $(((c1 - c0) * 1000 / hz)) ms |"
echo "| vigild wakeups over ${IDLE}s idle | $((w1 - w0)) |"
echo "| keeper CPU, wakeups over ${IDLE}s | $(((kc1 - kc0) * 1000 / hz)) ms, $((kw1 - kw0)) |"
echo "| vigild RSS, KB: $N services cluster / local; $n10 cluster / local | $c_n / $l_n; $c_10 / $l_10 |"
echo "| memory per lease (the cluster-minus-local difference, from $n10 to $N services) | $per bytes |"
echo "| cluster mode's own cost (libpq mapped, two connections, the keeper) | $fixed KB |"
