#!/bin/bash
# Cluster mode across a failover of the database (design 3.2, 4.4): a
# primary and a streaming standby, three nodes with the multi-host
# conninfo (target_session_attrs=read-write), one cluster service whose
# child beats every 20 ms, held by node 1.
# Fast failover (the primary crashed, the standby promoted at once):
# every node reconnects to the new primary, the holder renews, its child
# runs on (same pid and token, no TERM), and the new timeline's
# quarantine is logged.
# Slow failover (the old primary back as a standby of the new one, then
# the new one crashed and its standby promoted only after lease_ttl + 1 s,
# past the trust window): node 1 fences its child; after the promotion
# no copy starts before the quarantine (one lease_ttl) has passed; the
# new fencing token is in the range of the new timeline T,
# >= (T - 1) * 2^40 + 1, and above every earlier one.  The sampler sees
# at most one copy in every 10 ms sample, and the beats of two copies
# never overlap.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

cluster_need

# The fast failover must fit in the trust window: a crash, a promotion
# and three reconnections took up to 3.1 s at a load of 12 on two cores
# (and the I/O of other tests slows PostgreSQL more), so the lease lasts
# 5 s, or 3 s per VIGIL_TEST_SLOW (at most 4) on a busier machine.
SLOW=$((VIGIL_TEST_SLOW > 4 ? 4 : VIGIL_TEST_SLOW))
TTL_MS=$((3000 * SLOW > 5000 ? 3000 * SLOW : 5000)) MARGIN_MS=500 STOP_MS=500 RENEW_MS=500
CLUSTER_LEASE_TTL=${TTL_MS}ms CLUSTER_RENEW_INTERVAL=500ms CLUSTER_QUERY_TIMEOUT=500ms
CLUSTER_CONNECT_TIMEOUT=500ms CLUSTER_FENCE_MARGIN=500ms
TRUST_MS=$((TTL_MS - MARGIN_MS))

beat_job svc 'stop_timeout = "500ms"' | cluster_job svc
sampler_start "$(beat_marker svc)"
pg_start
pg_standby_start
node_start 1
retry 10 node_runs 1 svc || fail "node 1 does not run svc: $(node_status 1 svc reason)"
node_start 2
node_start 3
retry 10 node_standby 2 svc && retry 10 node_standby 3 svc ||
	fail "nodes 2 and 3 are not standbys: $(node_status 2 svc reason) / $(node_status 3 svc reason)"
grep -q "host=$PGSOCK_T,$PGSOCK_S .*target_session_attrs=read-write" "$T/n1/vigil.conf" ||
	fail "the nodes do not name both servers: $(grep conninfo "$T/n1/vigil.conf")"
tok=$(node_status 1 svc fencing_token)
pid=$(node_status 1 svc pid)
log "node 1 holds svc (token $tok, pid $pid)"

ups() { grep -c "cluster: lease connection up ($1)" "$(node_log "$2")" || true; }
# reconnected SOCK I N: node I's lease connection came up to SOCK more
# than N times.
reconnected() { [ "$(ups "$1" "$2")" -gt "$3" ]; }
# renewed MS: node 1 trusts its lease for more than MS, what a renew sent
# before the crash can have left it now: it renewed after the crash.
renewed() {
	awk -v s="$(node_status 1 svc lease_expires_in_s)" -v m="$1" \
		'BEGIN { exit !(s != "null" && s * 1000 > m) }'
}
quarantined() { grep -h "cluster: the database is on a new timeline ($1): a failover; no lease changes hands for" "$T"/n[123]/vigild.log; }
# timeline: the WAL timeline of the promoted server (still PG_AT=standby).
timeline() { PG_AT=standby pg_sql "SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int"; }

# --- Fast failover: crash, promote at once.
declare -A UPS
for i in 1 2 3; do UPS[$i]=$(ups "$PGSOCK_S" "$i"); done
t0=$(now_us)
pg_crash
pg_promote
tp=$(now_us)
for i in 1 2 3; do
	retry 10 reconnected "$PGSOCK_S" "$i" "${UPS[$i]}" ||
		fail "fast failover: node $i did not reconnect to the promoted server: $(tail -n 5 "$(node_log "$i")")"
done
tc=$(now_us)
# What the crash left of the trust window, then a renew on the new primary.
left=$((TRUST_MS - (tc - t0) / 1000))
retry 5 renewed "$left" || fail "fast failover: node 1 did not renew (trusted $(node_status 1 svc lease_expires_in_s) s more)"
tr=$(now_us)
retry 5 quarantined 2 >/dev/null || fail "fast failover: no node logged the quarantine of timeline 2"
log "fast failover: crash and promote took $(us_ms "$t0" "$tp") ms, every node reconnected by +$(us_ms "$t0" "$tc") ms, node 1 renewed by +$(us_ms "$t0" "$tr") ms; $(quarantined 2 | head -n 1)"
[ "$(node_status 1 svc pid)" = "$pid" ] && [ "$(node_status 1 svc fencing_token)" = "$tok" ] && alive "$pid" ||
	fail "fast failover: svc changed on node 1: pid $(node_status 1 svc pid), token $(node_status 1 svc fencing_token)"
! grep -q 'svc: cluster lease not renewed in time\|svc: cluster lease lost' "$(node_log 1)" ||
	fail "fast failover: node 1 fenced: $(grep 'svc: cluster' "$(node_log 1)")"
# The child beats on: a beat after the renew, and no TERM.
t1=$(now_us)
beat_since() { [ "$(tail -n 1 "$T/beats-svc" | cut -d' ' -f1)" -gt "$1" ]; }
retry 2 beat_since "$t1" || fail "fast failover: node 1's child stopped beating"
beats_check svc quiet
[ "$(wc -l <"$T/beats-svc.sum")" = 1 ] && [ "$(beat_sum svc "$tok" term)" = 0 ] ||
	fail "fast failover: svc was stopped or restarted: $(cat "$T/beats-svc.sum")"
[ "$(timeline)" = 2 ] || fail "fast failover: the new primary is on timeline $(timeline), not 2"

# --- Slow failover: the old primary rejoins as a standby; the new one
# crashes, and its standby is promoted after lease_ttl + 1 s.
pg_rejoin
# The standby streams what the primary writes: node 1's lease and its
# renewals.
lsn=$(pg_sql "SELECT pg_current_wal_lsn()")
caught_up() {
	[ "$(PG_AT=standby pg_sql "SELECT pg_last_wal_replay_lsn() >= '$lsn'")" = t ] &&
		[ "$(PG_AT=standby pg_sql "SELECT holder || ' ' || epoch FROM vigil.lease")" = "n1 $tok" ]
}
retry 10 caught_up || fail "the rejoined standby does not follow the primary"
node_standby 2 svc && node_standby 3 svc && node_runs 1 svc || fail "svc moved during the rejoin"
for i in 1 2 3; do UPS[$i]=$(ups "$PGSOCK_S" "$i"); done
t0=$(now_us)
pg_crash
gone() { dead "$pid"; }
retry $((TRUST_MS / 1000 + 3)) gone || fail "slow failover: node 1's child outlived its trust window"
beats_check svc quiet
term=$(beat_sum svc "$tok" term)
last=$(beat_sum svc "$tok" last)
[ "$term" -gt 0 ] || fail "slow failover: node 1's child got no stop signal"
grep -q "svc: cluster lease not renewed in time .*: fencing: stopping it before anyone else may take over" \
	"$(node_log 1)" || fail "slow failover: node 1 did not log the fence"
log "slow failover: node 1's TERM +$(us_ms "$t0" "$term") ms, last beat +$(us_ms "$t0" "$last") ms"
[ $((term - t0)) -ge $(((TRUST_MS - STOP_MS - RENEW_MS - 300) * 1000)) ] ||
	fail "slow failover: fenced too early"
# (vigild's KILL at the trust deadline comes when it gets the CPU.)
[ $((last - t0)) -le $(((TRUST_MS + 1000 * SLOW) * 1000)) ] ||
	fail "slow failover: the child outlived its trust deadline"
# No database: nobody may start svc; the promotion waits until lease_ttl
# + 1 s after the crash.
while [ "$(now_us)" -lt $((t0 + (TTL_MS + 1000) * 1000)) ]; do
	[ "$(beat_last svc token)" = "$tok" ] || fail "slow failover: svc started without a primary"
	sleep 0.05
done
tp0=$(now_us)
pg_promote
tp=$(now_us)
newer() { [ "$(beat_last svc token)" != "$1" ]; }
retry $((TTL_MS / 1000 + 5)) newer "$tok" || fail "slow failover: svc did not run again"
new=$(beat_last svc token)
n=$(beat_last svc node)
beats_check svc quiet
first=$(beat_sum svc "$new" first)
tl=$(timeline)
[ "$tl" = 3 ] || fail "slow failover: the new primary is on timeline $tl, not 3"
q=$(quarantined 3) || fail "slow failover: no node logged the quarantine of timeline 3"
log "slow failover: promoted at +$(us_ms "$t0" "$tp0") .. +$(us_ms "$t0" "$tp") ms; $(echo "$q" | head -n 1); $n's first beat +$(us_ms "$t0" "$first") ms (+$(us_ms "$tp0" "$first") ms after the promotion began), token $new"
[ $((first - tp0)) -ge $((TTL_MS * 1000)) ] ||
	fail "slow failover: a copy started $(us_ms "$tp0" "$first") ms after the promotion began, inside the quarantine ($TTL_MS ms)"
[ $((first - tp)) -le $(((TTL_MS + 3000 * SLOW) * 1000)) ] ||
	fail "slow failover: the takeover took $(us_ms "$tp" "$first") ms after the promotion"
[ "$new" -ge $(((tl - 1) * (1 << 40) + 1)) ] && [ "$new" -gt "$tok" ] ||
	fail "slow failover: token $new is not in timeline $tl's range (>= $(((tl - 1) * (1 << 40) + 1)))"
for i in 1 2 3; do
	reconnected "$PGSOCK_S" "$i" "${UPS[$i]}" ||
		fail "slow failover: node $i did not reconnect to the promoted server"
done
retry 5 node_runs "${n#n}" svc && [ "$(node_status "${n#n}" svc fencing_token)" = "$new" ] ||
	fail "slow failover: $n does not show svc with token $new"
[ "$(PG_AT=standby pg_sql "SELECT epoch FROM vigil.lease")" = "$new" ] ||
	fail "slow failover: the lease row has epoch $(PG_AT=standby pg_sql "SELECT epoch FROM vigil.lease"), not $new"

# The nodes leave one by one (each hands svc on), under the sampler.
for i in 1 2 3; do node_stop "$i"; done
sampler_stop
beats_check svc
log "ok"
