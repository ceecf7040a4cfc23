#!/bin/bash
# shellcheck disable=SC2317 # predicates called through retry
# The roles an application is given.  vigild's role (vigil) without
# CREATEROLE: the roles vigil_enqueue and vigil_monitor cannot be made;
# vigild says so in its log, names the manual step, and runs on.  With
# CREATEROLE they are made (NOLOGIN) at the next start.  Then, each a
# real login role with exactly one grant:
# - app (vigil_enqueue): vigil.enqueue works (the message runs), with
#   its arguments checked; it cannot insert, update, read or delete
#   vigil.message (no infinite lease that blocks a cluster_concurrency =
#   1 queue, no forged dead row, no payload read), nor call vigil's
#   other functions;
# - mon (vigil_monitor): counts, the leases and nodes, the messages'
#   states; not a payload nor an output, no enqueue;
# - other (no grant): no function of vigil at all.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
cluster_need

CLUSTER_NODES="1"
cat >"$T/run.sh" <<'EOF'
p=$(cat)
echo "$p $VIGIL_MESSAGE_ID" >>"$VIGIL_TEST_ROOT/runs"
EOF
cluster_job q <<EOF
kind = "queue"
cluster = true
cluster_concurrency = 1
max_attempts = 1
drain_timeout = "500ms"
stop_timeout = "500ms"
command = {"bash", "$T/run.sh"}
EOF

# denied ROLE SQL: ROLE may not run SQL (permission denied).
denied() { ! pg_sql_as "$1" "$2" >/dev/null && grep -q 'permission denied' "$T/err"; }
not_as() { ! pg_sql_as "$@" >/dev/null; }
ran() { grep -q "^$1 " "$T/runs" 2>/dev/null; }
roles() { pg_sql "SELECT string_agg(rolname || ':' || rolcanlogin, ',' ORDER BY rolname) FROM pg_roles WHERE rolname LIKE 'vigil\_%'"; }
missing_logged() { grep -q "cluster: no role vigil_enqueue, vigil_monitor, vigil_node, and this role may not create roles" "$(node_log 1)"; }

pg_start
node_start 1
retry 10 missing_logged || fail "n1 did not log the missing roles: $(tail -n 5 "$(node_log 1)")"
check "no role vigil_* yet ($(roles))" [ -z "$(roles)" ]
nctl 1 enqueue q ctl-1 >/dev/null || fail "n1: enqueue without the roles failed"
retry 10 ran ctl-1 || fail "n1 runs no queue message without the roles"
node_stop 1
checks_passed

pg_psql -c "ALTER ROLE vigil CREATEROLE" >/dev/null || fail "ALTER ROLE vigil CREATEROLE"
node_start 1
made() { [ "$(roles)" = "vigil_enqueue:false,vigil_monitor:false,vigil_node:false" ]; }
retry 10 made || fail "the roles were not made: $(roles)"
pg_psql -c "ALTER ROLE vigil NOCREATEROLE" \
	-c "CREATE ROLE app LOGIN" -c "GRANT vigil_enqueue TO app" \
	-c "CREATE ROLE mon LOGIN" -c "GRANT vigil_monitor TO mon" \
	-c "CREATE ROLE other LOGIN" >/dev/null || fail "could not create app, mon, other"
jid=$(pg_sql "SELECT id FROM vigil.job WHERE name = 'q'")

# --- app: vigil.enqueue only.
a=$(pg_sql_as app "SELECT vigil.enqueue('q', 'app-1')") || fail "app: vigil.enqueue failed: $(cat "$T/err")"
retry 10 ran app-1 || fail "app's message $a did not run"
check "app's message ran with its id $a" grep -q "^app-1 $a\$" "$T/runs"
b=$(pg_sql_as app "SELECT vigil.enqueue('q', '\\x6170702d32'::bytea, interval '0', 'k', 5)") ||
	fail "app: vigil.enqueue (bytea) failed: $(cat "$T/err")"
retry 10 ran app-2 || fail "app's message $b did not run"
check "app: enqueue to no such queue is refused" not_as app "SELECT vigil.enqueue('nosuch', 'x')"
check "app: a negative delay is refused" not_as app "SELECT vigil.enqueue('q', 'x', interval '-1 s')"
check "app: an empty unique key is refused" not_as app "SELECT vigil.enqueue('q', 'x', interval '0', '')"
check "app: cannot insert a message (an infinite lease)" \
	denied app "INSERT INTO vigil.message (job_id, payload, state, holder, lease_until) VALUES ($jid, 'x', 1, 'n1', 'infinity')"
check "app: cannot insert a dead message" \
	denied app "INSERT INTO vigil.message (job_id, payload, state, last_error) VALUES ($jid, 'x', 2, E'\\033[2Jforged')"
check "app: cannot read payloads" denied app "SELECT payload FROM vigil.message"
check "app: cannot update messages" denied app "UPDATE vigil.message SET lease_until = 'infinity'"
check "app: cannot delete messages" denied app "DELETE FROM vigil.message"
check "app: cannot call vigil.enqueue_message" \
	denied app "SELECT vigil.enqueue_message('q', 'x', interval '0', NULL, 0)"
check "app: cannot call vigil.claim" denied app "SELECT * FROM vigil.claim($jid, 1, 'n1', 60000, 0)"
check "app: cannot call vigil.retry" denied app "SELECT * FROM vigil.retry(1)"
check "app: cannot read vigil.lease" denied app "SELECT * FROM vigil.lease"
check "no forged row in vigil.message" [ "$(pg_sql "SELECT count(*) FROM vigil.message")" = 0 ]
checks_passed

# --- mon: states and counts, no payloads.
c=$(nctl 1 enqueue --delay 1h q later) || fail "n1: enqueue --delay failed"
check "mon: counts" [ "$(pg_sql_as mon "SELECT r_delayed FROM vigil.counts(ARRAY[$jid])")" = 1 ]
check "mon: the messages' states" [ "$(pg_sql_as mon "SELECT id || ' ' || state FROM vigil.message")" = "$c 0" ]
check "mon: the nodes" [ "$(pg_sql_as mon "SELECT r_name FROM vigil.cluster_nodes()")" = n1 ]
check "mon: vigil.node and vigil.job" [ "$(pg_sql_as mon "SELECT count(*) FROM vigil.node, vigil.job")" = 1 ]
pg_sql_as mon "SELECT * FROM vigil.cluster_leases()" >/dev/null || fail "mon: cluster_leases: $(cat "$T/err")"
# The history of every node and the operators' requests (issue 35).
pg_sql_as mon "SELECT node, reason FROM vigil.run" >/dev/null || fail "mon: vigil.run: $(cat "$T/err")"
pg_sql_as mon "SELECT verb, asked_by, reply FROM vigil.request" >/dev/null || fail "mon: vigil.request: $(cat "$T/err")"
check "mon: cannot write a request" denied mon "INSERT INTO vigil.request (job_id, instance, verb, asked_by) VALUES ($jid, 0, 'stop', 'mon')"
check "mon: cannot read payloads" denied mon "SELECT payload FROM vigil.message"
check "mon: cannot read outputs" denied mon "SELECT output FROM vigil.message"
check "mon: cannot read unique keys" denied mon "SELECT unique_key FROM vigil.message"
check "mon: cannot call vigil.dead (outputs)" denied mon "SELECT * FROM vigil.dead($jid, 10)"
check "mon: cannot enqueue" denied mon "SELECT vigil.enqueue('q', 'x')"
check "mon: cannot write" denied mon "UPDATE vigil.message SET state = 2"

# --- other: nothing.
check "other: cannot enqueue" denied other "SELECT vigil.enqueue('q', 'x')"
check "other: cannot count" denied other "SELECT * FROM vigil.counts(ARRAY[$jid])"
check "other: cannot list nodes" denied other "SELECT * FROM vigil.cluster_nodes()"
checks_passed

node_stop 1
log "ok"
