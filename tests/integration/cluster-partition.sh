#!/bin/bash
# Cluster mode: the holder of a lease cut off from the database fences
# itself before anyone else may take over (design 3.2, 4.4).  Three nodes,
# one cluster service whose child beats every 20 ms (beat_job); node 1
# reaches the server through a TCP proxy.  (a) A silent partition: node
# 1's proxy frozen (no FIN, no RST).  (b) Node 1's sessions ended and its
# logins refused (pg_nologin + pg_terminate).  Each time: node 1 sends
# the stop signal (the child's TERM) and its child is gone before node 2
# or 3 starts a copy, at least fence_margin before; the takeover comes
# within lease_ttl + 2 s; once healed, node 1 is a standby and the new
# holder keeps its copy.  The sampler sees at most one copy in every
# 10 ms sample, and the beats of two copies never overlap.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

# Slow (two TTLs per fault), and the same under valgrind.
cluster_need

CLUSTER_LEASE_TTL=3s CLUSTER_RENEW_INTERVAL=500ms CLUSTER_QUERY_TIMEOUT=500ms
CLUSTER_CONNECT_TIMEOUT=500ms CLUSTER_FENCE_MARGIN=500ms
TTL_MS=3000 MARGIN_MS=500 STOP_MS=500 RENEW_MS=500

beats_by_other() {
	[ -n "$(beat_last svc token)" ] && [ "$(beat_last svc token)" != "$1" ]
}

beat_job svc 'stop_timeout = "500ms"' | cluster_job svc
sampler_start "$(beat_marker svc)"
pg_start
node_proxy 1
node_start 1
retry 10 node_runs 1 svc || fail "node 1 does not run svc: $(node_status 1 svc reason)"
node_start 2
node_start 3
retry 10 node_standby 2 svc && retry 10 node_standby 3 svc ||
	fail "nodes 2 and 3 are not standbys: $(node_status 2 svc reason) / $(node_status 3 svc reason)"
log "node 1 holds svc, nodes 2 and 3 wait"

# fault_check WHAT T0 OLDTOKEN: after the fault at T0 (usec) on node 1,
# holder of OLDTOKEN: node 1 fenced (the log, TERM), its child gone at
# least fence_margin before the new copy's first beat, and that within
# lease_ttl + 2 s of T0.  Sets NEW (the new holder's number).
fault_check() {
	local what=$1 t0=$2 old=$3 tok opid term last first n
	retry $(((TTL_MS + 2000) / 1000 + 3)) beats_by_other "$old" ||
		fail "$what: no takeover in $(((TTL_MS + 2000) / 1000 + 3)) s; node 1: $(tail -n 5 "$(node_log 1)")"
	tok=$(beat_last svc token)
	n=$(beat_last svc node)
	NEW=${n#n}
	retry 5 node_runs "$NEW" svc || fail "$what: node $NEW does not show svc running"
	[ "$(node_status "$NEW" svc fencing_token)" = "$tok" ] ||
		fail "$what: node $NEW's token is not its child's $tok"
	[ "$tok" -gt "$old" ] || fail "$what: token $tok after $old"
	opid=$(awk -v t="$old" '$3 == t { print $4; exit }' "$T/beats-svc")
	dead "$opid" || fail "$what: node 1's child $opid still runs"
	grep -q "svc: cluster lease not renewed in time .*: fencing: stopping it before anyone else may take over" \
		"$(node_log 1)" || fail "$what: node 1 did not log the fence"
	beats_check svc quiet
	term=$(beat_sum svc "$old" term)
	last=$(beat_sum svc "$old" last)
	first=$(beat_sum svc "$tok" first)
	[ "$term" -gt 0 ] || fail "$what: node 1's child got no stop signal (killed at once?)"
	log "$what: TERM +$(us_ms "$t0" "$term") ms, old copy's last beat +$(us_ms "$t0" "$last") ms, $n's first beat +$(us_ms "$t0" "$first") ms (token $tok), gap $(us_ms "$last" "$first") ms"
	# The stop comes at trust - stop_timeout: the last answered renew
	# was sent at most renew_interval (+ a late tick) before the fault.
	[ $((term - t0)) -ge $(((TTL_MS - MARGIN_MS - STOP_MS - RENEW_MS - 300) * 1000)) ] ||
		fail "$what: fenced too early"
	[ $((term - t0)) -le $(((TTL_MS - MARGIN_MS - STOP_MS + 1000) * 1000)) ] ||
		fail "$what: fenced too late"
	[ $((first - last)) -ge $((MARGIN_MS * 1000)) ] ||
		fail "$what: the new copy started $(us_ms "$last" "$first") ms after the old one's end (< fence_margin)"
	[ $((first - t0)) -le $(((TTL_MS + 2000) * 1000)) ] ||
		fail "$what: takeover $(us_ms "$t0" "$first") ms after the fault (> lease_ttl + 2 s)"
}

# heal_check WHAT TOKEN: node 1 is back, a standby; node NEW still runs
# TOKEN (the same child).
heal_check() {
	local what=$1 tok=$2 t0
	t0=$(now_us)
	retry 10 node_standby 1 svc || fail "$what: node 1 is not a standby: $(node_status 1 svc reason)"
	log "$what: node 1 a standby $(us_ms "$t0" "$(now_us)") ms after the heal: $(node_status 1 svc reason)"
	[ "$(node_status "$NEW" svc fencing_token)" = "$tok" ] && [ "$(beat_last svc token)" = "$tok" ] ||
		fail "$what: the lease moved after the heal"
}

# --- (a) Silent partition: node 1's proxy frozen.
old=$(node_status 1 svc fencing_token)
ups=$(grep -c 'cluster: lease connection up' "$(node_log 1)")
t0=$(now_us)
proxy_freeze n1
fault_check "partition" "$t0" "$old"
# The partition is held for 1 s more: node 1 must not come back meanwhile.
sleep 1
tok=$(beat_last svc token)
proxy_thaw n1
lost=$(grep 'cluster: lease connection lost' "$(node_log 1)" | head -n 1)
[ -n "$lost" ] || fail "partition: node 1 did not see its connection lost"
log "partition: node 1: $lost"
ups_more() { [ "$(grep -c 'cluster: lease connection up' "$(node_log 1)")" -gt "$ups" ]; }
retry 10 ups_more ||
	fail "partition: node 1 did not reconnect"
heal_check "partition" "$tok"

# --- Node 1 the holder again: the other two leave, the holder last.
other=$((NEW == 2 ? 3 : 2))
node_stop "$other"
node_stop "$NEW"
retry 10 node_runs 1 svc || fail "node 1 did not take svc back: $(node_status 1 svc reason)"
node_start 2
node_start 3
retry 10 node_standby 2 svc && retry 10 node_standby 3 svc || fail "nodes 2 and 3 are not standbys again"

# --- (b) Node 1's sessions ended, its logins refused.
old=$(node_status 1 svc fencing_token)
pg_nologin n1
t0=$(now_us)
[ "$(pg_terminate n1)" -ge 1 ] || fail "nologin: node 1 had no session"
fault_check "nologin" "$t0" "$old"
grep -q 'not permitted to log in' "$(node_log 1)" ||
	fail "nologin: node 1 did not try to log in again"
tok=$(beat_last svc token)
pg_login n1
heal_check "nologin" "$tok"

# The nodes leave one by one (each hands svc on), under the sampler.
for i in 1 2 3; do node_stop "$i"; done
sampler_stop
beats_check svc
log "ok"
