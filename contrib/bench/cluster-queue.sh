#!/bin/bash
# Cluster queues' figures (issue 22), with the test suite's harness: a
# private PostgreSQL (fsync on: durable commits, as in production) and
# vigild "nodes" on this machine, with the production timings (lease_ttl
# 30s, renew_interval 5s, query_timeout 5s) and log_level "warn".
#  - messages per second end to end for a queue job whose command is
#    `true`, N messages (default 2000) queued first, at concurrency 1, 2
#    and 8: a bare posix_spawn + waitpid loop (spawnloop.c, the physical
#    ceiling) with that many children at once; the local queue (SQLite)
#    of one vigild without cluster mode, N `vigilctl enqueue --direct`
#    first, as queue.sh does; the cluster queue worked by one node; the
#    cluster queue worked by three nodes, each with that concurrency.  For
#    the cluster queue the N messages are enqueued in one SQL statement
#    (vigil.enqueue over generate_series) while the job is stopped on every
#    node (autostart = false); the clock runs from `vigilctl start q` (on
#    each node at once) until `vigilctl --json queue q` shows nothing
#    available, delayed or running (polled every 10 ms);
#  - vigil.enqueue's rate, messages committed per second (pgbench's tps,
#    one `SELECT vigil.enqueue('q', 'x')` per transaction, 5 s, over the
#    unix socket) from 1 and from 8 clients, with every node stopped: only
#    the enqueue is measured;
#  - enqueue-to-start latency with NOTIFY: a client (one psql session)
#    takes the wall clock just before each `SELECT vigil.enqueue('lat',
#    '<usec>')`; the job's command (a small C program) takes it as it
#    starts and reports the difference.  LAT enqueues (default 200), one at
#    a time, each once the previous one has started, 20 ms apart; p50 and
#    p99 with one idle node (concurrency 1), then with three.
#
# usage: contrib/bench/cluster-queue.sh [N] [REPS]
# (defaults 2000 and 3); LAT in the environment: the enqueues per latency
# run.  VIGILD, VIGILCTL, HELPERS and TOP_SRCDIR name the binaries and the
# sources (default: the build in the tree); CC the C compiler.  Needs root
# and PostgreSQL with pgbench (as the cluster tests do).  Prints markdown:
# medians with (min-max) over REPS repetitions.
set -eu

N=${1:-2000}
REPS=${2:-3}
: "${LAT:=200}"
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
cluster_need
pg_start
PGBENCH=$PGBIN/pgbench
[ -x "$PGBENCH" ] || fail "no pgbench ($PGBENCH)"
${CC:-cc} -O2 -o "$T/spawnloop" "$here/spawnloop.c"
# The latency job's command: the wall clock in microseconds as it starts,
# minus the payload (the client's clock before its enqueue), one line to
# the FIFO $1 (which the bench holds open for reading).
cat >"$T/latency.c" <<'EOF'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	struct timespec ts;
	long long now;
	char buf[64], line[64];
	size_t got = 0;
	ssize_t n;
	int fd, len;

	clock_gettime(CLOCK_REALTIME, &ts);
	now = (long long)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
	if (argc < 2)
		return (2);
	while (got < sizeof buf - 1 &&
	    (n = read(0, buf + got, sizeof buf - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	if ((fd = open(argv[1], O_WRONLY | O_NONBLOCK | O_CLOEXEC)) == -1)
		return (2);
	len = snprintf(line, sizeof line, "%lld\n", now - strtoll(buf, NULL, 10));
	return (write(fd, line, (size_t)len) == len ? 0 : 2);
}
EOF
${CC:-cc} -O2 -o "$T/latency" "$T/latency.c"

# Durable commits, as a production server has them.
pg_sql "ALTER SYSTEM SET fsync = on" >/dev/null
pg_restart
# The production timings (vigil.conf(5)'s defaults).
CLUSTER_LEASE_TTL=30s CLUSTER_RENEW_INTERVAL=5s CLUSTER_QUERY_TIMEOUT=5s \
	CLUSTER_CONNECT_TIMEOUT=5s CLUSTER_FENCE_MARGIN=2s
export CLUSTER_LEASE_TTL CLUSTER_RENEW_INTERVAL CLUSTER_QUERY_TIMEOUT \
	CLUSTER_CONNECT_TIMEOUT CLUSTER_FENCE_MARGIN
NODE_CONF='log_level = "warn"'

# stats V...: "median (min-max)" of numbers, as integers; statsf: with
# two decimals.
stats() {
	printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END {
		printf "%.0f (%.0f-%.0f)", v[int((NR + 1) / 2)], v[1], v[NR] }'
}
statsf() {
	printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END {
		printf "%.2f (%.2f-%.2f)", v[int((NR + 1) / 2)], v[1], v[NR] }'
}
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
us() { echo "${EPOCHREALTIME/./}"; }

# qfield KEY CTL...: KEY of q in `CTL... --json queue q` (e.g. nctl 1).
qfield() {
	local k=$1
	shift
	"$@" --json queue q | jq -r --arg k "$k" '.queues[0][$k] // empty | tostring'
}
# drained CTL...: wait (10 ms polls, 600 s at most) until q shows nothing
# available, delayed or running; fail if a message is dead.
drained() {
	local deadline left
	deadline=$(($(now_ms) + 600000))
	while :; do
		left=$("$@" --json queue q | jq '.queues[0] | .available + .delayed + .running')
		[ "$left" != 0 ] || break
		[ "$(now_ms)" -lt "$deadline" ] || fail "q is not drained in 600 s: $("$@" queue q)"
		sleep 0.01
	done
	[ "$(qfield dead "$@")" = 0 ] || fail "dead messages in q: $("$@" queue q)"
}

# --- The local vigild (no cluster mode) under $T/local.
LD=$T/local LPID=
lctl() { "$VIGILCTL" -s "$LD/run/vigild.sock" "$@"; }
local_start() {
	"$VIGILD" -c "$LD/vigil.conf" -j "$LD/jobs" --runtime-dir "$LD/run" \
		--state-dir "$LD/state" --log-dir "$LD/log" --log-level warn \
		>>"$T/local.log" 2>&1 &
	LPID=$!
	track "$LPID"
	retry 20 lctl ping >/dev/null 2>&1 ||
		fail "the local vigild did not answer ping; log: $(tail -n 20 "$T/local.log")"
}
local_stop() {
	[ -n "$LPID" ] || return 0
	kill -TERM "$LPID" 2>/dev/null || true
	retry 20 dead "$LPID" || fail "the local vigild did not stop"
	wait "$LPID" || true
	LPID=
}
_local_cleanup() {
	if [ -n "$LPID" ]; then
		kill -TERM "$LPID" 2>/dev/null || true
		retry 10 dead "$LPID" || true
	fi
	return 0
}
at_cleanup _local_cleanup

# rate_local C: in RATE, messages/s of the local queue at concurrency C,
# N messages queued first (vigild down, `enqueue --direct`), the clock from
# `vigilctl start q` until the queue is empty.
rate_local() {
	local i t0 t1
	rm -rf "$LD"
	mkdir -p "$LD/jobs"
	mkdir -m 0700 "$LD/state"
	: >"$LD/vigil.conf"
	printf 'kind = "queue"\nconcurrency = %s\nautostart = false\ncommand = "true"\n' \
		"$1" >"$LD/jobs/q.conf"
	for i in $(seq 1 "$N"); do
		"$VIGILCTL" --state-dir "$LD/state" enqueue --direct q "m$i" \
			>/dev/null 2>>"$T/local.log" || fail "enqueue --direct failed"
	done
	local_start
	[ "$(qfield available lctl)" = "$N" ] || fail "the local q has not $N messages: $(lctl queue q)"
	t0=$(us)
	lctl start q >/dev/null
	drained lctl
	t1=$(us)
	local_stop
	RATE=$((N * 1000000 / (t1 - t0)))
}

# rate_cluster C I...: in RATE, messages/s of the cluster queue q (at
# concurrency C) worked by the nodes I (running, q stopped on each): N
# messages enqueued in one statement, the clock from `vigilctl start q`
# on each node at once until the queue is empty; then q stopped again on
# each.  In RUNS[I], the runs node I made.
rate_cluster() {
	local c=$1 i p t0 t1 s0 pids=() r0=()
	shift
	s0=$(held_seq)
	[ "$(pg_sql "SELECT count(*) FROM (SELECT vigil.enqueue('q', 'm' || g)
		FROM generate_series(1, $N) g) s")" = "$N" ] || fail "the enqueue of $N messages failed"
	[ "$(qfield available nctl 1)" = "$N" ] || fail "q has not $N messages available: $(nctl 1 queue q)"
	for i in "$@"; do r0[i]=$(runs_of "$i"); done
	t0=$(us)
	for i in "$@"; do
		nctl "$i" start q >/dev/null &
		pids+=("$!")
	done
	for p in "${pids[@]}"; do wait "$p" || fail "vigilctl start q failed"; done
	drained nctl 1
	t1=$(us)
	for i in "$@"; do nctl "$i" stop q >/dev/null; done
	# Each node records its start and stop of each slot (vigil.lease's
	# held_seq) after it answered: let them land before a node stops.
	retry 10 held_seq_is $((s0 + 2 * $# * c)) ||
		fail "the nodes' starts and stops of q are not all in vigil.lease"
	RATE=$((N * 1000000 / (t1 - t0)))
	for i in "$@"; do RUNS[i]=$(($(runs_of "$i") - r0[i])); done
}
# runs_of I: the runs of q that node I saw succeed (its metrics).
runs_of() {
	nctl "$1" metrics | awk '$1 == "vigil_job_runs_total{job=\"q\",outcome=\"success\"}" { print $2 }'
}
# held_seq: the sum of q's vigil.lease.held_seq; held_seq_is S: it is S.
held_seq() {
	pg_sql "SELECT coalesce(sum(l.held_seq), 0) FROM vigil.lease l
		JOIN vigil.job j ON j.id = l.job_id WHERE j.name = 'q'"
}
held_seq_is() { [ "$(held_seq)" = "$1" ]; }

# up I...: start these nodes (node_start, in this shell)
# and wait until each has reached the database: its own `vigilctl
# cluster` shows it alive.
up() {
	local i
	for i in "$@"; do node_start "$i" "$NODE_CONF"; done
	for i in "$@"; do
		retry 20 node_ready "$i" || fail "node $i did not reach the database"
	done
}
node_ready() {
	nctl "$1" --json cluster 2>/dev/null |
		jq -e --arg n "n$1" 'any(.nodes[]; .name == $n and .alive)' >/dev/null
}
job_known() {
	[ "$(pg_sql "SELECT count(*) FROM vigil.job WHERE name = '$1'" 2>/dev/null)" = 1 ]
}

# --- 1. Messages/s end to end.
declare -A A B C D SHARE
RUNS=()
for c in 1 2 8; do
	cluster_job q <<EOF
kind = "queue"
cluster = true
concurrency = $c
autostart = false
stop_timeout = "5s"
command = "true"
EOF
	up 1
	retry 20 job_known q || fail "q is not in vigil.job"
	for _ in $(seq 1 "$REPS"); do
		A[$c]="${A[$c]:-} $("$T/spawnloop" "$N" "$c" true)"
		rate_local "$c"
		B[$c]="${B[$c]:-} $RATE"
		rate_cluster "$c" 1
		C[$c]="${C[$c]:-} $RATE"
		up 2 3
		rate_cluster "$c" 1 2 3
		D[$c]="${D[$c]:-} $RATE"
		SHARE[$c]="${SHARE[$c]:-}${SHARE[$c]:+; }${RUNS[1]}/${RUNS[2]}/${RUNS[3]}"
		node_stop 2
		node_stop 3
	done
	node_stop 1
done

# --- 2. vigil.enqueue from 1 and 8 clients, every node stopped.
printf "SELECT vigil.enqueue('q', 'x');\n" >"$T/enqueue.sql"
declare -A E
for _ in $(seq 1 "$REPS"); do
	for c in 1 8; do
		"$PGBENCH" -h "$PGSOCK_T" -p "$PGPORT_T" -U postgres -n -T 5 \
			-c "$c" -j "$([ "$c" = 1 ] && echo 1 || echo 2)" \
			-f "$T/enqueue.sql" vigil >"$T/pgbench.out" 2>&1 ||
			fail "pgbench failed: $(tail -n 20 "$T/pgbench.out")"
		tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$T/pgbench.out")
		done_=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$T/pgbench.out")
		[ -n "$tps" ] && [ -n "$done_" ] || fail "no tps in pgbench's output: $(cat "$T/pgbench.out")"
		rows=$(pg_sql "WITH d AS (DELETE FROM vigil.message
			WHERE job_id = (SELECT id FROM vigil.job WHERE name = 'q')
			RETURNING 1) SELECT count(*) FROM d")
		[ "$rows" = "$done_" ] ||
			log "pgbench -c $c: $done_ transactions but $rows messages" >&2
		pg_sql "VACUUM vigil.message" >/dev/null
		E[$c]="${E[$c]:-} $tps"
	done
done

# --- 3. Enqueue-to-start latency, one then three idle nodes.
rm -f "$T"/n*/jobs.d/q.conf
cluster_job lat <<EOF
kind = "queue"
cluster = true
concurrency = 1
stop_timeout = "5s"
command = {"$T/latency", "$T/lat.fifo"}
EOF
mkfifo "$T/lat.fifo" "$T/sql.fifo"
# Read-write: never blocks, and a run's open finds a reader.
exec {rfd}<>"$T/lat.fifo"
"$PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$PGSOCK_T" -p "$PGPORT_T" \
	-U postgres -d vigil <"$T/sql.fifo" >"$T/lat.ids" 2>"$T/lat.psql" &
PSQL=$!
track "$PSQL"
exec {sfd}>"$T/sql.fifo"

# lat_one: one enqueue, its latency in microseconds in L once it started
# (10 s at most).
lat_one() {
	local t
	t=${EPOCHREALTIME/./}
	printf "SELECT vigil.enqueue('lat', '%s');\n" "$t" >&"$sfd"
	IFS= read -r -t 10 -u "$rfd" L ||
		fail "no start within 10 s of an enqueue; psql: $(cat "$T/lat.psql"); $(nctl 1 queue lat)"
}
# pct P V...: the P-th percentile (nearest rank) of V..., in ms.
pct() {
	local p=$1
	shift
	printf '%s\n' "$@" | sort -n | awk -v p="$p" '{ v[NR] = $1 } END {
		i = int(p * NR / 100); if (i < p * NR / 100) i++; if (i < 1) i = 1
		printf "%.3f", v[i] / 1000 }'
}
# lat_run NAME: LAT enqueues 20 ms apart after 3 not counted; their p50
# and p99 appended to P50[NAME] and P99[NAME].
declare -A P50 P99
lat_run() {
	local v=() i
	for i in $(seq 1 $((LAT + 3))); do
		lat_one
		[ "$i" -le 3 ] || v+=("$L")
		sleep 0.02
	done
	P50[$1]="${P50[$1]:-} $(pct 50 "${v[@]}")"
	P99[$1]="${P99[$1]:-} $(pct 99 "${v[@]}")"
}
# (The nodes must not hold the FIFOs open: psql's EOF, the runs' reader.)
up 1 {sfd}>&- {rfd}<&-
retry 20 job_known lat || fail "lat is not in vigil.job"
for _ in $(seq 1 "$REPS"); do lat_run 1; done
up 2 3 {sfd}>&- {rfd}<&-
for _ in $(seq 1 "$REPS"); do lat_run 3; done
exec {sfd}>&-
retry 10 dead "$PSQL" || fail "psql did not exit"
wait "$PSQL" || fail "psql failed: $(cat "$T/lat.psql")"
left=$(nctl 1 --json queue lat | jq '.queues[0] | .available + .delayed + .running + .dead')
[ "$left" = 0 ] || log "lat ends with $left messages: $(nctl 1 queue lat)" >&2
for i in 1 2 3; do node_stop "$i"; done
exec {rfd}<&-

# --- The tables.
echo "## Cluster queues: $N messages, $REPS runs, PostgreSQL $(pg_sql "SHOW server_version" | cut -d' ' -f1) (fsync $(pg_sql "SHOW fsync"), synchronous_commit $(pg_sql "SHOW synchronous_commit")), $(nproc) CPUs"
echo
echo "### Messages/s end to end, command \`true\`: median (min-max)"
echo
echo "| concurrency | bare spawn loop | local queue (SQLite, one vigild) | cluster queue, 1 node | cluster queue, 3 nodes (each at that concurrency) | 1 node / local | 3 nodes / 1 node | runs on n1/n2/n3, each 3-node run |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
pc() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f %%", 100 * a / b }'; }
for c in 1 2 8; do
	# shellcheck disable=SC2086
	echo "| $c | $(stats ${A[$c]}) | $(stats ${B[$c]}) | $(stats ${C[$c]}) | $(stats ${D[$c]}) | $(pc "$(median ${C[$c]})" "$(median ${B[$c]})") | $(pc "$(median ${D[$c]})" "$(median ${C[$c]})") | ${SHARE[$c]} |"
done
echo
echo "### vigil.enqueue, one per transaction, 5 s (pgbench, unix socket, nodes stopped)"
echo
echo "| clients | messages committed/s: median (min-max) |"
echo "| --- | --- |"
for c in 1 8; do
	# shellcheck disable=SC2086
	echo "| $c | $(stats ${E[$c]}) |"
done
echo
echo "### Enqueue-to-start latency (NOTIFY), $LAT enqueues one at a time, ms: median (min-max) of the runs' percentiles"
echo
echo "| idle nodes (concurrency 1 each) | p50 | p99 |"
echo "| --- | --- | --- |"
for n in 1 3; do
	# shellcheck disable=SC2086
	echo "| $n | $(statsf ${P50[$n]}) | $(statsf ${P99[$n]}) |"
done
