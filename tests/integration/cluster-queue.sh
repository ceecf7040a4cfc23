#!/bin/bash
# shellcheck disable=SC2317 # predicates called through retry
# Cluster queues (cluster = true) on two nodes, through vigilctl on
# either node:
# - enqueue on n1 with the payload on stdin ("x\0y", byte for byte in the
#   run) and on n2 with an operand; each run has VIGIL_MESSAGE_ID (the id
#   printed, >= 1000000000000), VIGIL_ATTEMPT=1 and VIGIL_NODE (n1, n2);
# - queue from either node while messages run: the same RUNNING count and
#   NODES (text and --json) from both, where they really run;
# - with every slot of both nodes busy, waiting messages start by
#   priority (highest first), not in enqueue order;
# - --unique across nodes: n2's enqueue with n1's key exits 1 with the id
#   of n1's message; after delete the key is free again;
# - --delay 2s: not run before 2 s, run soon after;
# - a run that prints "boom" and exits 3 with max_attempts = 3 and
#   retry_delay = "200ms": three attempts, spaced by the backoff, then
#   dead: queue --dead on the other node says "exit 3", the row has state
#   2, last_exit 3 and the output; retry runs it again (attempt 1); purge
#   --dead removes it;
# - delete of a running message from the node that does not run it: the
#   run goes on to its end (it fails), the holder's log says so, and the
#   message is gone (no retry, not dead);
# - kick exits 0;
# - the claim's inner query (FOR UPDATE SKIP LOCKED in vigil.claim) is an
#   Index Scan using message_claim (auto_explain, nested statements, in
#   the server's log).  20000 messages delayed an hour in another queue
#   and an ANALYZE come first: on a nearly empty table without statistics
#   the planner goes by default estimates, and whatever it picks there
#   (an index scan, with PostgreSQL 15) says little about a real queue;
# - cluster_concurrency without cluster = true: vigild -t names the file,
#   the line and the option.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
cluster_need
T0=$(now_ms)

# --- cluster_concurrency without cluster = true: a config error.
mkdir -p "$T/cc/jobs.d"
: >"$T/cc/vigil.conf"
printf '%s\n' 'kind = "queue"' 'command = {"true"}' 'concurrency = 2' \
	'cluster_concurrency = 4' >"$T/cc/jobs.d/capped.conf"
rc=0
"$VIGILD" -t -c "$T/cc/vigil.conf" -j "$T/cc/jobs.d" >"$T/cc/out" 2>&1 || rc=$?
check "vigild -t exits 1 on cluster_concurrency without cluster (exit $rc)" [ "$rc" = 1 ]
check "vigild -t names the file, line 4 and cluster_concurrency: $(cat "$T/cc/out")" \
	grep -q "$T/cc/jobs.d/capped.conf:4: .*cluster_concurrency" "$T/cc/out"
checks_passed

pg_start
# Every session of the database vigil (the nodes') logs the plan of each
# statement, nested ones too (the statements inside vigil.claim).
pg_psql -c "ALTER DATABASE vigil SET session_preload_libraries = 'auto_explain'" \
	-c "ALTER DATABASE vigil SET auto_explain.log_min_duration = 0" \
	-c "ALTER DATABASE vigil SET auto_explain.log_nested_statements = on" >/dev/null ||
	fail "could not turn on auto_explain"
PGLOG=$T/pg/postgres.log

# q's run: its stdin to pl.ID, its environment to env.ID, "start ID
# ATTEMPT NODE PID USEC" and at its end "end ID PID" in runs.  A payload
# "wait NAME [fail]" waits (at most 30 s) for the file go.NAME, then exits
# 3 with fail; any other payload exits 0 at once.
cat >"$T/run.sh" <<'EOF'
d=$VIGIL_TEST_ROOT id=$VIGIL_MESSAGE_ID
cat >"$d/pl.$id.tmp" && mv "$d/pl.$id.tmp" "$d/pl.$id"
env >"$d/env.$id"
echo "start $id $VIGIL_ATTEMPT $VIGIL_NODE $$ ${EPOCHREALTIME/./}" >>"$d/runs"
w='' name='' how=''
read -r w name how <"$d/pl.$id" 2>/dev/null
if [ "$w" = wait ]; then
	for _ in $(seq 1 1500); do
		[ ! -e "$d/go.$name" ] || break
		sleep 0.02
	done
fi
echo "end $id $$" >>"$d/runs"
[ "$how" != fail ] || exit 3
exit 0
EOF
# fail's run: "ID ATTEMPT NODE USEC" in fails, boom on stdout, exit 3.
cat >"$T/fail.sh" <<'EOF'
echo "$VIGIL_MESSAGE_ID $VIGIL_ATTEMPT $VIGIL_NODE ${EPOCHREALTIME/./}" >>"$VIGIL_TEST_ROOT/fails"
echo boom
exit 3
EOF
CLUSTER_NODES="1 2"
cluster_job q <<EOF
kind = "queue"
cluster = true
concurrency = 2
stop_timeout = "500ms"
command = {"bash", "$T/run.sh"}
EOF
cluster_job fail <<EOF
kind = "queue"
cluster = true
max_attempts = 3
retry_delay = "200ms"
stop_timeout = "500ms"
command = {"bash", "$T/fail.sh"}
EOF
cluster_job bulk <<EOF
kind = "queue"
cluster = true
stop_timeout = "500ms"
command = {"true"}
EOF
node_start 1
node_start 2
: >"$T/runs"

# started ID: q's run of ID has begun; ended ID: and ended.
started() { grep -q "^start $1 " "$T/runs"; }
ended() { grep -q "^end $1 " "$T/runs"; }
# run_field ID N: field N of the (last) start line of ID.
run_field() { awk -v id="$1" -v n="$2" '$1 == "start" && $2 == id { v = $n } END { print v }' "$T/runs"; }
envv() { sed -n "s/^$2=//p" "$T/env.$1"; }
# jq_true ARGS...: jq -e, quiet (for check, whose own line is on stdout).
jq_true() { jq -e "$@" >/dev/null; }

# --- The claim's plan needs statistics: 20000 messages an hour away in
# bulk (not logged: this session turns auto_explain off), then ANALYZE.
registered() {
	[ "$(pg_sql "SELECT count(*) FROM vigil.job WHERE name IN ('q', 'fail', 'bulk') AND kind = 'queue'" 2>/dev/null)" = 3 ]
}
retry 10 registered || fail "the nodes did not register q, fail and bulk in vigil.job"
t0=$(now_ms)
pg_psql -c "SET auto_explain.log_min_duration = -1" \
	-c "SELECT count(vigil.enqueue('bulk', 'b' || g, interval '1 hour')) FROM generate_series(1, 20000) g" \
	-c "ANALYZE vigil.message" >/dev/null || fail "could not load bulk"
log "20000 messages in bulk, and ANALYZE, in $(($(now_ms) - t0)) ms"
plans_from=$(($(stat -c %s "$PGLOG") + 1))

# --- enqueue on n1 (stdin, binary) and on n2 (operand).
printf 'x\0y' >"$T/xy"
id1=$(printf 'x\0y' | nctl 1 enqueue q -) || fail "n1: enqueue q - failed"
id2=$(nctl 2 enqueue q hello) || fail "n2: enqueue q hello failed"
log "enqueued $id1 on n1, $id2 on n2"
for id in $id1 $id2; do
	check "id $id >= 1000000000000" [ "$id" -ge 1000000000000 ]
	retry 10 ended "$id" || fail "message $id did not run: $(cat "$T/runs")"
	check "$id: VIGIL_MESSAGE_ID" [ "$(envv "$id" VIGIL_MESSAGE_ID)" = "$id" ]
	check "$id: VIGIL_ATTEMPT=1" [ "$(envv "$id" VIGIL_ATTEMPT)" = 1 ]
	n=$(envv "$id" VIGIL_NODE)
	check "$id: VIGIL_NODE $n is n1 or n2" grep -qx 'n[12]' <<<"$n"
	check "$id: VIGIL_JOB=q" [ "$(envv "$id" VIGIL_JOB)" = q ]
done
check "n1's payload from stdin arrived byte for byte" cmp -s "$T/xy" "$T/pl.$id1"
printf hello >"$T/hello"
check "n2's operand payload arrived byte for byte: $(od -An -c "$T/pl.$id2" | head -n 1)" \
	cmp -s "$T/hello" "$T/pl.$id2"
gone() { [ "$(pg_sql "SELECT count(*) FROM vigil.message WHERE id IN ($1)")" = 0 ]; }
check "done messages are deleted from vigil.message" retry 5 gone "$id1, $id2"
checks_passed

# --- Every slot busy (2 a node): queue from either node.
blk=()
for b in 1 2 3 4; do
	blk[b]=$(nctl $((b % 2 + 1)) enqueue q "wait b$b") || fail "enqueue blocker $b"
done
all_started() {
	local id
	for id in "${blk[@]}"; do started "$id" || return 1; done
}
retry 10 all_started || fail "the 4 blockers did not all start: $(cat "$T/runs")"
# Where they really run, from their environments: "n1=2,n2=2".
where=$(for id in "${blk[@]}"; do envv "$id" VIGIL_NODE; done | sort | uniq -c |
	awk '{ printf "%s%s=%s", (NR > 1 ? "," : ""), $2, $1 }')
log "blockers run on $where"
check "the 4 blockers run 2 on each node ($where)" [ "$where" = "n1=2,n2=2" ]
nctl 1 queue q >"$T/queue.1" || fail "n1: queue q failed"
nctl 2 queue q >"$T/queue.2" || fail "n2: queue q failed"
check "queue from n1 and from n2 say the same: $(tail -n 1 "$T/queue.1") / $(tail -n 1 "$T/queue.2")" \
	cmp -s "$T/queue.1" "$T/queue.2"
check "queue: header with NODES: $(head -n 1 "$T/queue.1")" \
	grep -Eq '^JOB +AVAILABLE +DELAYED +RUNNING +DEAD +NODES$' "$T/queue.1"
check "queue: q 0 0 4 0 $where: $(tail -n 1 "$T/queue.1")" \
	grep -Eq "^q +0 +0 +4 +0 +$where\$" "$T/queue.1"
for i in 1 2; do
	nctl "$i" --json queue q >"$T/queue.$i.json" || fail "n$i: --json queue q failed"
	check "n$i: --json queue: running 4, nodes {n1: 2, n2: 2}: $(cat "$T/queue.$i.json")" \
		jq_true '.queues[0] | .job == "q" and .running == 4 and .available == 0 and
			.nodes == {"n1": 2, "n2": 2}' "$T/queue.$i.json"
done
checks_passed

# --- Priority: with every slot busy, low (0), high (10), mid (5) wait;
# one blocker ends: its slot runs them one after the other, highest first.
lo=$(nctl 1 enqueue q lo) || fail "enqueue lo"
hi=$(nctl 2 enqueue --priority 10 q hi) || fail "enqueue hi"
mid=$(nctl 1 enqueue --priority 5 q mid) || fail "enqueue mid"
check "3 available while every slot is busy" \
	[ "$(nctl 2 --json queue q | jq '.queues[0].available')" = 3 ]
check "none of them started" [ -z "$(grep -E "^start ($lo|$hi|$mid) " "$T/runs")" ]
: >"$T/go.b1"
retry 10 ended "$lo" || fail "lo did not run: $(cat "$T/runs")"
order=$(awk -v a="$lo" -v b="$hi" -v c="$mid" '$1 == "start" && ($2 == a || $2 == b || $2 == c) {
	printf "%s ", $2 == a ? "lo" : $2 == b ? "hi" : "mid" }' "$T/runs")
check "they ran by priority: $order" [ "$order" = "hi mid lo " ]
check "on blocker 1's node, the only free slot" [ "$(run_field "$hi" 4)$(run_field "$mid" 4)$(run_field "$lo" 4)" = \
	"$(envv "${blk[1]}" VIGIL_NODE)$(envv "${blk[1]}" VIGIL_NODE)$(envv "${blk[1]}" VIGIL_NODE)" ]
: >"$T/go.b2"
: >"$T/go.b3"
: >"$T/go.b4"
none_running() { [ "$(nctl 1 --json queue q | jq '.queues[0] | .running + .available')" = 0 ]; }
retry 10 none_running || fail "q still has messages: $(nctl 1 queue q)"
checks_passed

# --- --unique across nodes.
u1=$(nctl 1 enqueue --delay 1h --unique K q u1) || fail "n1: enqueue --unique K failed"
rc=0
nctl 2 enqueue --delay 1h --unique K q u2 >"$T/u2.out" 2>"$T/u2.err" || rc=$?
check "n2: enqueue with n1's key exits 1 (exit $rc)" [ "$rc" = 1 ]
check "n2: it prints n1's id $u1: $(cat "$T/u2.out")" [ "$(cat "$T/u2.out")" = "$u1" ]
check "n2: it says the key is taken: $(cat "$T/u2.err")" \
	grep -q "key K is already queued: id $u1" "$T/u2.err"
check "one message with key K, its payload u1" \
	[ "$(pg_sql "SELECT count(*), string_agg(convert_from(payload, 'UTF8'), ',') FROM vigil.message WHERE unique_key = 'K'")" = "1|u1" ]
nctl 2 delete "$u1" >/dev/null || fail "n2: delete $u1 failed"
u3=$(nctl 2 enqueue --delay 1h --unique K q u3) ||
	fail "n2: enqueue --unique K after the delete failed"
check "the key is free after the delete: a new id ($u3, was $u1)" [ "$u3" != "$u1" ]
nctl 1 delete "$u3" >/dev/null || fail "n1: delete $u3 failed"
check "no message left with key K" \
	[ "$(pg_sql "SELECT count(*) FROM vigil.message WHERE unique_key = 'K'")" = 0 ]
checks_passed

# --- Retries with backoff, then dead.
: >"$T/fails"
f=$(nctl 1 enqueue fail x) || fail "enqueue fail failed"
is_dead() { [ "$(pg_sql "SELECT state FROM vigil.message WHERE id = $f")" = 2 ]; }
retry 10 is_dead || fail "message $f is not dead: $(cat "$T/fails"); $(pg_sql "SELECT state, attempts FROM vigil.message WHERE id = $f")"
check "3 runs, attempts 1 2 3: $(tr '\n' ';' <"$T/fails")" \
	[ "$(awk -v id="$f" '$1 == id { printf "%s ", $2 }' "$T/fails")" = "1 2 3 " ]
# The backoff: 200 ms, then 400 ms, each -10% at most (jitter).
gaps=$(awk '{ if (NR > 1) printf "%d ", ($4 - t) / 1000; t = $4 }' "$T/fails")
log "gaps between the attempts: $gaps ms"
check "attempt 2 at least 180 ms after 1, 3 at least 360 ms after 2 ($gaps)" \
	awk -v g="$gaps" 'BEGIN { split(g, a, " "); exit !(a[1] >= 180 && a[2] >= 360) }'
last=$(awk 'END { print $3 }' "$T/fails")
other=$((3 - ${last#n}))
nctl "$other" queue --dead fail >"$T/dead" || fail "n$other: queue --dead fail failed"
check "n$other (not $last, which ran attempt 3): queue --dead lists $f, 3 attempts, exit 3: $(tail -n +2 "$T/dead")" \
	grep -Eq "^$f +3 +exit 3 " "$T/dead"
nctl "$other" --json queue --dead fail >"$T/dead.json" || fail "n$other: --json queue --dead failed"
# shellcheck disable=SC2016 # $id is jq's
check "--json queue --dead: $f, last_exit 3, total 1: $(cat "$T/dead.json")" \
	jq_true --argjson id "$f" '.job == "fail" and .total == 1 and
		(.messages | length) == 1 and .messages[0].id == $id and
		.messages[0].last_exit == 3 and .messages[0].attempts == 3' "$T/dead.json"
row=$(pg_sql "SELECT state, last_exit, attempts, position('boom' IN convert_from(output, 'UTF8')) > 0
	FROM vigil.message WHERE id = $f")
check "the row: state 2, last_exit 3, 3 attempts, boom in its output ($row)" [ "$row" = "2|3|3|t" ]
nctl 2 retry "$f" >/dev/null || fail "n2: retry $f failed"
again() { [ "$(awk -v id="$f" '$1 == id' "$T/fails" | wc -l)" -ge 4 ]; }
retry 5 again || fail "message $f did not run again after retry: $(cat "$T/fails")"
check "retry: it runs again, attempt 1" [ "$(awk -v id="$f" '$1 == id { n++; if (n == 4) print $2 }' "$T/fails")" = 1 ]
retry 10 is_dead || fail "message $f is not dead again after its retry"
check "after the retry: attempts 1 2 3 again: $(tr '\n' ';' <"$T/fails")" \
	[ "$(awk -v id="$f" '$1 == id { printf "%s ", $2 }' "$T/fails")" = "1 2 3 1 2 3 " ]
out=$(nctl 1 purge --dead fail) || fail "n1: purge --dead fail failed"
check "purge --dead: $out" [ "$out" = "removed: 1" ]
check "the dead row is gone" gone "$f"
checks_passed

# --- Delete a running message from the node that does not run it.
del=$(nctl 1 enqueue q 'wait del fail') || fail "enqueue del"
retry 10 started "$del" || fail "message $del did not start"
holder=$(run_field "$del" 4)
pid=$(run_field "$del" 5)
dnode=$((3 - ${holder#n}))
nctl "$dnode" delete "$del" >/dev/null || fail "n$dnode: delete $del (running on $holder) failed"
# (The slot's label: q@0 or q@1.)
said() { grep -Eq "^vigild: q@[01]: message $del was deleted while it ran; $1\$" "$(node_log "${holder#n}")"; }
retry 5 said "its outcome will be dropped" ||
	fail "$holder's log does not say $del was deleted: $(grep "$del" "$(node_log "${holder#n}")")"
check "the run goes on after its holder learnt of the delete (pid $pid)" alive "$pid"
check "vigil.message has no row $del" gone "$del"
: >"$T/go.del"
retry 5 ended "$del" || fail "the run of $del did not end"
retry 5 said "its outcome is dropped" ||
	fail "$holder's log does not say $del's outcome is dropped: $(grep "$del" "$(node_log "${holder#n}")")"
# Its failure would be retried after about 1 s (retry_delay's default):
# 2 s without a second run.
ran_again() { [ "$(grep -c "^start $del " "$T/runs")" -gt 1 ]; }
not_again() { ! retry 2 ran_again; }
check "the deleted message does not run again" not_again
check "it is neither in vigil.message nor dead" gone "$del"
check "queue --dead q is empty" [ "$(nctl 2 --json queue --dead q | jq '.total')" = 0 ]
check "no node retried it" \
	[ -z "$(grep -h "message $del .*retrying\|message $del is dead" "$(node_log 1)" "$(node_log 2)")" ]
checks_passed

# --- The claim's plans since the bulk load, from the server's log: each
# entry (a line with the log_line_prefix, then its tab-indented lines)
# that is a plan of vigil.claim's statement WITH c AS (SELECT ... FOR
# UPDATE SKIP LOCKED) (not the schema's text, which has it too).
tail -c "+$plans_from" "$PGLOG" | awk '
	function flush() {
		if (e ~ /plan:/ && e ~ /Query Text: WITH c AS \(SELECT id FROM vigil\.message/ &&
		    e ~ /FOR UPDATE SKIP LOCKED/)
			printf "%s----\n", e
		e = ""
	}
	/^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] / { flush() }
	{ e = e $0 "\n" }
	END { flush() }' >"$T/plans"
total=$(grep -c '^----$' "$T/plans" || true)
index=$(awk '/Index Scan using message_claim on message/ { n++ } END { print n + 0 }' "$T/plans")
log "the claim's inner query: $total plans logged, $index with Index Scan using message_claim"
check "plans of the claim's inner query were logged" [ "$total" -gt 0 ]
check "every one is an Index Scan using message_claim ($index of $total)" \
	[ "$index" = "$total" ]
[ "$index" = "$total" ] || log "the first plan without it: $(awk 'BEGIN { RS = "----\n" }
	!/Index Scan using message_claim on message/ { print; exit }' "$T/plans")"
check "no Seq Scan, Bitmap or Index Only Scan on message in them" \
	[ -z "$(grep -E '(Seq Scan|Bitmap Heap Scan|Bitmap Index Scan|Index Only Scan).* on message|Bitmap Index Scan on message_claim' "$T/plans")" ]
checks_passed

# --- --delay 2s.
t0=$(now_us)
dl=$(nctl 2 enqueue --delay 2s q delayed) || fail "enqueue --delay 2s failed"
check "queue: 1 delayed" [ "$(nctl 1 --json queue q | jq '.queues[0].delayed')" = 1 ]
if retry 6 started "$dl"; then
	waited=$(us_ms "$t0" "$(run_field "$dl" 6)")
	log "the delayed message ran $waited ms after its enqueue began"
	check "not before 2 s ($waited ms)" awk -v w="$waited" 'BEGIN { exit !(w >= 2000) }'
else
	check "the message delayed 2 s runs within 6 s: $(nctl 1 queue q | tail -n 1)" false
fi

# --- kick.
rc=0
nctl 2 kick q >"$T/kick.out" 2>&1 || rc=$?
check "n2: kick q exits 0 (exit $rc: $(cat "$T/kick.out"))" [ "$rc" = 0 ]
# (What the kick does to a delayed message that did not run: for the
# report of a failure above.)
if ! started "$dl"; then
	if retry 5 started "$dl"; then
		log "after kick q, the delayed message $dl ran"
	else
		log "even after kick q, the delayed message $dl did not run"
	fi
fi
checks_passed

node_stop 1
node_stop 2
log "ok in $(($(now_ms) - T0)) ms"
