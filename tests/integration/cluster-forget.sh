#!/bin/bash
# Jobs gone from every live node are forgotten (issue 35, item 3): a
# cluster job that no live node has in its jobs.d any more loses its row,
# leases and history in the database forget_after later (here 2 s), and
# `vigilctl cluster` no longer lists it; a job that one live node still
# has stays, whatever the others did.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
cluster_need

CLUSTER_NODES="1 2"
cluster_job a <<<'command = "sleep 100000"
cluster = true
stop_timeout = "500ms"'
cluster_job b <<<'command = "sleep 100000"
cluster = true
stop_timeout = "500ms"'
node_job 2 c <<<'command = "sleep 100000"
cluster = true
stop_timeout = "500ms"'
for i in 1 2; do NODE_CLUSTER_EXTRA[i]='forget_after = "2s"'; done
pg_start
node_start 1
node_start 2
for j in a b c; do
	retry 10 job_runner "$j" >/dev/null || fail "nobody runs $j"
done
job_id() { pg_sql "SELECT id FROM vigil.job WHERE name = '$1'"; }
cid=$(job_id c)
[ -n "$cid" ] || fail "no row for c"
check "c has runs on record" [ "$(pg_sql "SELECT count(*) FROM vigil.run WHERE job_id = $cid")" -ge 1 ]

# b leaves n1 only; c leaves n2, the only node that had it.
rm "$T/n1/jobs.d/b.conf" "$T/n2/jobs.d/c.conf"
nctl 1 reload >/dev/null || fail "reload of n1 failed"
nctl 2 reload >/dev/null || fail "reload of n2 failed"
forgotten() { [ -z "$(job_id c)" ]; }
retry 15 forgotten || fail "c is still in vigil.job: $(pg_sql "SELECT name, gone_since, now() FROM vigil.job") / $(pg_sql "SELECT * FROM vigil.node_job") / $(pg_sql "SELECT name, expires_at FROM vigil.node")"
check "n2 logged that it forgot c" grep -q '^vigild: cluster: forgot job c: no live node has had it for 2s (forget_after)$' "$(node_log 1)" "$(node_log 2)"
check "c's leases are gone" [ "$(pg_sql "SELECT count(*) FROM vigil.lease WHERE job_id = $cid")" = 0 ]
check "c's runs are gone" [ "$(pg_sql "SELECT count(*) FROM vigil.run WHERE job_id = $cid")" = 0 ]
check "b stays: n2 still has it" [ -n "$(job_id b)" ]
check "b is not marked gone" [ "$(pg_sql "SELECT gone_since IS NULL FROM vigil.job WHERE name = 'b'")" = t ]
check "a stays" [ -n "$(job_id a)" ]
check "vigilctl cluster lists no c" bash -c "! '$VIGILCTL' -s '$T/n1/run/vigild.sock' --json cluster | jq -e '.leases[] | select(.job == \"c\")' >/dev/null"
check "b still runs" job_runner b
checks_passed
log "jobs gone from every live node forgotten after forget_after"
