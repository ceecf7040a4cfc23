#!/bin/bash
# Periodic cluster jobs on three nodes: every = "1s" for 20 s fires once
# per slot cluster-wide (each slot's compare-and-set in vigil.periodic has
# one winner), no slot runs twice, slots sit on the Unix epoch's grid,
# every run has its own fencing token, and vigil.run has each run.  Then a
# run longer than the interval: the slots it spans are skipped on every
# node (the run's lease is still held), runs never overlap anywhere.  The
# skipped slots are in vigil.run with why: those a run spanned, and those
# no node fired while every node was down.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
cluster_need
pg_start

runs=$T/runs
cat >"$T/tick.sh" <<'EOF'
# tick.sh FILE SECONDS MARKER: one line per run, "START_US END_US NODE TOKEN"
start=${EPOCHREALTIME/./}
sleep "$2"
echo "$start ${EPOCHREALTIME/./} $VIGIL_NODE $VIGIL_FENCING_TOKEN" >>"$1"
EOF
cluster_job tick <<EOF
kind = "periodic"
every = "1s"
cluster = true
stop_timeout = "500ms"
command = {"bash", "$T/tick.sh", "$runs", "0.2", "tick-$$"}
EOF
sampler_start "tick-$$"
nodes_start_together 1 2 3
t0=$(now_us)
# 20 s of slots.
sleep 20
t1=$(now_us)

# Runs that began between t0 + 1 s and t1 - 1 s: one per slot.
awk -v a="$t0" -v b="$t1" '$1 > a + 1000000 && $1 < b - 1000000' "$runs" >"$T/mid"
n=$(wc -l <"$T/mid")
slots=$(awk '{ print int($1 / 1000000) }' "$T/mid" | sort -u | wc -l)
log "$n runs in the middle 18 s, in $slots distinct slots, on nodes: $(awk '{ print $3 }' "$T/mid" | sort | uniq -c | tr -s ' \n' ' ')"
[ "$n" -eq "$slots" ] || fail "a slot ran twice: $(awk '{ print int($1 / 1000000) }' "$T/mid" | sort | uniq -d)"
[ "$n" -ge 16 ] || fail "only $n runs in 18 slots: $(cat "$runs")"
# On the grid: each run begins early in its second (the slot plus the
# time to win it), whichever node won it.
late=$(awk '{ if ($1 % 1000000 > 500000) print }' "$T/mid")
[ -z "$late" ] || fail "runs off the 1 s grid of the Unix epoch: $late"
# Every run its own token, increasing.
sort -n -k 1 "$runs" | awk '{ if (NR > 1 && $4 <= last) { print; bad = 1 } last = $4 }
	END { exit bad }' || fail "fencing tokens did not increase: $(sort -n "$runs")"
# The cluster-wide history has the runs, each with its node and epoch.
total=$(wc -l <"$runs")
retry 5 test "$(pg_sql "SELECT count(*) FROM vigil.run r JOIN vigil.job j ON j.id = r.job_id WHERE j.name = 'tick' AND r.ended_at IS NOT NULL")" -ge "$total" ||
	fail "vigil.run has $(pg_sql "SELECT count(*) FROM vigil.run WHERE ended_at IS NOT NULL") ended runs, $total ran"
[ "$(pg_sql "SELECT count(*) FROM vigil.periodic")" = 1 ] ||
	fail "vigil.periodic: $(pg_sql "TABLE vigil.periodic")"
log "ok: one run per slot on three nodes ($n in 18 s), tokens increasing, vigil.run has them"

# --- A run longer than the interval: the slots it spans are skipped.
for i in 1 2 3; do nctl "$i" stop tick >/dev/null; done
: >"$runs"
cluster_job tick <<EOF
kind = "periodic"
every = "1s"
cluster = true
stop_timeout = "500ms"
command = {"bash", "$T/tick.sh", "$runs", "2.5", "tick-$$"}
EOF
for i in 1 2 3; do nctl "$i" reload >/dev/null; done
nctl 1 start tick >/dev/null
# Each node sees the start cluster-wide; wait for three long runs.
three() { [ "$(wc -l <"$runs")" -ge 3 ]; }
retry 20 three || fail "no three long runs: $(cat "$runs")"
sort -n -k 1 "$runs" | awk '{ if (NR > 1 && $1 < end) { print "overlap:", $0; bad = 1 } end = $2 }
	END { exit bad }' || fail "long runs overlapped: $(sort -n "$runs")"
skipped=$(cat "$T"/n*/vigild.log | grep -c 'skipped: the last run is still going on' || true)
[ "$skipped" -ge 2 ] || fail "no slot was skipped cluster-wide ($skipped)"
sampler_stop
log "ok: long runs never overlap; $skipped slots skipped while one ran"

# --- Skipped slots in the cluster's history, with why (issue 35, item
# 3): those a run spanned, and those no node fired (every node down).
tick_runs() {
	pg_sql "SELECT r.reason FROM vigil.run r JOIN vigil.job j ON j.id = r.job_id
		WHERE j.name = 'tick' AND r.reason LIKE '$1' ORDER BY r.id"
}
busy() { [ "$(tick_runs 'skipped: the last run was still going on n_' | wc -l)" -ge 2 ]; }
retry 5 busy || fail "vigil.run has no slots skipped as busy: $(tick_runs 'skipped%')"
for i in 1 2 3; do node_stop "$i"; done
# Three slots or more pass with no node up (the fault, not a wait).
sleep 3.5
nodes_start_together 1 2 3
missed() { [ -n "$(tick_runs 'skipped: % slots between % ran on no node%')" ]; }
retry 10 missed || fail "vigil.run has no row for the slots no node ran: $(tick_runs 'skipped%')"
m=$(tick_runs 'skipped: % ran on no node%')
log "$m"
[ "$(printf '%s\n' "$m" | wc -l)" = 1 ] || fail "the slots no node ran were recorded more than once: $m"
n=$(printf '%s\n' "$m" | sed -E 's/^skipped: ([0-9]+) slots .*/\1/')
[ "$n" -ge 2 ] || fail "only $n slots no node ran in 3.5 s: $m"
log "ok: slots skipped as busy and $n that no node ran are in vigil.run, with why"

# --- A start cluster-wide: the asking node runs it now, once; the other
# nodes resume its slots, and neither run it too nor wait for the lease
# (each waited, then ran it again in turn, and a slot that came while one
# waited was skipped for ever, its lease given back at every slot).
for i in 1 2 3; do nctl "$i" stop tick >/dev/null; done
: >"$runs"
cluster_job tick <<EOF2
kind = "periodic"
every = "1h"
cluster = true
stop_timeout = "500ms"
command = {"bash", "$T/tick.sh", "$runs", "1.5", "tick-$$"}
EOF2
for i in 1 2 3; do nctl "$i" reload >/dev/null; done
nctl 1 start tick >/dev/null
armed() { [ "$(node_status "$1" tick state)" = WAITING ] && [ "$(node_status "$1" tick pid)" = null ]; }
one_run() { [ "$(wc -l <"$runs")" -ge 1 ]; }
retry 10 one_run || fail "start: no run: $(node_status 1 tick reason)"
retry 10 armed 1 && retry 10 armed 2 && retry 10 armed 3 ||
	fail "start: the nodes did not go back to their slots: $(for i in 1 2 3; do node_status "$i" tick state; node_status "$i" tick reason; done)"
free() { [ "$(pg_sql "SELECT count(*) FROM vigil.lease l JOIN vigil.job j ON j.id = l.job_id WHERE j.name = 'tick' AND l.holder IS NOT NULL")" = 0 ]; }
retry 10 free || fail "start: the lease is still held: $(pg_sql "TABLE vigil.lease")"
# Runs at an hour's slot (within 2 s of it) are the schedule's, not the start's.
started=$(awk '{ if ($1 % 3600000000 > 2000000) print }' "$runs")
[ "$(echo "$started" | wc -l)" = 1 ] && [ "$(echo "$started" | awk '{ print $3 }')" = n1 ] ||
	fail "start on n1: not one run, on n1: $started"
! grep -h 'slot of .* skipped: the last run is still going$' "$T"/n*/vigild.log ||
	fail "a slot was skipped for a run that was not there"
log "ok: a start runs once, on the asking node; the others resume their slots"
