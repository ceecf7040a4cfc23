#!/bin/bash
# A dropped connection is not a lost lease: pg_terminate_backend of every
# session of every node (the roles n1, n2 and n3), twice.  Each node logs
# the loss and the reconnection, and renews again; the child's pid and
# token are unchanged, nothing restarts anywhere (one run in the holder's
# history, none elsewhere, one in vigil.run), the standbys still wait for
# the same holder.
# The exactly-one sampler watches for the whole test.
. "$(dirname "$0")/lib.sh"
# Stages 1 and 2 run it: not again under valgrind nor in distcheck.
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
cluster_need

m=svc-$$
cluster_job svc <<EOF
command = {"bash", "-c", "exec -a $m sleep 1000", "$m"}
cluster = true
stop_timeout = "500ms"
EOF

# field I KEY: KEY of svc in node I's --json status ("null" if none).
field() {
	{ nctl "$1" --json status svc 2>/dev/null || :; } |
		jq -r --arg k "$2" '.jobs[0][$k] | tostring'
}

# one_runs: svc RUNNING on exactly one node, its child the one copy;
# sets H (the node), P (the child), E (the token).
one_runs() {
	local i r='' p
	for i in 1 2 3; do
		[ "$(field "$i" state)" != RUNNING ] || r="$r $i"
	done
	[ "$(echo "$r" | wc -w)" = 1 ] || return 1
	H=${r# }
	P=$(field "$H" pid)
	E=$(field "$H" fencing_token)
	p=$(marker_pids "$m")
	[ "$P" = "$p" ]
}

# ups I: how many times node I logged its lease connection up.
ups() { grep -c '^vigild: cluster: lease connection up' "$(node_log "$1")" || :; }

# losses I: how many times node I logged its lease connection lost.
losses() { grep -c '^vigild: warning: cluster: lease connection lost: ' "$(node_log "$1")" || :; }

# back N: every node has logged N losses and N + 1 ups, and has its two
# sessions again.
back() {
	local i
	for i in 1 2 3; do
		[ "$(losses "$i")" -ge "$1" ] && [ "$(ups "$i")" -ge $(($1 + 1)) ] &&
			pg_has_backends "n$i" 2 || return 1
	done
}

# renewed_since TS: svc's lease was renewed after TS (database clock).
renewed_since() {
	[ "$(pg_sql "SELECT l.renewed_at > '$1' FROM vigil.lease l
		JOIN vigil.job j ON j.id = l.job_id WHERE j.name = 'svc'")" = t ]
}

# unmoved: svc runs once, where it ran first, the same child and token;
# moved: the contrary.
unmoved() { one_runs && [ "$H $P $E" = "$H0 $P0 $E0" ]; }
moved() { ! unmoved; }

# no_fence FILE: no lease lost, no fence in the log FILE.
no_fence() { ! grep -E 'cluster lease lost|fencing|trust deadline' "$1"; }

# runs I: the runs in node I's history of svc.
# runs I: the runs of svc as node I's history has them (every node's,
# from the database): "COUNT NODES".
runs() { nctl "$1" --json history svc | jq -r '"\(.runs | length) \([.runs[].node] | unique | join(","))"'; }

pg_start
for i in 1 2 3; do node_start "$i"; done
sampler_start "$m"
retry 10 one_runs || fail "svc does not run exactly once"
H0=$H P0=$P E0=$E
log "svc runs on n$H: pid $P, token $E"
for i in 1 2 3; do
	retry 5 pg_has_backends "n$i" 2 || fail "n$i has not its two sessions: $(pg_backends "n$i")"
done

for round in 1 2; do
	ts=$(pg_sql "SELECT now()")
	# Every session of the three at once, each waited for.
	n=$(pg_sql "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 5000))
		FROM pg_stat_activity WHERE usename IN ('n1', 'n2', 'n3')")
	t0=$(now_ms)
	check "round $round: the six sessions of n1, n2 and n3 ended ($n)" [ "$n" = 6 ]
	retry 5 back "$round" ||
		fail "round $round: not every node is back: $(for i in 1 2 3; do printf 'n%s: %s lost, %s up, %s sessions; ' "$i" "$(losses "$i")" "$(ups "$i")" "$(pg_backends "n$i")"; done)"
	tback=$(now_ms)
	retry 5 renewed_since "$ts" || fail "round $round: no renew of svc's lease since the cut"
	log "round $round: every node back within $((tback - t0)) ms of the cut, svc's lease renewed within $(($(now_ms) - t0)) ms"
	check "round $round: svc runs once, on n$H0, pid $P0, token $E0" unmoved
	checks_passed
done

# Nothing happened to the lease or the run: a few renews later, still so.
! retry 1 moved || fail "svc moved: n$H, pid $P, token $E"
for i in 1 2 3; do
	l=$(node_log "$i")
	log "n$i: $(grep '^vigild: warning: cluster: lease connection lost: ' "$l" | head -n 1)"
	check "n$i: no lease lost, no fence" no_fence "$l"
	if [ "$i" = "$H0" ]; then
		check "n$i: one start of svc" [ "$(grep -c '^vigild: svc: started pid' "$l")" = 1 ]
		check "n$i: one lease acquired" [ "$(grep -c '^vigild: svc: cluster lease acquired' "$l")" = 1 ]
		check "n$i: one run in the history, its own" [ "$(runs "$i")" = "1 n$i" ]
	else
		check "n$i: no start of svc" [ "$(grep -c '^vigild: svc: started pid' "$l" || :)" = 0 ]
		check "n$i: the same one run in the history, n$H0's" [ "$(runs "$i")" = "1 n$H0" ]
		check "n$i: still waits for n$H0" \
			[ "$(field "$i" state) $(field "$i" node)" = "STARTING n$H0" ]
	fi
done
check "the lease row: n$H0, epoch $E0" [ "$(pg_sql "SELECT l.holder || ' ' || l.epoch
	FROM vigil.lease l JOIN vigil.job j ON j.id = l.job_id WHERE j.name = 'svc'")" = "n$H0 $E0" ]
runrows=$(pg_sql "SELECT r.node || ' ' || r.epoch || ' ' || coalesce(r.pid::text, '-') || ' '
	|| (r.ended_at IS NULL) FROM vigil.run r JOIN vigil.job j ON j.id = r.job_id
	WHERE j.name = 'svc'")
check "one run of svc in vigil.run, n$H0's, going on ($(echo "$runrows" | tr '\n' ';'))" \
	[ "$runrows" = "n$H0 $E0 $P0 true" ]
checks_passed

sampler_stop
for i in 1 2 3; do node_stop "$i"; done
log "ok"
