#!/bin/bash
# A cluster service on three nodes: exactly one child cluster-wide; every
# node's status names the same node; the holder's fencing_token is the
# child's VIGIL_FENCING_TOKEN and its VIGIL_NODE the holder.  The
# operator's stop on a node that does not hold it stops it on every node
# (vigil.lease.held), and it stays stopped when all three restart; a
# start on another node runs it once again, with a larger token.  A local
# job runs on every node throughout.  The exactly-one sampler watches the
# service for the whole test.
. "$(dirname "$0")/lib.sh"
# Stages 1 and 2 run it: not again under valgrind nor in distcheck.
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
cluster_need

m=svc-$$
ml=loc-$$
# The child writes its environment to env.PID, then becomes the marker.
cluster_job svc <<EOF
command = {"bash", "-c", "env >\$VIGIL_TEST_ROOT/env.\$\$.tmp && mv \$VIGIL_TEST_ROOT/env.\$\$.tmp \$VIGIL_TEST_ROOT/env.\$\$ && exec -a $m sleep 1000", "$m"}
cluster = true
stop_timeout = "500ms"
EOF
cluster_job loc <<EOF
command = {"bash", "-c", "exec -a $ml sleep 1000", "$ml"}
stop_timeout = "500ms"
EOF

# field I KEY: KEY of svc in node I's --json status ("null" if none).
field() {
	{ nctl "$1" --json status svc 2>/dev/null || :; } |
		jq -r --arg k "$2" '.jobs[0][$k] | tostring'
}

# runners: the nodes (I) on which svc is RUNNING, one a line.
runners() {
	local i
	for i in 1 2 3; do
		[ "$(field "$i" state)" != RUNNING ] || echo "$i"
	done
}

# one_runs: svc RUNNING on one node, one copy of it, its env written;
# sets H (the node), P (the child) and E (the token).
one_runs() {
	local r
	r=$(runners)
	[ -n "$r" ] && [ "$(echo "$r" | wc -l)" = 1 ] || return 1
	[ "$(marker_pids "$m" | wc -l)" = 1 ] || return 1
	H=$r
	P=$(field "$H" pid)
	E=$(field "$H" fencing_token)
	[ "$P" = "$(marker_pids "$m")" ] && [ -s "$T/env.$P" ]
}

# none_runs: no node runs svc, no copy anywhere; some_runs: the contrary.
none_runs() { [ -z "$(runners)" ] && [ -z "$(marker_pids "$m")" ]; }
some_runs() { ! none_runs; }

# all_stopped: every node says svc is STOPPED.
all_stopped() {
	local i
	for i in 1 2 3; do
		[ "$(field "$i" state)" = STOPPED ] || return 1
	done
}

# views_agree NODE: every node's status says node nNODE runs svc.
views_agree() {
	local i
	for i in 1 2 3; do
		[ "$(field "$i" node)" = "n$1" ] || return 1
	done
}

# env_of PID VAR: VAR in the environment the child PID wrote.
env_of() { sed -n "s/^$2=//p" "$T/env.$1"; }

# loc_pids: the pid of loc on each node, "P1 P2 P3".
loc_pids() { echo "$(nctl 1 pid loc) $(nctl 2 pid loc) $(nctl 3 pid loc)"; }

# three_locs PIDS: three pids, each a live loc (copies of $ml).
three_locs() {
	local p
	[ "$(echo "$1" | wc -w)" = 3 ] || return 1
	for p in $1; do
		marker_pids "$ml" | grep -qx "$p" || return 1
	done
}

# text_is I REGEX: node I's text status of svc matches REGEX.
text_is() { nctl "$1" status svc | grep -q "$2"; }

# held: vigil.lease.held of svc's instance 0.
held() {
	pg_sql "SELECT l.held FROM vigil.lease l JOIN vigil.job j ON j.id = l.job_id
		WHERE j.name = 'svc' AND l.instance = 0"
}

# The holder's view and everybody else's, text and JSON.
check_views() {
	local i
	check "every node says n$H runs svc" retry 5 views_agree "$H"
	for i in 1 2 3; do
		check "n$i: status --json's cluster: n$H runs svc as pid $P, $R restarts" \
			[ "$(nctl "$i" --json status svc | jq -r '.jobs[0].cluster |
				"\(.holder) \(.state) \(.pid) \(.uptime_s > 0) \(.restarts)"')" = "n$H RUNNING $P true $R" ]
	done
	check "n$H: fencing_token $E is the child's VIGIL_FENCING_TOKEN" \
		[ "$(env_of "$P" VIGIL_FENCING_TOKEN)" = "$E" ]
	check "the child's VIGIL_NODE is n$H" [ "$(env_of "$P" VIGIL_NODE)" = "n$H" ]
	# The lease's epoch is its first run's token; each restart takes
	# the next one.
	check "the lease row: n$H, epoch $((E - R))" [ "$(pg_sql "SELECT l.holder || ' ' || l.epoch
		FROM vigil.lease l JOIN vigil.job j ON j.id = l.job_id
		WHERE j.name = 'svc'")" = "n$H $((E - R))" ]
	check "n$H: text status: NODE n$H, (cluster, epoch $E)" \
		text_is "$H" "^svc  *n$H  *RUNNING  *$P .*(cluster, epoch $E)\$"
	for i in 1 2 3; do
		[ "$i" != "$H" ] || continue
		check "n$i: no token; waiting for the lease held by n$H" \
			[ "$(field "$i" fencing_token) $(field "$i" state)" = "null STARTING" ]
		r=$(field "$i" reason)
		check "n$i: its reason names n$H ($r)" \
			[ "${r#waiting for cluster lease (held by n"$H"}" != "$r" ]
		check "n$i: text status: n$H's run, RUNNING, its pid, $R restarts; here STARTING" \
			text_is "$i" "^svc  *n$H  *RUNNING  *$P  *[0-9.a-z]*  *$R  .*(cluster; here STARTING)\$"
		check "n$i: status svc exits 0: it runs (on n$H)" \
			nctl "$i" status svc
		check "n$i: wait svc returns: it runs (on n$H)" \
			nctl "$i" wait --timeout "$(slow_s 10)s" svc
		# The time left in the reason is live: the same as
		# lease_expires_in_s of the same answer, read after read (it
		# was frozen at the standby's last bid). A read in the moment
		# the standby looks again (no time in the reason, or no
		# expiry) says nothing either way: 3 of 7 must compare.
		: >"$T/left.$i"
		for _ in 1 2 3 4 5 6 7; do
			nctl "$i" --json status svc | jq -r '.jobs[0] |
				select(.lease_expires_in_s != null) |
				(.reason | capture(", (?<v>[0-9.]+)(?<u>us|ms|s) left[)]$")) as $m |
				(($m.v | tonumber) / (if $m.u == "ms" then 1000
					elif $m.u == "us" then 1000000 else 1 end)
				- .lease_expires_in_s) | if . < 0 then -. else . end' >>"$T/left.$i" 2>/dev/null || true
			sleep 0.2
		done
		# shellcheck disable=SC2016
		check "n$i: the time left in its reason is live (differences: $(tr '\n' ' ' <"$T/left.$i"))" \
			awk '{ n++; if ($1 > 0.05) bad++ } END { exit !(n >= 3 && !bad) }' "$T/left.$i"
	done
}

R=0
pg_start
for i in 1 2 3; do node_start "$i"; done
sampler_start "$m"
retry 10 one_runs || fail "svc does not run exactly once: on [$(runners | tr '\n' ' ')], copies [$(marker_pids "$m" | tr '\n' ' ')]"
log "svc runs on n$H: pid $P, token $E"
check_views
loc=$(loc_pids)
check "loc runs on each node ($loc)" three_locs "$loc"
checks_passed

# --- Stop on a node that does not hold it: stopped on every node.
S=$((H % 3 + 1))
t0=$(now_ms)
nctl "$S" stop svc >/dev/null || fail "n$S: stop svc failed"
t1=$(now_ms)
retry 5 dead "$P" || fail "n$H's child $P outlived a stop on n$S by 5 s"
log "stop on n$S: returned in $((t1 - t0)) ms, n$H's child gone $(($(now_ms) - t0)) ms after the call"
retry 5 none_runs || fail "svc still runs after a stop on n$S: on [$(runners | tr '\n' ' ')]"
retry 5 all_stopped || fail "svc is not STOPPED on every node: $(for i in 1 2 3; do printf '%s ' "$(field "$i" state)"; done)"
log "stop on n$S: stopped everywhere in $(($(now_ms) - t0)) ms"
# Every node reads the same from the database: nobody holds it, and the
# last run ended on n$H.
cluster_says() {
	[ "$(nctl "$1" --json status svc | jq -r '.jobs[0].cluster |
		"\(.holder) \(.state) \(.last_end.node)"')" = "$2" ]
}
for i in 1 2 3; do
	check "n$i: status --json's cluster: no holder, the last run ended on n$H" \
		retry 5 cluster_says "$i" "null null n$H"
done
check "vigil.lease.held is true" [ "$(held)" = t ]
check "n$H gave the lease back" grep -q "^vigild: svc: cluster lease given back: epoch $E\$" "$(node_log "$H")"
check "loc still runs, same pids" [ "$(loc_pids)" = "$loc" ]
checks_passed

# --- Restart all three: still stopped everywhere.
for i in 1 2 3; do node_stop "$i"; done
for i in 1 2 3; do node_start "$i"; done
# Each has its lease connection again (the second "up" in its log) ...
up_again() {
	local i
	for i in 1 2 3; do
		[ "$(grep -c '^vigild: cluster: lease connection up' "$(node_log "$i")")" -ge 2 ] || return 1
	done
}
retry 10 up_again || fail "the nodes did not connect again"
# ... and in a few renew intervals none starts svc.
! retry 2 some_runs || fail "svc runs again after the restart: on [$(runners | tr '\n' ' ')]"
check "svc STOPPED on every node after the restart" all_stopped
check "vigil.lease.held is still true" [ "$(held)" = t ]
loc=$(loc_pids)
check "loc runs on each node again ($loc)" three_locs "$loc"
checks_passed

# --- Start on a third node: one copy again, a larger token.
E0=$E
t0=$(now_ms)
rc=0
timeout "$(slow_s 3)" "$VIGILCTL" -s "$T/n3/run/vigild.sock" start svc >"$T/start.out" 2>&1 || rc=$?
# It runs on some node (maybe not n3): the start is done, exit 0.
check "n3: start svc exits 0 within $(slow_s 3) s (exit $rc: $(cat "$T/start.out"))" [ "$rc" = 0 ]
retry 5 one_runs || fail "svc does not run exactly once after the start: on [$(runners | tr '\n' ' ')]"
log "start on n3: runs on n$H in $(($(now_ms) - t0)) ms: pid $P, token $E"
check "the token grew: $E > $E0" [ "$E" -gt "$E0" ]
check "vigil.lease.held is false" [ "$(held)" = f ]
check_views
check "loc still runs, same pids" [ "$(loc_pids)" = "$loc" ]
checks_passed

# --- The holder's run is killed: n$H runs it again, and every node
# counts the restart (runs the holder began since it took the lease).
H0=$H P0=$P
kill -KILL "$P0"
again() { one_runs && [ "$P" != "$P0" ]; }
retry 10 again || fail "svc did not run again after its pid $P0 was killed: on [$(runners | tr '\n' ' ')]"
log "pid $P0 killed: runs again on n$H as pid $P"
check "n$H0 ran it again (n$H)" [ "$H" = "$H0" ]
R=1
check_views
checks_passed

sampler_stop
for i in 1 2 3; do node_stop "$i"; done
log "ok"
