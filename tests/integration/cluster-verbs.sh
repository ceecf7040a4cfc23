#!/bin/bash
# Every verb from any node does what it says, and waits (issue 35, item
# 2): restart, signal, stop and start of a cluster service asked on a node
# that does not hold its lease act on the holder's run and return once
# the holder has done it, with the holder's words ("svc: restarted on
# n1 (pid 4242)").  A stop returns only once the holder's run is gone
# (its SIGTERM handler takes a second); a start waits for a node to run
# it; a signal with no run anywhere fails; a rolling restart goes across
# the nodes.  The exactly-one sampler watches throughout.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
cluster_need

# Long enough for a stop_timeout longer than the TERM handler's second.
CLUSTER_LEASE_TTL=10s

# A beating job that notes SIGUSR1, and takes a second to end at SIGTERM.
cat >"$T/slow.sh" <<'SH'
f=$1
b() { echo "${EPOCHREALTIME/./} $VIGIL_NODE $VIGIL_FENCING_TOKEN $$${1:+ $1}" >>"$f"; }
trap 'b usr1' USR1
trap 'b term; sleep 1; b exit; exit 0' TERM
while :; do b; sleep 0.02; done
SH
cluster_job svc <<JOB
command = {"bash", "$T/slow.sh", "$T/beats-svc", "$(beat_marker svc)"}
cluster = true
stop_timeout = "5s"
min_uptime = "300ms"
JOB
cluster_job web <<JOB
command = {"bash", "$T/slow.sh", "$T/beats-web", "$(beat_marker web)"}
cluster = true
instances = 2
stop_timeout = "5s"
min_uptime = "300ms"
JOB
sampler_start "$(beat_marker svc)"
pg_start
node_start 1
retry 10 node_runs 1 svc || fail "node 1 does not run svc: $(node_status 1 svc reason)"
node_start 2
node_start 3
retry 10 node_standby 2 svc && retry 10 node_standby 3 svc ||
	fail "nodes 2 and 3 are not standbys: $(node_status 2 svc reason) / $(node_status 3 svc reason)"
pid1=$(node_status 1 svc pid)

# --- restart on n2: the holder's run restarts; the answer is the holder's.
out=$(nctl 2 restart svc 2>&1) || fail "restart on n2 failed: $out"
log "restart on n2: $out"
r=$(job_runner svc) || fail "nobody runs svc after the restart"
pid2=$(node_status "$r" svc pid)
[ "$out" = "svc: restarted on n$r (pid $pid2)" ] || fail "restart on n2 said '$out'; n$r runs pid $pid2"
[ "$pid2" != "$pid1" ] || fail "the restart left pid $pid1 running"
! kill -0 "$pid1" 2>/dev/null || fail "the old run $pid1 is still alive after the restart returned"
grep -q " $pid1 exit\$" "$T/beats-svc" || fail "the old run did not end by its TERM handler"
node_standby 2 svc || fail "n2 does not stand by after its restart: $(node_status 2 svc reason)"

# --- signal on n3: the holder's run gets it.
out=$(nctl 3 signal USR1 svc 2>&1) || fail "signal on n3 failed: $out"
[ "$out" = "svc: signalled USR1 on n$r (pid $pid2)" ] || fail "signal on n3 said '$out'"
got_usr1() { grep -q " $pid2 usr1\$" "$T/beats-svc"; }
retry 5 got_usr1 || fail "the run $pid2 did not get SIGUSR1"

# --- stop on a non-holder: returns once the holder's run is gone.
o=$((r == 1 ? 2 : 1))
out=$(nctl "$o" stop svc 2>&1) || fail "stop on n$o failed: $out"
gone=no
kill -0 "$pid2" 2>/dev/null || gone=yes
log "stop on n$o: $out (run $pid2 gone at return: $gone)"
[ "$gone" = yes ] || fail "stop on n$o returned while the holder's run $pid2 was still alive"
grep -q " $pid2 exit\$" "$T/beats-svc" || fail "the run $pid2 had not finished its TERM handler when stop returned"
[ "$out" = "svc: stopped on n$r" ] || fail "stop on n$o said '$out'"
for i in 1 2 3; do
	[ "$(node_status "$i" svc state)" = STOPPED ] || fail "svc is $(node_status "$i" svc state) on n$i after the stop"
done

# --- signal with no run anywhere fails, and says so.
! out=$(nctl 2 signal HUP svc 2>&1) || fail "a signal with no run anywhere succeeded: $out"
[ "$out" = "svc: not running on any node" ] || fail "signal with no run said '$out'"

# --- start on n3: waits until some node runs it.
out=$(nctl 3 start svc 2>&1) || fail "start on n3 failed: $out"
r=$(job_runner svc) || fail "start on n3 returned and nobody runs svc: $out"
pid3=$(node_status "$r" svc pid)
[ "$out" = "svc: started on n$r (pid $pid3)" ] || fail "start on n3 said '$out'; n$r runs pid $pid3"
o=$((r == 1 ? 2 : 1))
out=$(nctl "$o" start svc 2>&1) || fail "a second start failed: $out"
[ "$out" = "svc: started on n$r (pid $pid3)" ] || fail "a start of what runs said '$out'"
[ "$(node_status "$r" svc pid)" = "$pid3" ] || fail "a start of what runs restarted it"

# --- a rolling restart across the nodes: one instance at a time.
for i in 0 1; do
	retry 10 job_runner "web@$i" >/dev/null || fail "nobody runs web@$i"
done
before0=$(node_status "$(job_runner web@0)" web@0 pid)
before1=$(node_status "$(job_runner web@1)" web@1 pid)
out=$(nctl 3 restart --rolling web 2>&1) || fail "the rolling restart failed: $out"
log "restart --rolling web on n3: $(echo "$out" | tr '\n' ';')"
for i in 0 1; do
	r=$(job_runner "web@$i") || fail "nobody runs web@$i after the roll"
	p=$(node_status "$r" "web@$i" pid)
	echo "$out" | grep -Eq "^web@$i: (restarted on n$r \\(pid $p\\)|started)\$" ||
		fail "the roll said nothing true of web@$i (n$r pid $p): $out"
done
[ "$(node_status "$(job_runner web@0)" web@0 pid)" != "$before0" ] || fail "web@0 kept its pid"
[ "$(node_status "$(job_runner web@1)" web@1 pid)" != "$before1" ] || fail "web@1 kept its pid"
# In order, one at a time: web@0's answer came before web@1's.
[ "$(echo "$out" | cut -d: -f1 | tr '\n' ' ')" = "web@0 web@1 " ] || fail "the roll's answers are not in order: $out"

sampler_stop
beats_check svc
log "verbs from any node: restart, signal, stop and start answered by the holder"
