#!/bin/bash
# Never off (issue 35, item 1): a cluster service that fails on its holder
# moves on.  Three nodes, the exactly-one sampler throughout.
# 1. It fails only on n1, its holder: after cluster_handover_after (3)
#    failed starts there the lease goes, marked failed, to n2 or n3,
#    which runs it; n1 stands by ("failing on n1 (exit 3)"), never FATAL.
# 2. It fails everywhere: the nodes take turns (each failing node bids
#    after those that have not failed it), and when all three have failed
#    it the instance is tried again cluster-wide after the job's backoff,
#    round after round; no node goes FATAL, and every node says where it
#    failed.  Once it can run again, it runs (nothing needs a start), and
#    after min_uptime the streak is over (vigil.lease.rounds back to 0).
# 3. Every run start had its own fencing token, each above the last, on
#    the same node (restarts) and across nodes; docs/cluster.md's SQL
#    guard takes a write with the newest token and refuses the one before.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
cluster_need

mk=task-$$
# task.sh START MARKER: a line per start, then exit 3 where a fail file
# says so, else beat (beat.sh).
cat >"$T/task.sh" <<'EOF'
echo "${EPOCHREALTIME/./} $VIGIL_NODE $VIGIL_FENCING_TOKEN" >>"$T_DIR/starts"
if [ -e "$T_DIR/fail-all" ] || [ -e "$T_DIR/fail-$VIGIL_NODE" ]; then
	sleep 0.1
	exit 3
fi
exec bash "$T_DIR/beat.sh" "$T_DIR/beats-task" "$2"
EOF
beat_job task >/dev/null # writes beat.sh
cluster_job task <<EOF
command = {"bash", "$T/task.sh", "start", "$mk"}
environment = {"T_DIR=$T"}
cluster = true
cluster_handover_after = 3
min_uptime = "1s"
restart_delay = "100ms"
restart_delay_max = "800ms"
stop_timeout = "500ms"
EOF
sampler_start "$mk"
pg_start
node_start 1
retry 10 node_runs 1 task || fail "node 1 does not run task: $(node_status 1 task reason)"
node_start 2
node_start 3
retry 10 node_standby 2 task && retry 10 node_standby 3 task ||
	fail "nodes 2 and 3 are not standbys: $(node_status 2 task reason) / $(node_status 3 task reason)"

runner() { job_runner task; }
# starts_since US: the nodes of the starts after US, one a line.
starts_since() { awk -v t="$1" '$1 > t { print $2 }' "$T/starts"; }
never_fatal() {
	local i
	for i in 1 2 3; do
		[ "$(node_status "$i" task state)" != FATAL ] ||
			fail "node $i gave task up (FATAL): $(node_status "$i" task reason)"
	done
}

# --- 1. It fails on its holder only.
touch "$T/fail-n1"
t1=$(now_us)
nctl 1 restart --no-wait task >/dev/null
moved() { r=$(runner) && [ "$r" != 1 ]; }
retry 30 moved || fail "task did not move off n1: $(for i in 1 2 3; do node_status "$i" task state; node_status "$i" task reason; done)"
n1=$(starts_since "$t1" | grep -c '^n1$')
log "task moved to n$r after $n1 failed starts on n1: $(starts_since "$t1" | tr '\n' ' ')"
[ "$n1" -eq 3 ] || fail "task failed $n1 times on n1 before it moved, not 3 (cluster_handover_after)"
grep -q 'task: failing here (exit 3): cluster lease of epoch [0-9]* handed over to another node' "$(node_log 1)" ||
	fail "node 1 did not say it handed task over"
# Node 1 stands by, and says why (until the streak is over: then it
# waits as any standby).
why1=$(node_status 1 task reason)
case $why1 in
"failing on n1 (exit 3); now held by n$r" | "failing on n1 (exit 3); next try here in "* | \
	"waiting for cluster lease (held by n$r"*) ;;
*) fail "node 1 does not stand by: $(node_status 1 task state): $why1" ;;
esac
[ "$(node_status 1 task state)" = STARTING ] || fail "node 1 is $(node_status 1 task state), not a standby"
never_fatal
# The new holder's run lasts min_uptime: the streak is over.
failing() { pg_sql "SELECT vigil.failing(j.id, 0) FROM vigil.job j WHERE j.name = 'task'"; }
streak_over() { [ -z "$(failing)" ]; }
retry 10 streak_over || fail "the streak did not end on n$r: $(failing)"
grep -q 'task: running for min_uptime: the streak of failed starts is over cluster-wide' "$(node_log "$r")" ||
	fail "node $r did not say the streak is over"
log "ok: fails on its holder only: moved to n$r after 3 failed starts; n1 said: $why1"

# --- 2. It fails everywhere: turns, then rounds, never off.
touch "$T/fail-all"
t2=$(now_us)
nctl "$r" restart --no-wait task >/dev/null
# Two rounds: every node failed it twice (3 starts a turn).
rounds() { pg_sql "SELECT l.rounds FROM vigil.lease l JOIN vigil.job j ON j.id = l.job_id WHERE j.name = 'task'"; }
two_rounds() { [ "$(rounds)" -ge 2 ]; }
retry 60 two_rounds || fail "not two rounds: rounds $(rounds); starts: $(starts_since "$t2" | tr '\n' ' ')"
starts_since "$t2" >"$T/turns"
log "starts while it fails everywhere: $(tr '\n' ' ' <"$T/turns")"
# The first round: three turns of three starts, on three nodes.
first=$(head -n 9 "$T/turns" | uniq -c | awk '{ print $1 "x" $2 }' | tr '\n' ' ')
[ "$(head -n 9 "$T/turns" | uniq | wc -l)" = 3 ] && [ "$(head -n 9 "$T/turns" | sort -u | wc -l)" = 3 ] ||
	fail "the first round was not three turns on three nodes: $first"
grep -q 'task: failed on every node: tried again cluster-wide in' "$T"/n[123]/vigild.log ||
	fail "no node said task failed on every node"
never_fatal
# A standby says where it failed: every node, how, and what is next.
said=
failing_all() {
	local i
	for i in 1 2 3; do
		said=$(node_status "$i" task reason)
		case $said in
		"failing on "*) ;;
		*) continue ;;
		esac
		case $said in *"n1 (exit 3)"*) ;; *) continue ;; esac
		case $said in *"n2 (exit 3)"*) ;; *) continue ;; esac
		case $said in *"n3 (exit 3)"*) return 0 ;; esac
	done
	return 1
}
retry 10 failing_all || fail "no node says where it fails: $(for i in 1 2 3; do node_status "$i" task reason; done)"
log "ok: fails everywhere: rounds $(rounds), first round $first; a standby says: $said"

# It can run again: it runs, without a start, and the streak ends.
rm -f "$T/fail-all" "$T/fail-n1"
retry 30 runner >/dev/null || fail "task did not run again: $(for i in 1 2 3; do node_status "$i" task reason; done)"
r=$(runner)
over() { [ "$(rounds)" = 0 ] && streak_over; }
retry 10 over || fail "the streak did not end: rounds $(rounds), failing on $(failing)"
never_fatal
log "ok: runs again on n$r without a start; the streak is over"

# --- 3. Fencing tokens: one per run start, strictly growing.
sort -n -k 1 "$T/starts" | awk '{ if (NR > 1 && $3 <= last) { print "token " $3 " of " $2 " after " last; bad = 1 }
	last = $3 } END { exit bad }' || fail "tokens did not grow with each start: $(sort -n "$T/starts")"
[ "$(awk '{ print $3 }' "$T/starts" | sort -u | wc -l)" = "$(wc -l <"$T/starts")" ] ||
	fail "a token was given twice: $(sort -n "$T/starts")"
new=$(sort -n -k 1 "$T/starts" | tail -n 1 | cut -d' ' -f3)
old=$(sort -n -k 1 "$T/starts" | tail -n 2 | head -n 1 | cut -d' ' -f3)
# The guard of docs/cluster.md, on a table the task would write.
pg_sql "CREATE TABLE public.task_state (id int PRIMARY KEY, fence bigint NOT NULL, data text);
	INSERT INTO public.task_state VALUES (1, 0, '')" >/dev/null
guard() { pg_sql "WITH w AS (UPDATE public.task_state SET data = '$2', fence = $1 WHERE id = 1 AND fence <= $1 RETURNING 1) SELECT count(*) FROM w"; }
[ "$(guard "$new" newest)" = 1 ] || fail "the guard refused the newest token $new"
[ "$(guard "$old" stale)" = 0 ] || fail "the guard took the stale token $old after $new"
[ "$(pg_sql "SELECT data FROM public.task_state")" = newest ] || fail "the stale write went through"
log "ok: $(wc -l <"$T/starts") starts, $(wc -l <"$T/starts") tokens, each above the last; the guard refused $old after $new"

for i in 1 2 3; do node_stop "$i"; done
sampler_stop
log "ok"
