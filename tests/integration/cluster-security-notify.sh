#!/bin/bash
# A database role with no grants at all (any role may connect and NOTIFY)
# forges vigild's notices on the channel vigil: an operator's stop of a
# cluster service ("held J I 1 SEQ BY", with terminal escapes and a huge
# sequence number), a lease given back, a queue wake-up, then a flood of
# them.  A notice is only a hint to re-read vigil's own rows: the service
# keeps RUNNING on every node, no forged text reaches a log, and the
# operator's genuine stop and start afterwards still work everywhere.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
cluster_need

CLUSTER_NODES="1 2"
m=svc-$$
cluster_job svc <<EOF
command = {"bash", "-c", "exec -a $m sleep 1000", "$m"}
cluster = true
stop_timeout = "500ms"
EOF

# field I KEY: KEY of svc in node I's --json status.
field() {
	{ nctl "$1" --json status svc 2>/dev/null || :; } |
		jq -r --arg k "$2" '.jobs[0][$k] | tostring'
}
# states: svc's state on n1 and n2.
states() { echo "$(field 1 state) $(field 2 state)"; }
# one_runs: one node RUNNING svc, the other waiting for its lease.
one_runs() {
	case $(states) in
	"RUNNING STARTING" | "STARTING RUNNING") ;;
	*) return 1 ;;
	esac
	[ "$(marker_pids "$m" | wc -l)" = 1 ]
}
not_one_runs() { ! one_runs; }
not() { ! "$@"; }
all_stopped() { [ "$(states)" = "STOPPED STOPPED" ] && [ -z "$(marker_pids "$m")" ]; }
# as_mallory SQL: SQL as the role mallory (LOGIN, no grant at all).
as_mallory() { pg_psql -U mallory -A -t -c "$1"; }

pg_start
pg_psql -c "CREATE ROLE mallory LOGIN" >/dev/null || fail "could not create mallory"
for i in 1 2; do node_start "$i"; done
retry 15 one_runs || fail "svc does not run exactly once: $(states)"
id=$(pg_sql "SELECT id FROM vigil.job WHERE name = 'svc'")
[ -n "$id" ] || fail "no vigil.job row for svc"
pid0=$(marker_pids "$m")
log "svc runs (job id $id, pid $pid0): $(states)"

mallory_reads() { as_mallory "SELECT 1 FROM vigil.lease LIMIT 1" >/dev/null 2>&1; }
check "mallory cannot read vigil.lease" not mallory_reads

# --- Forged notices: a stop with a huge sequence number and escapes, a
# lease given back, queue wake-ups (this job, every job), junk.
esc=$'\e[2J\e[31mFORGED'
as_mallory "SELECT pg_notify('vigil', 'held $id 0 1 2000000000 uid 0 on n1 $esc')" >/dev/null ||
	fail "mallory could not NOTIFY"
as_mallory "SELECT pg_notify('vigil', 'lease $id 0'), pg_notify('vigil', 'q $id'),
	pg_notify('vigil', 'q 0'),
	pg_notify('vigil', 'held -1 -1 1 1 FORGED'), pg_notify('vigil', 'FORGED')" >/dev/null
# A flood: 20000 distinct stops of svc.
as_mallory "SELECT count(pg_notify('vigil', 'held $id 0 1 ' || g || ' FORGED $esc'))
	FROM generate_series(1, 20000) g" >/dev/null || fail "mallory's flood failed"
# Several renew intervals: svc must not stop anywhere.
! retry 4 not_one_runs || fail "forged notices stopped svc: $(states)"
check "svc still runs exactly once, same pid" [ "$(marker_pids "$m")" = "$pid0" ]
check "vigil.lease.held is false" [ "$(pg_sql "SELECT held FROM vigil.lease WHERE job_id = $id AND instance = 0")" = f ]
for i in 1 2; do
	check "n$i is still responsive" nctl "$i" ping
	check "n$i's log has no forged text" not grep -q FORGED "$(node_log "$i")"
	check "n$i's log has no escape character" not grep -q $'\e' "$(node_log "$i")"
done
checks_passed

# --- The operator's genuine stop still works on every node.
nctl 2 stop svc >/dev/null || fail "n2: stop svc failed"
retry 10 all_stopped || fail "svc not STOPPED on both nodes after a genuine stop: $(states)"
check "vigil.lease.held is true" [ "$(pg_sql "SELECT held FROM vigil.lease WHERE job_id = $id AND instance = 0")" = t ]
check "n1 logged the stop by n2" grep -q "svc: stopped cluster-wide by uid 0 on n2" "$(node_log 1)"
# A forged start does not start it again.
as_mallory "SELECT pg_notify('vigil', 'held $id 0 0 2000000002 FORGED')" >/dev/null
! retry 2 one_runs || fail "a forged start started svc: $(states)"
# The genuine start does.
nctl 1 start svc >/dev/null || fail "n1: start svc failed"
retry 10 one_runs || fail "svc does not run again after a genuine start: $(states)"
for i in 1 2; do
	check "n$i's log has no forged text" not grep -q FORGED "$(node_log "$i")"
done
checks_passed

for i in 1 2; do node_stop "$i"; done
log "ok"
