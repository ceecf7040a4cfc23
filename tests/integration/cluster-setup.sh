#!/bin/bash
# Cluster mode's racy set-up: three vigild started at the same instant
# against an empty database (no schema vigil) make one schema with its
# tables and functions (each pinning its search_path), one row per cluster job in vigil.job, one lease per instance,
# each held by exactly one node (acquired once: it never changed hands), and run
# each instance exactly once cluster-wide (a job with instances = 3: three
# leases, spread or not); a local job runs on every node at once.  Two
# rounds, each on a dropped schema and fresh nodes.  The exactly-one
# sampler watches every cluster instance for the whole test.
. "$(dirname "$0")/lib.sh"
# Stages 1 and 2 run it: not again under valgrind nor in distcheck.
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
cluster_need

ROUNDS=${ROUNDS:-2}
ms=svc-$$
mw=web-$$
ml=loc-$$
INSTS="svc web@0 web@1 web@2"

# marker LABEL: the marker of an instance (the sampler's for svc and web).
marker() {
	case $1 in
	svc) echo "$ms" ;;
	web@*) echo "$mw-${1#web@}" ;;
	loc) echo "$ml" ;;
	esac
}

cluster_job svc <<EOF
command = {"bash", "-c", "exec -a $ms sleep 1000", "$ms"}
cluster = true
stop_timeout = "500ms"
EOF
cluster_job web <<EOF
command = {"bash", "-c", "exec -a $mw-\$VIGIL_INSTANCE sleep 1000"}
cluster = true
instances = 3
stop_timeout = "500ms"
EOF
# The same file name everywhere, but not a cluster job: one per node.
cluster_job loc <<EOF
command = {"bash", "-c", "exec -a $ml sleep 1000", "$ml"}
stop_timeout = "500ms"
EOF

# field I LABEL KEY: KEY of LABEL in node I's --json status ("null" if
# none; exit 3, not running, is an answer too).
field() {
	{ nctl "$1" --json status "$2" 2>/dev/null || :; } |
		jq -r --arg k "$3" '.jobs[0][$k] | tostring'
}

# runners LABEL: the nodes (nI) on which LABEL is RUNNING, one a line.
runners() {
	local i
	for i in 1 2 3; do
		[ "$(field "$i" "$1" state)" != RUNNING ] || echo "n$i"
	done
}

# settled: each cluster instance RUNNING on one node, one copy of it;
# loc RUNNING on every node, three copies.
settled() {
	local l i
	for l in $INSTS; do
		[ "$(runners "$l" | wc -l)" = 1 ] || return 1
		[ "$(marker_pids "$(marker "$l")" | wc -l)" = 1 ] || return 1
	done
	for i in 1 2 3; do
		[ "$(field "$i" loc state)" = RUNNING ] || return 1
	done
	[ "$(marker_pids "$ml" | wc -l)" = 3 ]
}

# says_local I: node I's text status shows loc with no node, "(local)".
says_local() { nctl "$1" status loc | grep -q '^loc  *-  *RUNNING .*(local)$'; }

# no_errors LINE: no ERROR from n1, n2 or n3 in the server's log past LINE.
no_errors() { ! tail -n "+$(($1 + 1))" "$T/pg/postgres.log" | grep -E ' n[123] ERROR: '; }

# views_agree LABEL NODE: every node says NODE runs LABEL.
views_agree() {
	local i
	for i in 1 2 3; do
		[ "$(field "$i" "$1" node)" = "$2" ] || return 1
	done
}

# shellcheck disable=SC2046 # one marker a word
sampler_start $(for l in $INSTS; do marker "$l"; done)
pg_start

declare -A EP=()
for round in $(seq 1 "$ROUNDS"); do
	[ "$(pg_sql "SELECT count(*) FROM pg_namespace WHERE nspname = 'vigil'")" = 0 ] ||
		fail "round $round: the database is not empty"
	pgl=$(wc -l <"$T/pg/postgres.log")
	t0=$(now_ms)
	nodes_start_together 1 2 3
	t1=$(now_ms)
	retry 10 settled ||
		fail "round $round: not one copy of each instance and three of loc:$(for l in $INSTS loc; do printf ' %s on [%s] (%s copies);' "$l" "$(runners "$l" | tr '\n' ' ')" "$(marker_pids "$(marker "$l")" | wc -l)"; done)"
	log "round $round: nodes up in $((t1 - t0)) ms, all running $(($(now_ms) - t1)) ms later"

	# One schema, its tables, one row per cluster job, one per node.
	check "round $round: one schema vigil" \
		[ "$(pg_sql "SELECT count(*) FROM pg_namespace WHERE nspname = 'vigil'")" = 1 ]
	tables=$(pg_sql "SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables WHERE schemaname = 'vigil'")
	check "round $round: the tables of schema vigil ($tables)" \
		[ "$tables" = cluster,job,lease,lease_failure,message,node,node_job,periodic,request,run ]
	funcs=$(pg_sql "SELECT string_agg(proname, ',' ORDER BY proname) FROM pg_proc WHERE pronamespace = 'vigil'::regnamespace")
	check "round $round: the functions of schema vigil ($funcs)" \
		[ "$funcs" = bid_at,claim,cluster_leases,cluster_nodes,counts,dead,enqueue,enqueue,enqueue_message,failed_here,failing,kick,rescue,retry,untried ]
	check "round $round: every function pins its search_path" [ "$(pg_sql "SELECT count(*) FROM pg_proc
		WHERE pronamespace = 'vigil'::regnamespace
		AND NOT coalesce('search_path=pg_catalog, pg_temp' = ANY(proconfig), false)")" = 0 ]
	check "round $round: one vigil.cluster row, schema_version 5" \
		[ "$(pg_sql "SELECT count(*) || ' ' || min(schema_version) FROM vigil.cluster")" = "1 5" ]
	jobs=$(pg_sql "SELECT string_agg(name || ':' || kind, ',' ORDER BY name) FROM vigil.job")
	check "round $round: one vigil.job row per cluster job, none for loc ($jobs)" \
		[ "$jobs" = svc:service,web:service ]
	nodes=$(pg_sql "SELECT string_agg(name, ',' ORDER BY name) FROM vigil.node")
	check "round $round: one vigil.node row per node ($nodes)" [ "$nodes" = n1,n2,n3 ]
	nj=$(pg_sql "SELECT string_agg(n.node || ':' || j.name, ',' ORDER BY n.node, j.name) FROM vigil.node_job n JOIN vigil.job j ON j.id = n.job_id")
	check "round $round: vigil.node_job, each node with each cluster job ($nj)" \
		[ "$nj" = n1:svc,n1:web,n2:svc,n2:web,n3:svc,n3:web ]

	# One lease per instance, held by the node that runs it, taken once.
	leases=$(pg_sql "SELECT j.name || CASE WHEN j.name = 'web' THEN '@' || l.instance ELSE '' END
		|| ' ' || coalesce(l.holder, '-') || ' ' || l.epoch || ' ' || (l.expires_at > now())
		FROM vigil.lease l JOIN vigil.job j ON j.id = l.job_id ORDER BY 1")
	check "round $round: one lease row per instance ($(echo "$leases" | tr '\n' ';'))" \
		[ "$(echo "$leases" | cut -d' ' -f1 | tr '\n' ' ')" = "svc web@0 web@1 web@2 " ]
	spread=
	for l in $INSTS; do
		r=$(runners "$l")
		row=$(echo "$leases" | awk -v l="$l" '$1 == l')
		ep=$(echo "$row" | cut -d' ' -f3)
		check "round $round: $l: the lease is $r's, an epoch, not expired ($row)" \
			[ "$row" = "$l $r $ep true" ] && [ "$ep" -gt 0 ]
		check "round $round: $l: $r's status says node $r, fencing_token $ep (the holding's first run)" \
			[ "$(field "${r#n}" "$l" node) $(field "${r#n}" "$l" fencing_token)" = "$r $ep" ]
		check "round $round: $l: every node says $r runs it" retry 5 views_agree "$l" "$r"
		n=$(cat "$T"/n[123]/vigild.log | grep -c "^vigild: $l: cluster lease acquired: epoch " || :)
		check "round $round: $l: acquired once in all the logs ($n)" [ "$n" = 1 ]
		# A schema dropped and made again: tokens still never go back.
		check "round $round: $l: epoch $ep above round $((round - 1))'s ${EP[$l]:-0}" \
			[ "$ep" -gt "${EP[$l]:-0}" ]
		EP[$l]=$ep
		spread="$spread $l:$r"
	done
	log "round $round: spread:$spread"
	for i in 1 2 3; do
		check "round $round: node $i: loc is local" \
			[ "$(field "$i" loc node)" = null ]
		check "round $round: node $i: status says (local) for loc" says_local "$i"
	done
	check "round $round: no ERROR in the server's log from n1, n2 or n3" no_errors "$pgl"
	checks_passed

	# A graceful stop gives every lease back.
	for i in 1 2 3; do node_stop "$i"; done
	check "round $round: every lease given back" \
		[ "$(pg_sql "SELECT count(*) FROM vigil.lease WHERE holder IS NOT NULL")" = 0 ]
	checks_passed
	# The next round: an empty database, nodes with no state.
	pg_sql "DROP SCHEMA vigil CASCADE" >/dev/null
	for i in 1 2 3; do
		rm -rf "$T/n$i/state" "$T/n$i/run"
		mv "$(node_log "$i")" "$(node_log "$i").$round"
	done
done
sampler_stop
log "ok"
