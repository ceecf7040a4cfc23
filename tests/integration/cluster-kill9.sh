#!/bin/bash
# Failover of a cluster service.  SIGKILL the holder's vigild: its child
# dies with it at once; another node runs the service once the lease has
# expired (on the database's clock; within lease_ttl + renew_interval +
# 1 s per VIGIL_TEST_SLOW of the kill), with a larger token.  Then SIGTERM the new
# holder: it gives the lease back and the last node takes over without
# waiting for it to expire (acquired, on the database's clock, before the
# expiry the lease had when the TERM was sent).  The killed node, started again, waits as a standby: never a
# second copy.  Last, a holder killed and started again at once: one copy
# within the same bound, wherever (it may take its own lease back before
# the expiry).  The exactly-one sampler watches for the whole test.
. "$(dirname "$0")/lib.sh"
# Stages 1 and 2 run it: not again under valgrind nor in distcheck.
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
cluster_need

# The harness's timings (cluster-lib.sh), in ms, for the bounds.
TTL=3000 RENEW=500
# The scheduling delay allowed beyond the protocol's own bounds: 1 s per
# VIGIL_TEST_SLOW (a busy machine runs the nodes and the database late).
SLACK=$((1000 * VIGIL_TEST_SLOW))
m=svc-$$
cluster_job svc <<EOF
command = {"bash", "-c", "env >\$VIGIL_TEST_ROOT/env.\$\$.tmp && mv \$VIGIL_TEST_ROOT/env.\$\$.tmp \$VIGIL_TEST_ROOT/env.\$\$ && exec -a $m sleep 1000", "$m"}
cluster = true
stop_timeout = "500ms"
EOF

UP="1 2 3"

# field I KEY: KEY of svc in node I's --json status ("null" if none).
field() {
	{ nctl "$1" --json status svc 2>/dev/null || :; } |
		jq -r --arg k "$2" '.jobs[0][$k] | tostring'
}

# copy: the one copy of svc there is (fails unless exactly one).
copy() {
	local p
	p=$(marker_pids "$m")
	[ -n "$p" ] && [ "$(echo "$p" | wc -l)" = 1 ] && echo "$p"
}

# one_runs: svc RUNNING on exactly one of the nodes up, its child the one
# copy, its env written; sets H (the node), P (the child), E (the token).
one_runs() {
	local i r=''
	for i in $UP; do
		[ "$(field "$i" state)" != RUNNING ] || r="$r $i"
	done
	[ "$(echo "$r" | wc -w)" = 1 ] || return 1
	H=${r# }
	P=$(field "$H" pid)
	E=$(field "$H" fencing_token)
	[ "$P" = "$(copy)" ] && [ -s "$T/env.$P" ] &&
		[ "$(sed -n 's/^VIGIL_FENCING_TOKEN=//p' "$T/env.$P")" = "$E" ] &&
		[ "$(sed -n 's/^VIGIL_NODE=//p' "$T/env.$P")" = "n$H" ]
}

# new_copy OLD: a copy of svc that is not OLD; its pid in NEWP.
new_copy() { NEWP=$(copy) && [ "$NEWP" != "$1" ]; }

# standby I NODE: node I waits for the lease that node NODE holds.
standby() {
	[ "$(field "$1" state) $(field "$1" node)" = "STARTING n$2" ]
}

# lease_row: holder, epoch, and expires_at in ms since the epoch.
lease_row() {
	pg_sql "SELECT coalesce(l.holder, '-') || ' ' || l.epoch || ' ' ||
		(extract(epoch FROM l.expires_at) * 1000)::bigint
		FROM vigil.lease l JOIN vigil.job j ON j.id = l.job_id WHERE j.name = 'svc'"
}

pg_start
for i in 1 2 3; do node_start "$i"; done
sampler_start "$m"
retry 10 one_runs || fail "svc does not run exactly once"
log "svc runs on n$H: pid $P, token $E"

# --- SIGKILL the holder's vigild.
K=$H P1=$P E1=$E
t0=$(now_ms)
node_kill "$K" KILL
retry 2 dead "$P1" || fail "the child $P1 outlived its vigild (n$K) by 2 s"
tdead=$(now_ms)
UP=$(echo "1 2 3" | tr ' ' '\n' | grep -vx "$K" | tr '\n' ' ')
# The lease row as n$K left it (once its sessions are gone: no renew is
# on its way): when it expires on the database's clock.
retry 5 pg_has_backends "n$K" 0 || fail "n$K's sessions outlived it"
row=$(lease_row)
[ "${row% *}" = "n$K $E1" ] || fail "the lease row is not n$K's: $row"
expires=${row##* }
retry $(((TTL + RENEW + 1000) / 1000 + 1)) new_copy "$P1" ||
	fail "no new copy of svc within $((TTL + RENEW + 1000)) ms of the SIGKILL"
ttake=$(now_ms)
retry 5 one_runs || fail "svc does not run exactly once after the failover"
row=$(lease_row)
acquired=$(pg_sql "SELECT (extract(epoch FROM l.acquired_at) * 1000)::bigint
	FROM vigil.lease l JOIN vigil.job j ON j.id = l.job_id WHERE j.name = 'svc'")
log "SIGKILL of n$K: child gone in $((tdead - t0)) ms; n$H runs svc $((ttake - t0)) ms after the kill (pid $P, token $E); acquired $((acquired - expires)) ms after the expiry (database clock)"
check "the child died within $SLACK ms of its vigild ($((tdead - t0)) ms)" \
	[ $((tdead - t0)) -le "$SLACK" ]
# (The database's clock is the judge of the expiry, below; this is a
# bound that a late renew cannot break.)
check "the takeover waited for the lease: $((ttake - t0)) ms >= $((TTL - 2 * RENEW))" \
	[ $((ttake - t0)) -ge $((TTL - 2 * RENEW)) ]
check "the takeover within lease_ttl + renew_interval + $SLACK ms ($((ttake - t0)) ms)" \
	[ $((ttake - t0)) -le $((TTL + RENEW + SLACK)) ]
check "acquired after the expiry on the database's clock ($((acquired - expires)) ms)" \
	[ "$acquired" -ge "$expires" ]
check "the new copy's pid is NEWP ($NEWP = $P)" [ "$NEWP" = "$P" ]
check "the token grew: $E > $E1" [ "$E" -gt "$E1" ]
check "the lease row: n$H, epoch $E" [ "${row% *}" = "n$H $E" ]
checks_passed

# --- SIGTERM the new holder: it gives the lease back, the last node runs
# svc at once.
G=$H P2=$P E2=$E
L=$(echo "$UP" | tr ' ' '\n' | grep -vx "$G" | grep .)
pid=$(node_pid "$G")
row=$(lease_row)
[ "${row% *}" = "n$G $E2" ] || fail "the lease row is not n$G's: $row"
expires=${row##* }
t0=$(now_ms)
node_kill "$G" TERM
RETRY_POLL=0.02 retry 3 new_copy "$P2" || fail "no new copy of svc within 3 s of n$G's SIGTERM"
ttake=$(now_ms)
UP=$L
retry 5 one_runs || fail "svc does not run exactly once after the hand-over"
log "SIGTERM of n$G: n$H runs svc $((ttake - t0)) ms later (pid $P, token $E)"
check "n$L runs it" [ "$H" = "$L" ]
acquired=$(pg_sql "SELECT (extract(epoch FROM l.acquired_at) * 1000)::bigint
	FROM vigil.lease l JOIN vigil.job j ON j.id = l.job_id WHERE j.name = 'svc'")
check "the hand-over did not wait for the expiry: acquired $((expires - acquired)) ms before it (database clock)" \
	[ "$acquired" -lt "$expires" ]
check "the token grew: $E > $E2" [ "$E" -gt "$E2" ]
check "n$G gave the lease back" grep -q "^vigild: svc: cluster lease given back: epoch $E2\$" "$(node_log "$G")"
retry 15 dead "$pid" || fail "n$G did not exit"
node_stop "$G"
checks_passed

# --- n$K, killed, starts again: a standby of n$H, no second copy.
node_start "$K"
UP="$H $K"
retry 5 standby "$K" "$H" ||
	fail "n$K is not a standby of n$H: $(field "$K" state), node $(field "$K" node)"
# A few renew intervals later, still so.
changed() { ! standby "$K" "$H" || [ "$P" != "$(copy)" ]; }
! retry 2 changed ||
	fail "the restarted n$K changed something: n$K $(field "$K" state), copies $(marker_pids "$m" | tr '\n' ' ')"
check "n$K logged no lease acquired since its restart" \
	[ "$(grep -c '^vigild: svc: cluster lease acquired' "$(node_log "$K")")" = 1 ]
checks_passed

# --- SIGKILL the holder and start it again at once: it may take its own
# lease back before the expiry, or wait with n$K; one copy either way.
R=$H P3=$P E3=$E
t0=$(now_ms)
node_kill "$R" KILL
node_start "$R"
tup=$(now_ms)
retry $(((TTL + RENEW + 1000) / 1000 + 1)) new_copy "$P3" ||
	fail "no new copy of svc within $((TTL + RENEW + 1000)) ms of n$R's SIGKILL and restart"
ttake=$(now_ms)
UP="$R $K"
retry 5 one_runs || fail "svc does not run exactly once after n$R's restart"
if [ "$H" = "$R" ] && [ $((ttake - t0)) -lt $((TTL - RENEW)) ]; then
	how="took its own lease back"
else
	how="waited for the expiry"
fi
log "SIGKILL of n$R, up again in $((tup - t0)) ms: n$H runs svc $((ttake - t0)) ms after the kill (pid $P, token $E): n$R $how"
check "the token grew: $E > $E3" [ "$E" -gt "$E3" ]
check "within lease_ttl + renew_interval + $SLACK ms ($((ttake - t0)) ms)" \
	[ $((ttake - t0)) -le $((TTL + RENEW + SLACK)) ]
checks_passed

# --- One history on every node (issue 35, item 3): the runs of all the
# nodes, from the database, each with its node; those cut by a SIGKILL
# are closed as lost by the run that followed.
hist() {
	nctl "$1" --json history svc |
		jq -r '.runs[] | "\(.node) \(.fencing_token) \(.pid) \(.reason // "running")"'
}
h1=$(hist "$R") h2=$(hist "$K")
printf '%s\n' "$h1" | while IFS= read -r l; do log "history: $l"; done
check "history is the same on n$R and n$K" [ "$h1" = "$h2" ]
check "history has the runs of more than one node" \
	[ "$(printf '%s\n' "$h1" | awk '{ print $1 }' | sort -u | wc -l)" -ge 2 ]
check "the runs cut by a SIGKILL are closed as lost" \
	[ "$(printf '%s\n' "$h1" | grep -c ' lost: n[0-9] recorded no end (a new run began on n[0-9])$')" -ge 2 ]
check "the last run is the holder's, running" [ "$(printf '%s\n' "$h1" | tail -n 1)" = "n$H $E $P running" ]
check "no other run is open" [ "$(printf '%s\n' "$h1" | grep -c ' running$')" = 1 ]
nctl "$K" history svc >"$T/hist.txt"
check "the table has a NODE column" grep -q '^START .* EXIT  *NODE  *REASON$' "$T/hist.txt"
# status: the same on both nodes; the last end is the lost run.
for i in "$R" "$K"; do
	nctl "$i" status svc >"$T/st.$i" || true
	check "n$i: status svc: n$H, RUNNING, pid $P, the last run lost ($(cat "$T/st.$i"))" \
		grep -Eq "^svc +n$H +RUNNING +$P .* lost \(n[0-9]\)  \(cluster" "$T/st.$i"
done
checks_passed

sampler_stop
node_stop "$K"
node_stop "$R"
log "ok"
