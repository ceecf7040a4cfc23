#!/bin/bash
# Maintenance without a gap (issue 35, item 6), with the default 30 s
# lease: `vigilctl cluster drain` hands every cluster instance of a node
# over at once (its run stops, the lease goes back and wakes the
# standbys, another node starts it), and the node takes no cluster work
# until `cluster undrain`, also across its restarts; any node may drain
# any node.  A rolling restart of the three nodes keeps the singleton's
# every gap under 3 s (a lease not given back would leave 30 s).  The
# exactly-one sampler watches throughout.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
cluster_need

CLUSTER_LEASE_TTL=30s
GAP_MS=3000

beat_job svc 'stop_timeout = "500ms"' | cluster_job svc
sampler_start "$(beat_marker svc)"
pg_start
node_start 1
retry 10 node_runs 1 svc || fail "node 1 does not run svc: $(node_status 1 svc reason)"
node_start 2
node_start 3
retry 10 node_standby 2 svc && retry 10 node_standby 3 svc ||
	fail "nodes 2 and 3 are not standbys: $(node_status 2 svc reason) / $(node_status 3 svc reason)"

runner() { job_runner svc; }
# gaps: the longest time in ms between a copy's last beat and the next
# copy's first, over every change of copy so far.
gaps() {
	beats_check svc quiet
	awk 'NR > 1 { g = ($4 - last) / 1000; if (g > max) max = g } { last = $5 }
		END { printf "%d\n", max }' "$T/beats-svc.sum"
}
drained_in() { nctl "$1" --json cluster | jq -r --arg n "$2" '.nodes[] | select(.name == $n) | .drained'; }

# --- drain the holder: svc moves at once.
out=$(nctl 1 cluster drain) || fail "cluster drain failed: $out"
[ "$out" = "n1: drained: its cluster instances move to the other nodes; it takes no cluster work until undrained" ] ||
	fail "cluster drain said: $out"
moved() { r=$(runner) && [ "$r" != 1 ]; }
retry 10 moved || fail "svc did not move off the drained n1: $(node_status 2 svc reason) / $(node_status 3 svc reason)"
g=$(gaps)
log "drain n1: svc moved to n$r, gap $g ms"
[ "$g" -lt "$GAP_MS" ] || fail "the drain left svc off for $g ms"
grep -q 'cluster: node n1 drained: 1 cluster instance handed over' "$(node_log 1)" ||
	fail "node 1 did not log the drain"
standing() { [ "$(node_status "$1" svc reason)" = "standing by: node n$1 is drained (vigilctl cluster undrain)" ]; }
retry 10 standing 1 || fail "node 1 does not say it is drained: $(node_status 1 svc state) $(node_status 1 svc reason)"
[ "$(drained_in "$r" n1)" = true ] || fail "vigilctl cluster on n$r does not show n1 drained"
nctl "$r" cluster | grep -q '^n1 .*drained' || fail "the table does not say drained: $(nctl "$r" cluster)"

# --- any node drains another; the last undrained node runs it.
o=$((r == 2 ? 3 : 2))
nctl 1 cluster drain "n$r" >/dev/null || fail "node 1 could not drain n$r"
on_o() { node_runs "$o" svc; }
retry 10 on_o || fail "svc is not on n$o, the one node left: $(node_status "$o" svc reason)"
retry 10 standing "$r" || fail "node $r does not say it is drained: $(node_status "$r" svc reason)"
g=$(gaps)
log "drain n$r from n1: svc moved to n$o, gap $g ms"
[ "$g" -lt "$GAP_MS" ] || fail "the drain left svc off for $g ms"
! nctl 1 cluster drain nosuch 2>"$T/err" || fail "drain of an unknown node succeeded"
grep -q 'no node nosuch in the cluster' "$T/err" || fail "drain of an unknown node said: $(cat "$T/err")"

# --- undrain: back to standing by, nothing moves.
nctl "$o" cluster undrain n1 >/dev/null && nctl "$o" cluster undrain "n$r" >/dev/null || fail "undrain failed"
retry 10 node_standby 1 svc && retry 10 node_standby "$r" svc ||
	fail "undrained nodes do not stand by: $(node_status 1 svc reason) / $(node_status "$r" svc reason)"
node_runs "$o" svc || fail "svc moved at an undrain"
[ "$(drained_in 1 n1)" = false ] || fail "n1 still shown drained"

# --- a rolling restart of the three nodes, the holder among them.
for i in 1 2 3; do
	node_stop "$i"
	node_start "$i"
	back() { runner >/dev/null && { node_runs "$i" svc || node_standby "$i" svc; }; }
	retry 15 back || fail "after the restart of n$i: svc on [$(runner)], n$i: $(node_status "$i" svc reason)"
done
g=$(gaps)
log "rolling restart of n1 n2 n3: the longest gap $g ms; copies: $(awk '{ printf "%s ", $3 }' "$T/beats-svc.sum")"
[ "$g" -lt "$GAP_MS" ] || fail "a restart left svc off for $g ms: $(cat "$T/beats-svc.sum")"

# --- a drained node stays drained when it restarts.
h=$(runner)
s=$((h == 3 ? 1 : 3))
nctl "$h" cluster drain "n$s" >/dev/null || fail "drain n$s failed"
retry 10 standing "$s" || fail "n$s is not drained: $(node_status "$s" svc reason)"
node_stop "$s"
node_start "$s"
retry 10 standing "$s" || fail "n$s forgot its drain when it restarted: $(node_status "$s" svc reason)"
grep -q "cluster: node n$s drained: 0 cluster instances handed over" "$(node_log "$s")" ||
	fail "n$s did not log its drain at start"

for i in 1 2 3; do node_stop "$i"; done
sampler_stop
beats_check svc quiet
log "ok: $(wc -l <"$T/beats-svc.sum") copies, never two at once"
