#!/bin/bash
# shellcheck disable=SC2317 # predicates called through retry
# The least a node's role needs (issue 35, item 5): vigil_node.  Node 1's
# role owns schema vigil and may create roles: it makes the schema and
# the NOLOGIN role vigil_node, granted the rows and the functions of
# vigil, not the schema.  Node 2 logs in as n2min, whose only grant is
# vigil_node:
# - it finds the schema made and changes nothing (no DDL: it may not);
# - it bids, holds and runs a cluster service after node 1 goes, works a
#   cluster queue, and status, history and vigilctl cluster work there;
# - it cannot drop or alter vigil's tables, nor redefine the
#   SECURITY DEFINER vigil.enqueue that applications call;
# - with the schema at an older version it may not upgrade, it says so in
#   its log (which role, which version, what to do) and runs nothing
#   until the owner's vigild upgrades it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
cluster_need

CLUSTER_NODES="1 2"
cluster_job svc <<EOF
cluster = true
stop_timeout = "500ms"
command = {"sleep", "300"}
EOF
cat >"$T/run.sh" <<'EOF'
echo "$(cat) $VIGIL_NODE" >>"$VIGIL_TEST_ROOT/runs"
EOF
cluster_job q <<EOF
kind = "queue"
cluster = true
max_attempts = 1
drain_timeout = "500ms"
stop_timeout = "500ms"
command = {"bash", "$T/run.sh"}
EOF

# denied ROLE SQL: ROLE may not run SQL (it must be the owner).
denied() { ! pg_sql_as "$1" "$2" >/dev/null && grep -Eq 'permission denied|must be owner' "$T/err"; }
has_role() { [ "$(pg_sql "SELECT count(*) FROM pg_roles WHERE rolname = 'vigil_node' AND NOT rolcanlogin")" = 1 ]; }
ran() { grep -q "^$1 n2\$" "$T/runs" 2>/dev/null; }
up() { grep -q "^vigild: cluster: lease connection up" "$(node_log "$1")"; }
# n2 lost no connection (its set-up failed nowhere).
clean() { ! grep -Eq "connection (lost|failed)" "$(node_log 2)"; }
# n2 stands by for svc or runs it.
n2_in() { node_standby 2 svc || node_runs 2 svc; }

pg_start
pg_psql -c "ALTER ROLE vigil CREATEROLE" >/dev/null || fail "ALTER ROLE vigil CREATEROLE"
node_start 1
retry 10 has_role || fail "n1 did not make the role vigil_node: $(tail -n 5 "$(node_log 1)")"
pg_psql -c "ALTER ROLE vigil NOCREATEROLE" -c "CREATE ROLE n2min LOGIN" \
	-c "GRANT vigil_node TO n2min" >/dev/null || fail "could not create n2min"
NODE_CONNINFO[2]="host=$PGSOCK_T port=$PGPORT_T dbname=vigil user=n2min"
node_start 2
retry 10 up 2 || fail "n2 (vigil_node only) did not connect: $(tail -n 5 "$(node_log 2)")"
retry 10 node_runs 1 svc || fail "n1 does not run svc"
retry 10 node_standby 2 svc || fail "n2 does not stand by: $(node_status 2 svc reason)"
check "n2's set-up failed nowhere" clean
checks_passed

# --- n2 holds and runs it once n1 is gone; reads every view.
node_stop 1
retry 15 node_runs 2 svc || fail "n2 (vigil_node only) did not take svc over: $(node_status 2 svc reason)"
# Each view is the database's, read with n2's rights.  On a busy machine
# a read can outlive query_timeout, and then the view is n2's own (said
# on stderr): look again.
holder_is_n2() {
	[ "$(nctl 2 --json status svc 2>/dev/null | jq -r '.jobs[0].cluster | "\(.holder) \(.state)"')" = "n2 RUNNING" ]
}
both_nodes_ran() {
	[ "$(nctl 2 --json history svc 2>/dev/null | jq -r '[.runs[].node] | unique | join(" ")')" = "n1 n2" ]
}
check "status on n2: svc RUNNING on n2" retry 10 holder_is_n2
check "history on n2: the runs of both nodes" retry 10 both_nodes_ran
check "vigilctl cluster on n2" nctl 2 cluster
nctl 2 enqueue q m1 >/dev/null || fail "n2: enqueue failed"
check "n2 works a cluster queue message" retry 10 ran m1
checks_passed

# --- No DDL for n2min.
check "n2min cannot drop a table" denied n2min "DROP TABLE vigil.run"
check "n2min cannot alter a table" denied n2min "ALTER TABLE vigil.lease ADD COLUMN x int"
check "n2min cannot redefine vigil.enqueue" \
	denied n2min "CREATE OR REPLACE FUNCTION vigil.enqueue(text, text, interval, text, int) RETURNS bigint LANGUAGE sql AS 'SELECT 1::bigint'"
check "n2min cannot create in schema vigil" denied n2min "CREATE TABLE vigil.planted (i int)"
checks_passed

# --- An older schema: said, nothing run, until the owner upgrades it.
node_stop 2
pg_sql "UPDATE vigil.cluster SET schema_version = 4" >/dev/null
: >"$(node_log 2)"
node_start 2
said() {
	grep -q "schema vigil is at version 4, older than this vigild's 5, and role n2min may not upgrade it" "$(node_log 2)"
}
retry 10 said || fail "n2 did not say why it cannot start on an old schema: $(tail -n 5 "$(node_log 2)")"
check "n2 runs nothing on the old schema" [ "$(node_status 2 svc pid)" = null ]
# ... and its status says why, not only its log.
status_says() { node_status 2 svc reason | grep -q "older than this vigild's 5"; }
check "n2's status reason: the schema is older ($(node_status 2 svc reason))" retry 10 status_says
node_start 1
retry 15 n2_in || fail "n2 took no part once n1 upgraded the schema: $(tail -n 5 "$(node_log 2)")"
check "the owner's node upgraded it" [ "$(pg_sql "SELECT schema_version FROM vigil.cluster")" = 5 ]
retry 15 job_runner svc >/dev/null || fail "no node runs svc after the upgrade"
checks_passed

node_stop 1
node_stop 2
log "ok"
