#!/bin/bash
# What cluster mode shows, and a database that is not there at start-up:
# local jobs start at once and cluster jobs wait in STARTING with the
# reason; once the database comes, the cluster job runs once.  `vigilctl
# cluster` (text and --json) lists the nodes with their heartbeats and
# leases, every lease with holder, epoch and pid, and a job whose file
# differs between nodes (config drift); it fails with 69 while the
# database is down, and with a clear error without cluster mode.
# `status` has the NODE column and the cluster fields.  A node that names
# the server by host name reaches it (the name looked up off the loop); one
# whose host name does not resolve waits with the lookup's error.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
cluster_need
pg_start
# The database goes away before any node starts.
pg_crash

cluster_job svc <<EOF
command = {"sh", "-c", "sleep 1000; :", "svc-$$"}
cluster = true
stop_timeout = "500ms"
EOF
for i in 1 2; do
	node_job "$i" loc <<EOF
command = {"sh", "-c", "sleep 1000; :", "loc-$$-$i"}
EOF
done
sampler_start "svc-$$"
# Node 2 reaches the server by a host name (looked up off the loop, then
# given to libpq as an address), node 3 by a name that does not resolve.
NODE_CONNINFO[2]="host=localhost port=$PGPORT_T dbname=vigil user=n2"
NODE_CONNINFO[3]="host=nosuchhost.invalid port=$PGPORT_T dbname=vigil user=n3"
node_start 1
node_start 2
node_start 3
# Local jobs run, the cluster job waits with the reason.
for i in 1 2; do
	retry 10 test "$(node_status "$i" loc state)" = RUNNING ||
		fail "node $i: the local job does not run without the database"
done
waits() {
	[ "$(node_status "$1" svc state)" = STARTING ] &&
		case $(node_status "$1" svc reason) in
		"waiting for cluster lease: "*) true ;;
		*) false ;;
		esac
}
for i in 1 2; do
	retry 10 waits "$i" || fail "node $i: svc is $(node_status "$i" svc state): $(node_status "$i" svc reason)"
done
log "without the database: $(node_status 1 svc reason)"
rc=0
nctl 1 cluster >"$T/c.out" 2>"$T/c.err" || rc=$?
[ "$rc" -eq 69 ] || fail "vigilctl cluster without the database: exit $rc: $(cat "$T/c.out" "$T/c.err")"
grep -q 'database' "$T/c.err" || fail "no reason: $(cat "$T/c.err")"

# The database comes: exactly one copy, on one node.
pg_restart
retry 10 grep -q 'lease connection up (localhost)' "$(node_log 2)" ||
	fail "node 2 did not connect by host name: $(tail -n 5 "$(node_log 2)")"
unresolved() {
	case $(node_status 3 svc reason) in
	*"nosuchhost.invalid"*) [ "$(node_status 3 svc state)" = STARTING ] ;;
	*) false ;;
	esac
}
retry 10 unresolved || fail "node 3: $(node_status 3 svc state): $(node_status 3 svc reason)"
log "a name that does not resolve: $(node_status 3 svc reason)"
one_runs() { node_runs 1 svc || node_runs 2 svc; }
retry 15 one_runs || fail "no node runs svc once the database is back"
h=1
node_runs 1 svc || h=2
o=$((3 - h))
log "node $h runs svc"

# status: NODE column, (cluster, epoch N), (local); the standby names the
# holder once it has bid (its connection may come a moment later).
retry 10 node_standby "$o" svc || fail "node $o does not stand by: $(node_status "$o" svc reason)"
nctl "$o" status >"$T/st.out"
hp=$(node_status "$h" svc pid)
grep -Eq "^svc +n$h +RUNNING +$hp .*\(cluster; here STARTING\)$" "$T/st.out" ||
	fail "standby's status: $(cat "$T/st.out")"
nctl "$o" status svc >/dev/null || fail "standby's status svc: exit $?, not 0 (n$h runs it)"
grep -Eq "^loc +- +RUNNING .*\(local\)$" "$T/st.out" ||
	fail "local job's status: $(cat "$T/st.out")"
token=$(node_status "$h" svc fencing_token)
nctl "$h" status | grep -Eq "^svc +n$h +RUNNING .*\(cluster, epoch $token\)$" ||
	fail "holder's status: $(nctl "$h" status)"
[ "$(node_status "$o" svc node)" = "n$h" ] || fail "the standby does not name the holder"
[ "$(node_status "$o" svc fencing_token)" = null ] || fail "the standby has a token"
left=$(node_status "$h" svc lease_expires_in_s)
awk -v l="$left" 'BEGIN { exit !(l > 0 && l <= 3) }' || fail "lease_expires_in_s $left"
[ "$(nctl "$h" --json status loc | jq '.jobs[0] | has("node")')" = false ] ||
	fail "a local job has cluster fields"

# vigilctl cluster: both nodes, alive, the lease with its holder and pid.
nctl "$o" cluster >"$T/c.out" || fail "vigilctl cluster: $(cat "$T/c.out")"
cat "$T/c.out"
grep -Eq "^n$h +[0-9.]+ +[0-9.]+m?s +1 +0$" "$T/c.out" || fail "node n$h with 1 lease, no message: $(cat "$T/c.out")"
grep -Eq "^n$o +[0-9.]+ +[0-9.]+m?s +0 +0 +\(this node\)$" "$T/c.out" || fail "node n$o: $(cat "$T/c.out")"
pid=$(node_status "$h" svc pid)
has_pid() { nctl "$o" --json cluster | jq -e --argjson p "$1" \
	'.leases[] | select(.job == "svc" and .pid == $p)' >/dev/null; }
retry 5 has_pid "$pid" || fail "the lease has no pid $pid: $(nctl "$o" --json cluster)"
nctl "$o" --json cluster >"$T/c.json"
jq -e --arg h "n$h" --argjson t "$token" '.leases[] | select(.job == "svc" and .instance == 0
	and .holder == $h and .epoch == $t and .held == false and .expires_in_s > 0)' "$T/c.json" >/dev/null ||
	fail "lease in --json: $(cat "$T/c.json")"
jq -e '[.nodes[] | select(.alive and .drift == null)] | length == 2' "$T/c.json" >/dev/null ||
	fail "nodes in --json: $(cat "$T/c.json")"

# Config drift: node 2's file differs.
cat >>"$T/n2/jobs.d/svc.conf" <<EOF
environment = "X=1"
EOF
nctl 2 reload >/dev/null
drift() { nctl 1 --json cluster | jq -e '[.nodes[] | select(.drift == "svc")] | length == 2' >/dev/null; }
retry 10 drift || fail "no drift shown: $(nctl 1 cluster)"
nctl 1 cluster | grep -q 'spec differs from another node: svc' ||
	fail "no drift note: $(nctl 1 cluster)"
log "ok: drift shown"

# A node without cluster mode.
start_vigild
rc=0
ctl cluster >/dev/null 2>"$T/off.err" || rc=$?
[ "$rc" -eq 69 ] && grep -q 'cluster mode is off' "$T/off.err" ||
	fail "cluster without cluster mode: exit $rc: $(cat "$T/off.err")"
sampler_stop
log "ok: status and cluster"
