#!/bin/bash
# shellcheck disable=SC2317 # predicates called through retry
# Cluster queues from an application's SQL, directly and through
# PgBouncer in transaction mode.  Three nodes run a queue job q
# (cluster = true) whose run appends "PAYLOAD ID NODE ATTEMPT" to a file;
# the application is tests/helpers/pg-enqueue.py (psycopg2), which in one
# transaction each inserts an order row into public.app_order and calls
# vigil.enqueue('q', 'order-<i>'), and commits the even i, rolls back
# the odd ones.
# (1) The application connects directly and enqueues 40: exactly the 20
# committed messages (order-2, order-4, ... order-40) run, each once,
# with the ids vigil.enqueue returned; no rolled-back one ever runs (the
# queue empty, then more than two renew intervals watched); app_order has
# exactly the 20 committed rows: a message exists iff its data does.
# Each node has two sessions (lease and work), both direct.
# (2) The nodes again, with work_conninfo through PgBouncer (pool_mode
# transaction) and conninfo (the lease connection, LISTEN) direct:
# - 10 more through PgBouncer from the application (5 committed) and 3
#   by `vigilctl enqueue` on each node: each runs once; the 5 rolled back
#   never; app_order has the 5 rows;
# - `vigilctl queue` (text and --json) and `queue --dead` answer;
# - a job with max_attempts 2 that fails: its message goes dead, with
#   its exit status and output (the outcome statement, through PgBouncer);
# - PgBouncer's SHOW CLIENTS lists the nodes' work connections (users n1,
#   n2, n3, application vigild), SHOW POOLS says transaction; every nX
#   backend of the server is either a node's direct lease connection
#   (one per node, application vigild) or one of PgBouncer's server
#   connections (SHOW SERVERS' remote_pid): no direct work connection
#   is left.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
cluster_need
pgb_need
: "${TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
ENQ=$TOP_SRCDIR/tests/helpers/pg-enqueue.py
[ -f "$ENQ" ] || fail "no $ENQ (TOP_SRCDIR=$TOP_SRCDIR)"
# Debian's python with psycopg2, not whatever python3 the PATH has.
/usr/bin/python3 -c 'import psycopg2' 2>/dev/null ||
	skip_fixable "no psycopg2 for /usr/bin/python3 (python3-psycopg2)"
T0=$(now_ms)
RENEW_MS=500

cat >"$T/run.sh" <<'EOF'
p=$(cat)
echo "$p $VIGIL_MESSAGE_ID $VIGIL_NODE $VIGIL_ATTEMPT" >>"$VIGIL_TEST_ROOT/runs"
EOF
cluster_job q <<EOF
kind = "queue"
cluster = true
concurrency = 2
drain_timeout = "500ms"
stop_timeout = "500ms"
command = {"bash", "$T/run.sh"}
EOF
cluster_job fail <<EOF
kind = "queue"
cluster = true
max_attempts = 2
retry_delay = "200ms"
drain_timeout = "500ms"
stop_timeout = "500ms"
command = {"bash", "-c", "echo boom; exit 3"}
EOF
RUNS=$T/runs
: >"$RUNS"

# qrows JOB: how many messages JOB has in vigil.message.
qrows() {
	pg_sql "SELECT count(*) FROM vigil.message m JOIN vigil.job j
		ON j.id = m.job_id WHERE j.name = '$1'"
}
q_empty() { [ "$(qrows q)" = 0 ]; }
nruns() { wc -l <"$RUNS"; }
has_runs() { [ "$(nruns)" -ge "$1" ]; }
# hold MS N: for MS milliseconds, the runs file stays at N lines.
hold() {
	local deadline=$(($(now_ms) + $1))
	while [ "$(now_ms)" -lt "$deadline" ]; do
		[ "$(nruns)" -eq "$2" ] || return 1
		sleep 0.05
	done
}
# jobs_known: the nodes have registered q and fail.
jobs_known() {
	[ "$(pg_sql "SELECT count(*) FROM vigil.job WHERE name IN ('q', 'fail')
		AND kind = 'queue'" 2>/dev/null)" = 2 ]
}
# backends I: node I's sessions (role nI) with application_name vigild.
backends() {
	pg_sql "SELECT count(*) FROM pg_stat_activity WHERE usename = 'n$1'
		AND application_name = 'vigild'"
}
has_backends() { [ "$(backends "$1")" = "$2" ]; }
# enqueue_app DSN N OUT: the application, N messages in half mode; its
# "i id" lines in OUT.
enqueue_app() {
	/usr/bin/python3 "$ENQ" "$1" q "$2" half >"$3" 2>"$3.err" ||
		fail "pg-enqueue.py $2 half through '$1' failed: $(cat "$3.err")"
}
# expect FILE: from the application's "i id" lines in FILE, the runs
# expected ("order-i id"), sorted.
expect() { awk '{ print "order-" $1, $2 }' "$1" | sort; }
# ran: the runs so far as "PAYLOAD ID", sorted.
ran() { awk '{ print $1, $2 }' "$RUNS" | sort; }

pg_start
for i in 1 2 3; do node_start "$i"; done
retry 10 jobs_known || fail "q and fail are not in vigil.job: $(pg_sql "SELECT * FROM vigil.job")"
log "3 nodes up at +$(($(now_ms) - T0)) ms"

# --- (1) Directly: 40, 20 committed.
for i in 1 2 3; do
	retry 5 has_backends "$i" 2 ||
		fail "n$i: $(backends "$i") sessions, not 2 (lease and work)"
done
log "each node: 2 direct sessions (lease, work)"
t=$(now_ms)
enqueue_app "host=$PGSOCK_T port=$PGPORT_T dbname=vigil user=n1" 40 "$T/app1"
log "40 enqueued (20 committed) in $(($(now_ms) - t)) ms"
check "the application committed 20: $(tr '\n' ';' <"$T/app1")" \
	[ "$(awk '$1 % 2 == 0' "$T/app1" | wc -l)" = 20 ]
check "  only even ones" [ "$(wc -l <"$T/app1")" = 20 ]
retry 15 has_runs 20 || fail "(1) $(nruns) runs, not 20: $(cat "$RUNS")"
retry 5 q_empty || fail "(1) q still has $(qrows q) messages: $(pg_sql "SELECT id, state, convert_from(payload, 'UTF8') FROM vigil.message")"
log "(1) 20 runs, q empty at +$(($(now_ms) - t)) ms"
check "(1) nothing more runs for 3 renew intervals ($(nruns) runs)" hold $((3 * RENEW_MS)) 20
check "(1) the runs are the committed messages, each once, with the ids vigil.enqueue returned" \
	diff <(expect "$T/app1") <(ran)
check "(1) no rolled-back payload ran" \
	[ "$(awk '{ sub(/^order-/, "", $1); if ($1 % 2) print }' "$RUNS" | wc -l)" = 0 ]
check "(1) every run was attempt 1: $(awk '$4 != 1' "$RUNS" | tr '\n' ';')" \
	[ "$(awk '$4 != 1' "$RUNS" | wc -l)" = 0 ]
log "(1) runs per node: $(awk '{ print $3 }' "$RUNS" | sort | uniq -c | tr -s ' \n' ' ')"
check "(1) app_order: exactly the committed rows, the payloads that ran" \
	diff <(pg_sql "SELECT note FROM public.app_order ORDER BY note") \
	<(awk '{ print $1 }' "$RUNS" | sort)
check "(1) app_order: 20 rows, even ids" \
	[ "$(pg_sql "SELECT count(*), bool_and(id % 2 = 0) FROM public.app_order")" = "20|t" ]
checks_passed

# --- (2) The work connections through PgBouncer (transaction mode).
for i in 1 2 3; do node_stop "$i"; done
mv "$RUNS" "$T/runs.1"
: >"$RUNS"
pg_psql -c "TRUNCATE public.app_order" >/dev/null
pgb_start transaction
for i in 1 2 3; do
	NODE_CLUSTER_EXTRA[i]="work_conninfo = \"$(pgb_conninfo "$i")\""
	node_start "$i"
	grep -qF "work_conninfo = \"host=127.0.0.1 port=$PGBPORT_T " "$T/n$i/vigil.conf" ||
		fail "n$i: no work_conninfo in its cluster section: $(cat "$T/n$i/vigil.conf")"
done
log "3 nodes up again (work through PgBouncer) at +$(($(now_ms) - T0)) ms"

t=$(now_ms)
enqueue_app "$(pgb_conninfo 1)" 10 "$T/app2"
check "(2) the application through PgBouncer committed 5: $(tr '\n' ';' <"$T/app2")" \
	[ "$(awk '$1 % 2 == 0' "$T/app2" | wc -l)-$(wc -l <"$T/app2")" = 5-5 ]
: >"$T/ctl"
for i in 1 2 3; do
	id=$(nctl "$i" enqueue q "ctl-$i") || fail "n$i: vigilctl enqueue q failed"
	echo "ctl-$i $id" >>"$T/ctl"
done
retry 10 has_runs 8 || fail "(2) $(nruns) runs, not 8: $(cat "$RUNS"); logs: $(tail -n 5 "$T"/n[123]/vigild.log)"
retry 5 q_empty || fail "(2) q still has $(qrows q) messages"
log "(2) 8 runs, q empty at +$(($(now_ms) - t)) ms"
check "(2) nothing more runs for 3 renew intervals ($(nruns) runs)" hold $((3 * RENEW_MS)) 8
check "(2) the runs: the 5 committed and the 3 from vigilctl, each once, with their ids" \
	diff <({ expect "$T/app2"; cat "$T/ctl"; } | sort) <(ran)
check "(2) app_order: the 5 committed rows" \
	[ "$(pg_sql "SELECT string_agg(note, ' ' ORDER BY id) FROM public.app_order")" = "order-2 order-4 order-6 order-8 order-10" ]
log "(2) runs per node: $(awk '{ print $3 }' "$RUNS" | sort | uniq -c | tr -s ' \n' ' ')"

# vigilctl queue, through PgBouncer.
nctl 2 queue >"$T/queue" || fail "n2: vigilctl queue failed: $(cat "$T/queue")"
check "(2) queue (n2): q with 0 available, 0 running: $(tr '\n' ';' <"$T/queue")" \
	grep -Eq '^q +0 +0 +0 +0 +-' "$T/queue"
check "(2) --json queue q (n3): all 0" \
	[ "$(nctl 3 --json queue q | jq -c '.queues[0] | [.job, .available, .delayed, .running, .dead]')" = '["q",0,0,0,0]' ]

# A failing message goes dead through PgBouncer.
f=$(nctl 1 enqueue fail x) || fail "n1: enqueue fail failed"
is_dead() { [ "$(pg_sql "SELECT state FROM vigil.message WHERE id = $f")" = 2 ]; }
retry 10 is_dead || fail "(2) message $f is not dead: $(pg_sql "SELECT state, attempts, last_error FROM vigil.message WHERE id = $f")"
row=$(pg_sql "SELECT state, attempts, last_exit, position('boom' IN convert_from(output, 'UTF8')) > 0
	FROM vigil.message WHERE id = $f")
check "(2) the dead row: state 2, 2 attempts, last_exit 3, boom in its output ($row)" \
	[ "$row" = "2|2|3|t" ]
nctl 3 queue --dead fail >"$T/dead" || fail "n3: queue --dead fail failed"
check "(2) queue --dead (n3) lists $f, 2 attempts, exit 3: $(tail -n +2 "$T/dead")" \
	grep -Eq "^$f +2 +exit 3 " "$T/dead"
# shellcheck disable=SC2016 # $id is jq's
check "(2) --json queue --dead (n2): $f, total 1" \
	[ "$(nctl 2 --json queue --dead fail | jq --argjson id "$f" '.total == 1 and .messages[0].id == $id and .messages[0].last_exit == 3')" = true ]

# PgBouncer's view: the nodes are its clients.
pgb_show() {
	pg_psql -A -F '|' -P footer=off -U postgres -d pgbouncer \
		-h 127.0.0.1 -p "$PGBPORT_T" -c "SHOW $1"
}
# pgb_cols WHAT COL...: these columns of SHOW WHAT, by name, '|' between.
pgb_cols() {
	local what=$1
	shift
	pgb_show "$what" | awk -F '|' -v cols="$*" 'NR == 1 {
			n = split(cols, want, " ")
			for (i = 1; i <= NF; i++) idx[$i] = i
			for (k = 1; k <= n; k++) if (!(want[k] in idx)) {
				print "no column " want[k] > "/dev/stderr"; exit 1 }
			next }
		{ l = ""; for (k = 1; k <= n; k++) l = l (k > 1 ? "|" : "") $idx[want[k]]; print l }'
}
pgb_show CLIENTS >"$T/clients"
log "SHOW CLIENTS: $(tr '\n' ';' <"$T/clients")"
cols="user database"
head -n 1 "$T/clients" | grep -q '|application_name' && cols="$cols application_name"
pgb_cols CLIENTS "$cols" >"$T/clients.c" || fail "SHOW CLIENTS: $(cat "$T/clients")"
for i in 1 2 3; do
	case $cols in
	*application_name) want="n$i|vigil|vigild" ;;
	*) want="n$i|vigil" ;;
	esac
	check "(2) SHOW CLIENTS: n$i's work connection ($want)" \
		grep -qxF "$want" "$T/clients.c"
done
check "(2) SHOW POOLS: vigil/n1 in transaction mode" \
	grep -qxF "vigil|n1|transaction" <(pgb_cols POOLS "database user pool_mode")

# The server's view: every nX backend is a lease connection (one per
# node, direct) or a PgBouncer server connection.
direct() {
	pg_sql "SELECT pid, usename, application_name FROM pg_stat_activity
		WHERE usename IN ('n1', 'n2', 'n3') ORDER BY usename" -F ' ' >"$T/backends"
	pgb_cols SERVERS "remote_pid" >"$T/servers"
	awk 'NR == FNR { s[$1] = 1; next } !($1 in s) { print $2, $3 }' \
		"$T/servers" "$T/backends" | sort >"$T/direct"
	[ "$(cat "$T/direct")" = "$(printf 'n%s vigild\n' 1 2 3)" ]
}
check "(2) the nX backends: one direct per node (the lease), the rest PgBouncer's" \
	retry 3 direct
log "backends: $(awk '{ print $2 }' "$T/backends" | sort | uniq -c | tr -s ' \n' ' '); PgBouncer server pids: $(tr '\n' ' ' <"$T/servers"); direct: $(tr '\n' ';' <"$T/direct")"
checks_passed

for i in 1 2 3; do node_stop "$i"; done
log "done in $(($(now_ms) - T0)) ms"
