#!/bin/bash
# Placement (issue 35, item 7): cluster_nodes = ["n2", "n3*"] lets only
# n2 and n3 run a cluster service; n1 never runs it and says why.  With
# no live node that may run it, status and vigilctl cluster say so; once
# one is back, it runs.  A drain of the holder moves it to the other
# placed node, never to n1.  A periodic job placed on n1 alone runs every
# slot there.  The exactly-one sampler watches the service throughout.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
cluster_need

beat_job svc 'stop_timeout = "500ms"' 'cluster_nodes = {"n2", "n3*"}' | cluster_job svc
cat >"$T/tick.sh" <<'EOF'
echo "$VIGIL_NODE" >>"$1"
EOF
cluster_job tick <<EOF
kind = "periodic"
every = "1s"
cluster = true
cluster_nodes = {"n1"}
stop_timeout = "500ms"
command = {"bash", "$T/tick.sh", "$T/ticks"}
EOF
sampler_start "$(beat_marker svc)"
pg_start

runner() { job_runner svc; }
reason_is() { [ "$(node_status "$1" svc reason)" = "$2" ]; }
note_none() { nctl "$1" cluster | grep -q '^svc@0 .*no live node may run it'; }

# --- n1 alone: no live node may run svc.
node_start 1
retry 10 reason_is 1 "not placed on this node (cluster_nodes); no live node may run it" ||
	fail "n1 does not say it may not run svc: $(node_status 1 svc state) $(node_status 1 svc reason)"
retry 10 note_none 1 || fail "vigilctl cluster does not say no node may run svc: $(nctl 1 cluster)"
[ -z "$(marker_pids "$(beat_marker svc)")" ] || fail "svc runs on n1"

# --- n2 and n3 come: one of them runs it; n1 names the holder.
node_start 2
node_start 3
retry 10 runner >/dev/null || fail "svc does not run on n2 or n3: $(node_status 2 svc reason) / $(node_status 3 svc reason)"
r=$(runner)
[ "$r" != 1 ] || fail "svc runs on n1"
retry 10 reason_is 1 "not placed on this node (cluster_nodes); held by n$r" ||
	fail "n1 does not name the holder: $(node_status 1 svc reason)"
log "svc runs on n$r; n1: $(node_status 1 svc reason)"

# --- drain the holder: the other placed node takes it, never n1.
o=$((r == 2 ? 3 : 2))
nctl 1 cluster drain "n$r" >/dev/null || fail "drain n$r failed"
on_o() { node_runs "$o" svc; }
retry 10 on_o || fail "svc did not move to n$o: $(node_status "$o" svc reason)"
# Both drained: no live node may run it, and n1 does not take it.
nctl 1 cluster drain "n$o" >/dev/null || fail "drain n$o failed"
stopped() { ! runner >/dev/null && [ -z "$(marker_pids "$(beat_marker svc)")" ]; }
retry 10 stopped || fail "svc still runs with n2 and n3 drained"
retry 10 note_none 1 || fail "vigilctl cluster does not say no node may run svc: $(nctl 1 cluster)"
[ -z "$(runner)" ] || fail "svc runs on n$(runner)"
nctl 1 cluster undrain "n$r" >/dev/null || fail "undrain failed"
back() { r2=$(runner) && [ "$r2" = "$r" ]; }
retry 10 back || fail "svc did not run again on the undrained n$r: $(node_status "$r" svc reason)"
nctl 1 cluster undrain "n$o" >/dev/null || fail "undrain failed"
log "ok: svc ran only on n2 and n3; none placed and live: not run, and said"

# --- the periodic job placed on n1: every slot there.
: >"$T/ticks"
three() { [ "$(wc -l <"$T/ticks")" -ge 3 ]; }
retry 10 three || fail "tick did not run: $(node_status 1 tick reason)"
[ "$(sort -u "$T/ticks")" = n1 ] || fail "tick ran elsewhere than n1: $(sort "$T/ticks" | uniq -c)"
log "ok: tick ran $(wc -l <"$T/ticks") slots, all on n1"

for i in 1 2 3; do node_stop "$i"; done
sampler_stop
