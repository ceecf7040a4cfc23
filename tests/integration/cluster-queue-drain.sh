#!/bin/bash
# shellcheck disable=SC2317 # predicates called through retry
# Cluster queue: how runs end when the job stops, a node shuts down or
# the database goes.  One queue job q (cluster = true, concurrency 2 on
# each of three nodes, drain_timeout 2s, stop_timeout 1s) whose runs log
# START, TERM and END; on TERM a run finishes its work (200 ms) and exits
# 0, as a drained run does.
# (1) `vigilctl stop q` on node 1 while every node runs: a stop by the
# operator is cluster-wide: every node's runs finish within
# drain_timeout, untouched (no TERM); their messages are done (rows gone,
# never run again); nobody takes the rest (held three renew intervals);
# a start on node 3 has them worked, each once.
# (2a) Node 1 alone runs a long message that ends on TERM and one that
# ignores TERM; SIGTERM to its vigild: both get TERM after drain_timeout;
# the first is done (its row gone when vigild exits), the second killed
# stop_timeout later and given back, its attempt not counted: nodes 2
# and 3 go on, and one runs it again with VIGIL_ATTEMPT=1; vigild exits
# 0 after drain_timeout + stop_timeout, holding no message.
# (2b) SIGTERM to node 2's vigild while it runs two 1 s messages: they
# end, untouched; their outcomes are reported before it exits 0 (their
# rows gone at its exit), within drain_timeout; node 3 does the rest.
# (3) PostgreSQL stopped (pg_ctl stop -m fast) for everyone.  (a) Short
# (well inside lease_ttl): every node sees its connection go, then six
# runs end; their outcomes wait in the nodes' outboxes and are reported
# once the nodes reconnect: rows gone, nothing rescued, no outcome
# dropped, nothing run twice.  (b) Long (lease_ttl + 1 s): six runs that
# ignore TERM are fenced (a drain from trust - drain_timeout -
# stop_timeout, TERM at trust - stop_timeout, KILL at the trust deadline,
# at the latest); nothing starts
# while the database is down; once it is back each message runs again,
# once, and ends: given back by its holder (VIGIL_ATTEMPT=1 again) or
# rescued by a node first (its attempt counted: 2, the holder's give-back
# dropped), each as the logs say.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
cluster_need

# The job's stop time (drain_timeout + stop_timeout, 3 s) must fit the
# lease: renew_interval + 2 x query_timeout + 3 s + fence_margin <= 5 s.
# On a busy machine (VIGIL_TEST_SLOW) the lease and its queries take
# that factor more (ASan under load: renewals of 500 ms timed out and
# fenced runs), the rule still kept; the job's timeouts stay.  So does
# fence_margin, the time a fenced run may take to be seen gone after the
# trust deadline before the claims expire in the database.
TTL_MS=$((5000 * VIGIL_TEST_SLOW)) MARGIN_MS=$((500 * VIGIL_TEST_SLOW))
RENEW_MS=500 DRAIN_MS=2000 STOP_MS=1000
CLUSTER_LEASE_TTL=${TTL_MS}ms CLUSTER_RENEW_INTERVAL=500ms
CLUSTER_QUERY_TIMEOUT=$((500 * VIGIL_TEST_SLOW))ms
CLUSTER_CONNECT_TIMEOUT=$((500 * VIGIL_TEST_SLOW))ms
CLUSTER_FENCE_MARGIN=${MARGIN_MS}ms
# The lower bounds below are vigild's timeouts as configured; the slack
# above them (how late a timer, a signal's stamp or a poll may come) is
# VIGIL_TEST_SLOW times an idle machine's.
SLACK1_MS=$((1000 * VIGIL_TEST_SLOW))

# A run: its payload says what it does; each step is a line of $EV,
# "WHAT ID NODE ATTEMPT PID USEC".  work: 1 s of work.  term: 30 s (it is
# stopped before).  ignore: the first run of the message ignores TERM for
# 30 s, a later one is short.  gate: until the file gate is there.  On
# TERM (but for that first ignore): TERM, 200 ms more work, END, exit 0.
EV=$T/events
cat >"$T/work.sh" <<'EOF'
r=$VIGIL_TEST_ROOT
what=$(cat)
ev() { echo "$1 $VIGIL_MESSAGE_ID $VIGIL_NODE $VIGIL_ATTEMPT $$ ${EPOCHREALTIME/./}" >>"$r/events"; }
finish() { ev TERM; sleep 0.2; ev END; exit 0; }
first=1
[ ! -e "$r/ran.$VIGIL_MESSAGE_ID" ] || first=0
: >"$r/ran.$VIGIL_MESSAGE_ID"
trap finish TERM
ev START
us=1000000
# Long runs: 30 s times VIGIL_TEST_SLOW (lib.sh's $T/slow), past the
# lease_ttl that scales with it.
read -r k <"$r/slow" || k=1
case $what in
work) end=$((${EPOCHREALTIME/./} + us)) ;;
ignore) if [ "$first" = 1 ]; then
		trap 'ev TERM' TERM
		end=$((${EPOCHREALTIME/./} + 30 * k * us))
	else
		end=$((${EPOCHREALTIME/./} + us / 5))
	fi ;;
*) end=$((${EPOCHREALTIME/./} + 30 * k * us)) ;;
esac
while [ "${EPOCHREALTIME/./}" -lt "$end" ]; do
	if [ "$what" = gate ] && [ -e "$r/gate" ]; then break; fi
	sleep 0.02
done
[ "${EPOCHREALTIME/./}" -lt "$end" ] || [ "$what" = work ] || [ "$what" = ignore ] || exit 1
ev END
EOF
cluster_job q <<EOF
kind = "queue"
cluster = true
concurrency = 2
drain_timeout = "2s"
stop_timeout = "1s"
command = {"bash", "$T/work.sh"}
EOF
: >"$EV"

# evs WHAT [ID [NODE]]: the lines of WHAT (START, TERM, END), of message
# ID and node nNODE if given; nev: how many.
evs() {
	awk -v w="$1" -v id="${2:-}" -v n="${3:+n$3}" \
		'$1 == w && (id == "" || $2 == id) && (n == "" || $3 == n)' "$EV"
}
nev() { evs "$@" | wc -l; }
# ev_at WHAT ID FIELD: FIELD (node, attempt, pid, us) of ID's last WHAT.
ev_at() {
	evs "$1" "$2" | tail -n 1 |
		awk -v f="$3" '{ print (f == "node" ? $3 : f == "attempt" ? $4 : f == "pid" ? $5 : $6) }'
}
# running I: the messages node I runs now (a START without an END).
running() {
	awk -v n="n$1" '$1 == "START" && $3 == n { s[$2 " " $5] = 1 }
		$1 == "END" { delete s[$2 " " $5] }
		END { for (k in s) { split(k, a, " "); print a[1] } }' "$EV"
}
nrunning() { running "$1" | wc -l; }
# enqueue N WHAT: N messages WHAT in one transaction; their ids.
enqueue() {
	pg_sql "SELECT vigil.enqueue('q', '$2') FROM generate_series(1, $1)"
}
# rows IDS...: how many of these messages have a row.
rows() {
	local l
	l=$(echo "$*" | tr -s ' \n' ',,' | sed 's/^,//; s/,$//')
	pg_sql "SELECT count(*) FROM vigil.message WHERE id IN ($l)"
}
no_rows() { [ "$(rows "$@")" = 0 ]; }
# qrows: how many messages q has.
qrows() {
	pg_sql "SELECT count(*) FROM vigil.message m JOIN vigil.job j
		ON j.id = m.job_id WHERE j.name = 'q'"
}
q_empty() { [ "$(qrows)" = 0 ]; }
# once IDS...: each message started exactly once.
once() {
	local id
	for id in "$@"; do
		[ "$(nev START "$id")" = 1 ] ||
			fail "$WHAT: message $id started $(nev START "$id") times: $(evs START "$id")"
	done
}
nodelogs() { cat "$T"/n[123]/vigild.log; }
# all_started N IDS...: N starts (or more) among these messages.
all_started() {
	local n=$1 id c=0
	shift
	for id in "$@"; do c=$((c + $(nev START "$id"))); done
	[ "$c" -ge "$n" ]
}
# all_ended IDS...: each of these messages has an END.
all_ended() {
	local id
	for id in "$@"; do [ "$(nev END "$id")" -ge 1 ] || return 1; done
}
# slots_wait I: node I's slots of q all wait for a message.
slots_wait() {
	[ "$(nctl "$1" --json status q 2>/dev/null | jq -r '[.jobs[].state] | unique | join(",")')" = WAITING ]
}

pg_start
for i in 1 2 3; do node_start "$i"; done
for i in 1 2 3; do
	retry 10 slots_wait "$i" || fail "node $i: q's slots do not wait: $(nctl "$i" status q)"
done

# --- (1) The operator stops q (on node 1: everywhere) while every node
# is busy.
WHAT="stop"
# Two rounds of 1 s on the six slots, VIGIL_TEST_SLOW times that on a busy
# machine: the window with every slot busy must outlast the poll that
# looks for it (issue 43: 12 messages were done before it saw them).
NW=$((12 * VIGIL_TEST_SLOW))
# shellcheck disable=SC2207
ids=($(enqueue "$NW" work))
[ "${#ids[@]}" = "$NW" ] || fail "enqueue: ${ids[*]}"
# Every node runs (one of its two slots at least: under ASan and load a
# claim and a spawn take as long as a run, and two at once are rare).
all_busy() { [ "$(nrunning 1)" -ge 1 ] && [ "$(nrunning 2)" -ge 1 ] && [ "$(nrunning 3)" -ge 1 ]; }
retry 5 all_busy || fail "$WHAT: not every node is busy: n1 $(nrunning 1), n2 $(nrunning 2), n3 $(nrunning 3)"
t0=$(now_us)
nctl 1 stop q >/dev/null || fail "$WHAT: stop q on node 1"
t1=$(now_us)
all_stopped() {
	local i
	for i in 1 2 3; do
		[ "$(nctl "$i" --json status q 2>/dev/null | jq -r '[.jobs[].state] | unique | join(",")')" = STOPPED ] ||
			return 1
	done
}
retry $((DRAIN_MS / 1000 + 2)) all_stopped ||
	fail "$WHAT: q is not STOPPED everywhere: $(for i in 1 2 3; do nctl "$i" status q; done)"
ts=$(now_us)
idle() { [ -z "$(running 1)$(running 2)$(running 3)" ]; }
idle || fail "$WHAT: runs left: $(running 1) $(running 2) $(running 3)"
# The runs going on at the stop: they end, untouched, and are done.
drained=$(evs END | awk -v t="$t0" '$6 > t { print $2 }')
per=$(evs END | awk -v t="$t0" '$6 > t { print $3 }' | sort | uniq -c | awk '{ printf "%s=%s ", $2, $1 }')
log "$WHAT: node 1's stop returned in $(us_ms "$t0" "$t1") ms, q STOPPED everywhere by +$(us_ms "$t0" "$ts") ms; runs drained: $per"
for i in 1 2 3; do
	[ -n "$(evs END "" "$i" | awk -v t="$t0" '$6 > t')" ] || fail "$WHAT: no run of node $i ended after the stop"
done
[ "$(nev TERM)" = 0 ] || fail "$WHAT: runs got TERM within drain_timeout: $(evs TERM)"
tl=$(evs END | awk -v t="$t0" '$6 > t { print $6 }' | sort -n | tail -n 1)
log "$WHAT: the last drained run ended +$(us_ms "$t0" "$tl") ms"
# (Past drain_timeout it would have had a TERM, which the check above
# rules out: on a busy machine its END may come later than that.)
[ $((tl - t0)) -lt $(((1000 + SLACK1_MS) * 1000)) ] ||
	fail "$WHAT: a drained run of 1 s ended +$(us_ms "$t0" "$tl") ms after the stop, past drain_timeout"
# shellcheck disable=SC2086
retry 5 no_rows $drained || fail "$WHAT: the drained messages still have rows: $(rows $drained)"
# Held for three renew intervals: nobody takes the rest.
n=$(nev START)
left=$((NW - n))
avail() { [ "$(pg_sql "SELECT count(*) FROM vigil.message WHERE state = 0 AND holder IS NULL")" = "$left" ]; }
retry 2 avail || fail "$WHAT: not $left messages available: $(pg_sql "SELECT id, state, holder FROM vigil.message")"
while [ "$(now_us)" -lt $((ts + 1500000)) ]; do
	[ "$(nev START)" = "$n" ] || fail "$WHAT: a run started while q is stopped: $(tail -n 1 "$EV")"
	sleep 0.1
done
avail || fail "$WHAT: the messages left changed while q is stopped: $(pg_sql "SELECT id, state, holder FROM vigil.message")"
late=$(evs START | awk -v t="$ts" '$6 > t')
[ -z "$late" ] || fail "$WHAT: started while q was stopped: $late"
# A start (on node 3: everywhere): the rest, each once.
nctl 3 start q >/dev/null || fail "$WHAT: start q on node 3"
retry 10 q_empty || fail "$WHAT: the queue did not empty: $(nctl 2 queue q)"
retry 5 all_ended "${ids[@]}" || fail "$WHAT: not every run ended"
once "${ids[@]}"
log "$WHAT: $left left while stopped; after the start, all $NW done once each (n1 $(nev START "" 1), n2 $(nev START "" 2), n3 $(nev START "" 3))"

# --- (2a) Node 1 alone runs a message that ends on TERM and one that
# ignores it; SIGTERM to its vigild: drained, both get TERM after
# drain_timeout, the second is killed after stop_timeout more; the other
# nodes go on.
WHAT="shutdown, drain timeout"
node_stop 2
node_stop 3
term=$(enqueue 1 term) ign=$(enqueue 1 ignore)
retry 5 all_started 2 "$term" "$ign" || fail "$WHAT: node 1 did not start both"
[ "$(ev_at START "$term" node)" = n1 ] && [ "$(ev_at START "$ign" node)" = n1 ] ||
	fail "$WHAT: not both on node 1: $(evs START "$term"; evs START "$ign")"
ipid=$(ev_at START "$ign" pid)
node_start 2
node_start 3
for i in 2 3; do
	retry 10 slots_wait "$i" || fail "node $i: q's slots do not wait: $(nctl "$i" status q)"
done
t0=$(now_us)
NODE_STOP_TIMEOUT=$(((DRAIN_MS + STOP_MS) / 1000 + 5)) node_stop 1
t1=$(now_us)
# Right at its exit: the one done is gone, the one killed is not n1's.
at_exit=$(pg_sql "SELECT id || ':' || state || ':' || coalesce(holder, '-') || ':' || attempts
	FROM vigil.message WHERE id IN ($term, $ign)")
dead "$ipid" || fail "$WHAT: the run that ignores TERM ($ipid) outlived node 1"
tt=$(ev_at TERM "$term" us) ti=$(ev_at TERM "$ign" us) te=$(ev_at END "$term" us)
[ -n "$tt" ] && [ -n "$ti" ] && [ -n "$te" ] ||
	fail "$WHAT: TERM or END missing: $(evs TERM; evs END "$term")"
log "$WHAT: TERM +$(us_ms "$t0" "$tt") ms (term), +$(us_ms "$t0" "$ti") ms (ignore); term ended +$(us_ms "$t0" "$te") ms; node 1 exited 0 at +$(us_ms "$t0" "$t1") ms; rows then (id:state:holder:attempts): ${at_exit:-none}"
for x in "$tt" "$ti"; do
	[ $((x - t0)) -ge $(((DRAIN_MS - 100) * 1000)) ] && [ $((x - t0)) -le $(((DRAIN_MS + SLACK1_MS) * 1000)) ] ||
		fail "$WHAT: TERM at +$(us_ms "$t0" "$x") ms, not after drain_timeout ($DRAIN_MS ms)"
done
[ $((t1 - t0)) -ge $(((DRAIN_MS + STOP_MS - 100) * 1000)) ] ||
	fail "$WHAT: node 1 was gone after $(us_ms "$t0" "$t1") ms, before drain_timeout + stop_timeout"
[ $((t1 - t0)) -le $(((DRAIN_MS + STOP_MS + 1500 * VIGIL_TEST_SLOW) * 1000)) ] ||
	fail "$WHAT: node 1 took $(us_ms "$t0" "$t1") ms to stop"
case $at_exit in
*"$term:"*) fail "$WHAT: the message done on TERM still had its row at node 1's exit: $at_exit" ;;
*":n1:"*) fail "$WHAT: node 1 exited still holding a message: $at_exit" ;;
esac
grep -q "message $ign still running after drain_timeout" "$(node_log 1)" &&
	grep -q "still running after stop_timeout, sending KILL" "$(node_log 1)" &&
	grep -q "message $ign stopped; available again" "$(node_log 1)" ||
	fail "$WHAT: node 1 did not log the drain timeout, the KILL and the give-back: $(tail -n 8 "$(node_log 1)")"
! grep -q "not reported in time" "$(node_log 1)" || fail "$WHAT: node 1 left outcomes unreported"
# The killed one runs again on node 2 or 3, its attempt not counted.
retry 5 all_started 2 "$ign" || fail "$WHAT: the killed run's message did not run again: $(nctl 2 queue q)"
retry 5 no_rows "$ign" || fail "$WHAT: the message run again still has a row"
rn=$(ev_at START "$ign" node) ra=$(ev_at START "$ign" attempt)
log "$WHAT: the killed run's message ran again on $rn, VIGIL_ATTEMPT=$ra, +$(us_ms "$t0" "$(ev_at START "$ign" us)") ms"
[ "$rn" != n1 ] || fail "$WHAT: the message given back ran again on node 1 (gone)"
[ "$(evs START "$ign" | head -n 1 | awk '{ print $4 }')" = 1 ] && [ "$ra" = 1 ] ||
	fail "$WHAT: VIGIL_ATTEMPT $(evs START "$ign" | awk '{ printf "%s ", $4 }'): the give-back counted an attempt"
[ "$(nev END "$ign")" = 1 ] || fail "$WHAT: the run again did not end"
once "$term"
q_empty || fail "$WHAT: q has messages left: $(nctl 2 queue q)"
node_start 1

# --- (2b) SIGTERM to node 2's vigild while it runs two messages: they
# end within drain_timeout, untouched; reported before it exits.
WHAT="shutdown"
for i in 1 2 3; do
	retry 10 slots_wait "$i" || fail "node $i: q's slots do not wait: $(nctl "$i" status q)"
done
# Six runs of 1 s per VIGIL_TEST_SLOW: the slots stay busy while a slow
# node 2 claims (ASan under load once saw the others work all six first).
# shellcheck disable=SC2207
ids=($(enqueue $((6 * VIGIL_TEST_SLOW)) work))
both() { [ "$(nrunning 2)" = 2 ]; }
retry 5 both || fail "$WHAT: node 2 does not run two messages: $(nrunning 2)"
mine=$(running 2)
t0=$(now_us)
NODE_STOP_TIMEOUT=$(((DRAIN_MS + STOP_MS) / 1000 + 5)) node_stop 2
t1=$(now_us)
# Right at its exit, no wait: their outcomes were reported before it.
# shellcheck disable=SC2086
left=$(rows $mine)
log "$WHAT: node 2 (running $(echo "$mine" | tr "\n" " ")) exited 0 in $(us_ms "$t0" "$t1") ms; rows left of its messages: $left"
[ "$left" = 0 ] || fail "$WHAT: node 2 exited before its outcomes were reported: $(pg_sql "SELECT id, state, holder FROM vigil.message")"
for id in $mine; do
	[ "$(nev END "$id" 2)" = 1 ] && [ "$(ev_at END "$id" us)" -le "$t1" ] ||
		fail "$WHAT: message $id did not end before node 2 exited"
done
[ -z "$(evs TERM "" 2 | awk -v t="$t0" '$6 > t')" ] ||
	fail "$WHAT: node 2's runs got TERM within drain_timeout: $(evs TERM "" 2)"
[ $((t1 - t0)) -le $(((DRAIN_MS + SLACK1_MS) * 1000)) ] ||
	fail "$WHAT: node 2 took $(us_ms "$t0" "$t1") ms to stop"
! grep -q "not reported in time" "$(node_log 2)" || fail "$WHAT: node 2 left outcomes unreported"
retry 10 q_empty || fail "$WHAT: the queue did not empty: $(nctl 3 queue q)"
retry 5 all_ended "${ids[@]}" || fail "$WHAT: not every run ended"
once "${ids[@]}"
node_start 2
for i in 1 2 3; do
	retry 10 slots_wait "$i" || fail "node $i: q's slots do not wait: $(nctl "$i" status q)"
done

# --- (3a) A short outage: the runs end while the database is down.
WHAT="short outage"
# shellcheck disable=SC2207
ids=($(enqueue 6 gate))
retry 5 all_started 6 "${ids[@]}" || fail "$WHAT: not all six started: $(nev START)"
# nlines I TEXT: how many lines of node I's log have TEXT; more I TEXT N:
# more than N.
nlines() { grep -c "$2" "$(node_log "$1")" || true; }
more() { [ "$(nlines "$1" "$2")" -gt "$3" ]; }
declare -A LOST UP
for i in 1 2 3; do
	LOST[$i]=$(nlines "$i" "cluster: work connection lost")
	UP[$i]=$(nlines "$i" "cluster: work connection up")
done
t0=$(now_us)
pg_stop
# Each node knows the database is gone; then the runs end.
for i in 1 2 3; do
	retry 2 more "$i" "cluster: work connection lost" "${LOST[$i]}" ||
		fail "$WHAT: node $i did not see its work connection go"
done
: >"$T/gate"
retry 3 all_ended "${ids[@]}" || fail "$WHAT: the runs did not end"
te=$(now_us)
pg_restart
t1=$(now_us)
log "$WHAT: the server down from +0 to +$(us_ms "$t0" "$t1") ms; the six runs ended by +$(us_ms "$t0" "$te") ms"
[ $((t1 - t0)) -lt $(((TTL_MS - 1500) * 1000)) ] ||
	fail "$WHAT: the outage took $(us_ms "$t0" "$t1") ms: too close to lease_ttl for this case"
for i in 1 2 3; do
	retry 5 more "$i" "cluster: work connection up" "${UP[$i]}" ||
		fail "$WHAT: node $i did not reconnect: $(tail -n 3 "$(node_log "$i")")"
done
retry 5 no_rows "${ids[@]}" || fail "$WHAT: the outcomes were not reported: $(pg_sql "SELECT id, state, holder FROM vigil.message")"
log "$WHAT: every outcome reported by +$(us_ms "$t0" "$(now_us)") ms"
once "${ids[@]}"
for id in "${ids[@]}"; do
	! nodelogs | grep -q "message $id rescued\|message $id attempt .*: its outcome is dropped" ||
		fail "$WHAT: message $id was rescued or its outcome dropped: $(nodelogs | grep "message $id")"
done
[ -z "$(evs TERM | awk -v t="$t0" '$6 > t')" ] || fail "$WHAT: a run got TERM: $(evs TERM)"

# --- (3b) A long outage: lease_ttl + 1 s, the runs going on.
WHAT="long outage"
for i in 1 2 3; do
	retry 10 slots_wait "$i" || fail "node $i: q's slots do not wait: $(nctl "$i" status q)"
done
# shellcheck disable=SC2207
ids=($(enqueue 6 ignore))
retry 5 all_started 6 "${ids[@]}" || fail "$WHAT: not all six started: $(nev START)"
pids=$(for id in "${ids[@]}"; do ev_at START "$id" pid; done)
holders=$(for id in "${ids[@]}"; do ev_at START "$id" node; done | sort | uniq -c | awk '{ printf "%s=%s ", $2, $1 }')
t0=$(now_us)
pg_stop
# The server answered until it took the request (pg_ctl's start came
# between t0 and that): the trust deadlines count from then.
ts=$(pg_stopped_us)
log "$WHAT: the server took the shutdown request +$(us_ms "$t0" "$ts") ms"
gone() {
	local p
	for p in $pids; do alive "$p" && return 1; done
	return 0
}
RETRY_POLL=0.02 retry $((TTL_MS / 1000 + 2)) gone || fail "$WHAT: the runs outlived lease_ttl: $pids"
tg=$(now_us)
log "$WHAT: runs on $holders; all gone +$(us_ms "$t0" "$tg") ms after the server stopped"
# The fence: a drain from trust - (drain_timeout + stop_timeout), no
# signal, then TERM at trust - stop_timeout (the last answered renew was
# sent at most renew_interval before the fault), KILL stop_timeout later,
# at the trust deadline.
FENCE_MS=$((TTL_MS - MARGIN_MS - STOP_MS))
for id in "${ids[@]}"; do
	x=$(ev_at TERM "$id" us)
	[ -n "$x" ] || fail "$WHAT: message $id's run got no TERM (killed at once?)"
	[ $((x - t0)) -ge $(((FENCE_MS - RENEW_MS - 300) * 1000)) ] ||
		fail "$WHAT: message $id fenced +$(us_ms "$t0" "$x") ms: too early"
	[ $((x - ts)) -le $(((FENCE_MS + SLACK1_MS) * 1000)) ] ||
		fail "$WHAT: message $id fenced +$(us_ms "$ts" "$x") ms after the server stopped: too late"
done
log "$WHAT: TERM from +$(us_ms "$t0" "$(evs TERM | awk -v t="$t0" '$6 > t { print $6 }' | sort -n | head -n 1)") ms"
# KILL at the trust deadline (at most lease_ttl - fence_margin after the
# server stopped answering); gone and seen gone (a 20 ms poll of six
# pids) before the claims can expire in the database, fence_margin after
# the trust deadline: what keeps a message from running on two nodes at
# once.  (The margin is the slack of a busy machine: vigild's timer and
# this poll may each come late.)
[ $((tg - ts)) -le $((TTL_MS * 1000)) ] ||
	fail "$WHAT: the last run went +$(us_ms "$ts" "$tg") ms after the server stopped, past its claims' expiry"
for n in $(for id in "${ids[@]}"; do ev_at START "$id" node; done | sort -u); do
	# The KILL at the deadline: the run's stop_timeout's, the trust
	# deadline's (the two are due at once: either may come first), or
	# vigild's keeper's if that one's timer came first.
	grep -q "cluster lease not renewed in time .*: fencing: stopping it" "$(node_log "${n#n}")" &&
		grep -Eq "fenced \(signal KILL after stop_timeout\)|cluster lease trust deadline passed: sending KILL|outlived its lease's trust deadline: sent KILL" "$(node_log "${n#n}")" ||
		fail "$WHAT: node $n did not log the fence and the KILL: $(tail -n 5 "$(node_log "${n#n}")")"
done
# Down until lease_ttl + 1 s: nothing starts meanwhile.
before=$(nev START)
while [ "$(now_us)" -lt $((t0 + (TTL_MS + 1000) * 1000)) ]; do
	[ "$(nev START)" = "$before" ] || fail "$WHAT: a run started without the database: $(tail -n 1 "$EV")"
	sleep 0.1
done
t1=$(now_us)
pg_restart
log "$WHAT: the server down until +$(us_ms "$t0" "$t1") .. +$(us_ms "$t0" "$(now_us)") ms"
retry 10 all_started 12 "${ids[@]}" || fail "$WHAT: not every message ran again: $(nctl 1 queue q)"
retry 5 all_ended "${ids[@]}" || fail "$WHAT: the runs again did not end"
retry 5 no_rows "${ids[@]}" || fail "$WHAT: rows left: $(pg_sql "SELECT id, state, attempts FROM vigil.message")"
back=0 resc=0
for id in "${ids[@]}"; do
	[ "$(nev START "$id")" = 2 ] && [ "$(nev END "$id")" = 1 ] ||
		fail "$WHAT: message $id: $(nev START "$id") starts, $(nev END "$id") ends"
	h=$(evs START "$id" | head -n 1 | awk '{ print $3 }')
	a=$(ev_at START "$id" attempt)
	case $a in
	1)	# Given back by its holder, before any rescue.
		grep -q "message $id stopped; available again" "$(node_log "${h#n}")" ||
			fail "$WHAT: message $id ran again as attempt 1, but $h did not give it back"
		! nodelogs | grep -q "message $id rescued" ||
			fail "$WHAT: message $id rescued, yet run again as attempt 1"
		back=$((back + 1)) ;;
	2)	# Rescued: its holder's give-back came too late and was dropped.
		nodelogs | grep -q "message $id rescued: its node stopped renewing; available again" ||
			fail "$WHAT: message $id ran again as attempt 2 without a rescue"
		grep -q "message $id attempt 1: its outcome is dropped" "$(node_log "${h#n}")" ||
			fail "$WHAT: message $id rescued, but $h did not drop its give-back"
		resc=$((resc + 1)) ;;
	*) fail "$WHAT: message $id ran again with VIGIL_ATTEMPT=$a" ;;
	esac
done
log "$WHAT: each message ran again once: $back given back (attempt 1), $resc rescued (attempt 2), the last end +$(us_ms "$t0" "$(now_us)") ms"
q_empty || fail "q has messages left: $(nctl 1 queue q)"
for i in 1 2 3; do node_stop "$i"; done
log "ok"
