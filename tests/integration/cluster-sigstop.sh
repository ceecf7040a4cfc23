#!/bin/bash
# Cluster mode: the holder's vigild stopped (SIGSTOP) for longer than
# lease_ttl, so that it can neither renew nor fence (design 3.2, 4.4).
# Its fence keeper (the child process "vigild-keeper") kills the copy at
# the trust deadline, at least fence_margin before node 2 or 3 starts
# its own (the beats of two copies never overlap; the sampler sees at
# most one copy in every 10 ms sample), and the takeover comes within
# lease_ttl + 2 s.  After SIGCONT node 1 runs no second copy: it is a
# standby, and the new holder keeps its copy and token.  Then the new
# holder's keeper is killed: vigild starts another and tells it every
# record again, and a SIGSTOP of that vigild is still fenced by it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

cluster_need

CLUSTER_LEASE_TTL=3s CLUSTER_RENEW_INTERVAL=500ms CLUSTER_QUERY_TIMEOUT=500ms
CLUSTER_CONNECT_TIMEOUT=500ms CLUSTER_FENCE_MARGIN=500ms
TTL_MS=3000 MARGIN_MS=500 RENEW_MS=500

beats_by_other() {
	[ -n "$(beat_last svc token)" ] && [ "$(beat_last svc token)" != "$1" ]
}

beat_job svc 'stop_timeout = "500ms"' | cluster_job svc
sampler_start "$(beat_marker svc)"
pg_start
node_start 1
retry 10 node_runs 1 svc || fail "node 1 does not run svc: $(node_status 1 svc reason)"
node_start 2
node_start 3
retry 10 node_standby 2 svc && retry 10 node_standby 3 svc ||
	fail "nodes 2 and 3 are not standbys: $(node_status 2 svc reason) / $(node_status 3 svc reason)"

# Node 1's keeper: a child of its vigild named vigild-keeper.
keeper=
for p in $(pg_children "$(node_pid 1)"); do
	[ "$(cat "/proc/$p/comm" 2>/dev/null)" = vigild-keeper ] && keeper=$p
done
[ -n "$keeper" ] || fail "node 1 has no vigild-keeper child"
old=$(node_status 1 svc fencing_token)
opid=$(node_status 1 svc pid)
log "node 1 holds svc (token $old, pid $opid), its keeper is pid $keeper"

# --- vigild stopped for lease_ttl + 2 s.
t0=$(now_us)
node_kill 1 STOP
retry $(((TTL_MS + 2000) / 1000 + 3)) beats_by_other "$old" ||
	fail "no takeover in $(((TTL_MS + 2000) / 1000 + 3)) s"
tok=$(beat_last svc token)
n=$(beat_last svc node)
NEW=${n#n}
dead "$opid" || fail "node 1's child $opid outlived the takeover"
beats_check svc quiet
last=$(beat_sum svc "$old" last)
first=$(beat_sum svc "$tok" first)
[ "$(beat_sum svc "$old" term)" = 0 ] ||
	fail "node 1's child got a TERM: vigild was stopped, only the keeper acts"
grep -q "vigild-keeper: .*sent KILL to group $opid" "$(node_log 1)" ||
	fail "the keeper did not log its KILL of group $opid: $(tail -n 5 "$(node_log 1)")"
log "SIGSTOP: keeper's kill (the old copy's last beat) +$(us_ms "$t0" "$last") ms, $n's first beat +$(us_ms "$t0" "$first") ms (token $tok), gap $(us_ms "$last" "$first") ms"
# The keeper kills at trust: last answered renew + ttl - margin, the renew
# sent at most renew_interval (+ a late tick) before the stop.
[ $((last - t0)) -ge $(((TTL_MS - MARGIN_MS - RENEW_MS - 300) * 1000)) ] ||
	fail "the keeper killed too early"
[ $((last - t0)) -le $(((TTL_MS - MARGIN_MS + 1000) * 1000)) ] ||
	fail "the keeper killed too late"
[ $((first - last)) -ge $((MARGIN_MS * 1000)) ] ||
	fail "the new copy started $(us_ms "$last" "$first") ms after the old one's end (< fence_margin)"
[ $((first - t0)) -le $(((TTL_MS + 2000) * 1000)) ] ||
	fail "takeover $(us_ms "$t0" "$first") ms after the stop (> lease_ttl + 2 s)"
[ "$tok" -gt "$old" ] || fail "token $tok after $old"
retry 5 node_runs "$NEW" svc || fail "node $NEW does not show svc running"
[ "$(node_status "$NEW" svc fencing_token)" = "$tok" ] ||
	fail "node $NEW's token is not its child's $tok"

# Node 1 stays stopped until lease_ttl + 2 s after the stop.
while [ "$(now_us)" -lt $((t0 + (TTL_MS + 2000) * 1000)) ]; do sleep 0.05; done
alive "$keeper" || fail "the keeper is gone while node 1 was stopped"
t1=$(now_us)
node_kill 1 CONT
retry 10 node_standby 1 svc || fail "node 1 is not a standby after SIGCONT: $(node_status 1 svc reason)"
log "SIGCONT: node 1 a standby $(us_ms "$t1" "$(now_us)") ms later: $(node_status 1 svc reason)"
# Once it has caught up (its fence and a bid), node 1 must not start a
# copy: the beats stay the new holder's for one more renew round.
t2=$(now_us)
while [ "$(now_us)" -lt $((t2 + 2 * RENEW_MS * 1000)) ]; do
	[ "$(beat_last svc token)" = "$tok" ] || fail "the lease moved after SIGCONT: $(tail -n 1 "$T/beats-svc")"
	sleep 0.05
done
[ "$(node_status "$NEW" svc fencing_token)" = "$tok" ] && node_runs "$NEW" svc ||
	fail "node $NEW lost svc after node 1's SIGCONT"
[ -z "$(awk -v t="$tok" '$3 > t' "$T/beats-svc")" ] || fail "a copy after token $tok"
log "node 1's log after SIGCONT: $(grep 'svc: cluster' "$(node_log 1)" | tail -n 3 | tr '\n' '|')"

# --- The holder's keeper killed: vigild starts a new one and tells it
# every record again, so a stop of that vigild is still fenced.
keeper_of() {
	local p
	for p in $(pg_children "$(node_pid "$1")"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = vigild-keeper ] && echo "$p"
	done
	return 0
}
k=$(keeper_of "$NEW")
[ -n "$k" ] || fail "node $NEW has no keeper"
kill -KILL "$k"
new_keeper() { local x; x=$(keeper_of "$NEW"); [ -n "$x" ] && [ "$x" != "$k" ]; }
retry 5 new_keeper || fail "node $NEW did not start a new keeper"
grep -q "fence keeper (pid $k) ended" "$(node_log "$NEW")" ||
	fail "node $NEW did not log its keeper's end"
npid=$(node_status "$NEW" svc pid)
t3=$(now_us)
node_kill "$NEW" STOP
gone_new() { dead "$npid"; }
retry $(((TTL_MS + 2000) / 1000 + 3)) gone_new ||
	fail "the new keeper did not kill node $NEW's copy (pid $npid)"
grep -q "vigild-keeper: .*sent KILL to group $npid" "$(node_log "$NEW")" ||
	fail "the new keeper did not log its kill"
log "new keeper: node $NEW's copy killed $(us_ms "$t3" "$(now_us)") ms after its vigild stopped"
node_kill "$NEW" CONT
others() { local x; x=$(beat_last svc token); [ -n "$x" ] && [ "$x" -gt "$tok" ]; }
retry $(((TTL_MS + 2000) / 1000 + 3)) others || fail "nobody took svc over from node $NEW"
beats_check svc quiet

# The nodes leave one by one (each hands svc on), under the sampler.
for i in 1 2 3; do node_stop "$i"; done
sampler_stop
beats_check svc
log "ok"
