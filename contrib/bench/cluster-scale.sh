#!/bin/bash
# Cluster mode at scale (issue 35, item 8), with the test suite's harness:
# K vigild "nodes" on this machine and M cluster services (jobs of 100
# instances of `sleep`) against one private PostgreSQL with durable
# commits.  The nodes start together and split the leases between them;
# then, over SECONDS of steady state:
#  - the database's transactions per second (pg_stat_database), the
#    vigild statements behind them (each node renews every lease it holds
#    in one statement per renew_interval; standbys bid when a lease could
#    change hands);
#  - PostgreSQL's CPU (every server process) and all the nodes' vigild
#    CPU, in total and per 1,000 leases;
#  - the failover under that load: SIGKILL of the node that holds the
#    most leases, time until every lease is held again by a live node.
# Timings: lease_ttl 10s, renew_interval 2s (query and connect timeouts
# 2s, fence_margin 1s).
#
# usage: contrib/bench/cluster-scale.sh [K] [M] [SECONDS]   (default 10 1000 60)
# VIGILD and VIGILCTL name the binaries (default: the build in the tree).
# Needs root and PostgreSQL (as the cluster tests do).  Prints markdown.
set -eu

K=${1:-10}
M=${2:-1000}
SECS=${3:-60}
here=$(cd "$(dirname "$0")" && pwd)
: "${VIGILD:=$here/../../supervisord/vigild}"
: "${VIGILCTL:=$here/../../supervisord/vigilctl}"
: "${HELPERS:=$here/../../tests/helpers}"
: "${TOP_SRCDIR:=$here/../..}"
export VIGILD VIGILCTL HELPERS
CLUSTER_MAX_NODES=$K
NODE_STOP_TIMEOUT=60
CLUSTER_LEASE_TTL=10s CLUSTER_RENEW_INTERVAL=2s CLUSTER_QUERY_TIMEOUT=2s \
	CLUSTER_CONNECT_TIMEOUT=2s CLUSTER_FENCE_MARGIN=1s
src=$TOP_SRCDIR/tests/integration
. "$src/lib.sh"
. "$src/pg-lib.sh"
. "$src/cluster-lib.sh"
set +x
[ "$((M % 100))" = 0 ] || fail "M must be a multiple of 100"
pg_need
pg_start
pg_sql "ALTER SYSTEM SET fsync = on" >/dev/null
pg_sql "ALTER SYSTEM SET max_connections = $((2 * K + 20))" >/dev/null
pg_restart
for i in $(seq 4 "$K"); do
	pg_psql -c "CREATE ROLE n$i LOGIN IN ROLE vigil" -c "ALTER ROLE n$i SET role = 'vigil'" >/dev/null
done

CLUSTER_NODES=$(seq -s ' ' 1 "$K")
for j in $(seq 1 $((M / 100))); do
	cluster_job "s$j" <<JOB
command = "sleep 1000000"
cluster = true
instances = 100
stop_timeout = "500ms"
JOB
done

held() { pg_sql "SELECT count(*) FROM vigil.lease WHERE holder IS NOT NULL AND expires_at > now()" 2>/dev/null || echo 0; }
all_held() { [ "$(held)" = "$M" ]; }
hz=$(getconf CLK_TCK)
pm=$(head -n 1 "$PGDATA_T/postmaster.pid")
# CPU ticks of PostgreSQL (the postmaster and its children) and of the nodes.
pg_ticks() {
	local p t=0
	for p in $pm $(ps --ppid "$pm" -o pid=); do
		t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null || echo 0)))
	done
	echo "$t"
}
node_ticks() {
	local i t=0
	for i in $CLUSTER_NODES; do
		[ -n "${NODE_PID[i]:-}" ] || continue
		t=$((t + $(awk '{ print $14 + $15 }' "/proc/${NODE_PID[i]}/stat" 2>/dev/null || echo 0)))
	done
	echo "$t"
}
xacts() { pg_sql "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = 'vigil'"; }

t0=$(now_ms)
# shellcheck disable=SC2086
nodes_start_together $CLUSTER_NODES
retry 300 all_held || fail "only $(held) of $M leases held"
up_ms=$(($(now_ms) - t0))
spread=$(pg_sql "SELECT string_agg(n::text, ' ' ORDER BY n DESC) FROM (SELECT count(*) AS n FROM vigil.lease WHERE holder IS NOT NULL GROUP BY holder) c")

sleep 5
x0=$(xacts) p0=$(pg_ticks) v0=$(node_ticks) s0=$(now_ms)
sleep "$SECS"
x1=$(xacts) p1=$(pg_ticks) v1=$(node_ticks) s1=$(now_ms)
el=$((s1 - s0))
tps=$(((x1 - x0) * 1000 / el))
pg_pct=$(awk -v t="$((p1 - p0))" -v hz="$hz" -v el="$el" 'BEGIN { printf "%.1f", 100 * t / hz / (el / 1000) }')
v_pct=$(awk -v t="$((v1 - v0))" -v hz="$hz" -v el="$el" 'BEGIN { printf "%.1f", 100 * t / hz / (el / 1000) }')
per_k() { awk -v p="$1" -v m="$M" 'BEGIN { printf "%.2f", p * 1000 / m }'; }

# Failover: the node with the most leases dies.
victim=$(pg_sql "SELECT substr(holder, 2) FROM vigil.lease WHERE holder IS NOT NULL GROUP BY holder ORDER BY count(*) DESC LIMIT 1")
lost=$(pg_sql "SELECT count(*) FROM vigil.lease WHERE holder = 'n$victim'")
t0=$(now_ms)
node_kill "$victim" KILL
back() { [ "$(pg_sql "SELECT count(*) FROM vigil.lease WHERE holder IS NOT NULL AND holder <> 'n$victim' AND expires_at > now()")" = "$M" ]; }
retry 120 back || fail "the leases of n$victim were not all taken over"
fo_ms=$(($(now_ms) - t0))

echo "## $K nodes, $M cluster services (lease_ttl 10s, renew_interval 2s)"
echo
echo "| figure | value |"
echo "| --- | --- |"
echo "| every lease held, from the start of the nodes | $up_ms ms |"
echo "| leases per holder | $spread |"
echo "| database transactions per second, steady (${SECS}s) | $tps |"
echo "| PostgreSQL CPU, steady | $pg_pct % of a core ($(per_k "$pg_pct") % per 1,000 leases) |"
echo "| vigild CPU, all $K nodes, steady | $v_pct % of a core ($(per_k "$v_pct") % per 1,000 leases) |"
echo "| failover: SIGKILL of n$victim holding $lost leases, until all $M held again | $fo_ms ms |"
