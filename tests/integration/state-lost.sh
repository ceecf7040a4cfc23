#!/bin/bash
# shellcheck disable=SC2317 # predicates called through retry
# state.db is never lost without a word (issue 38).  Deleted (rm
# state.db*), then replaced by another file, under a running vigild while
# 500 enqueues arrive: vigild says so (its log, status, status --json, the
# metrics, on_event) and puts the database back from its open connection.
# Every acknowledged message runs, once; the operator's stop and the
# history are kept.  Message ids never repeat in the state directory's
# life: not after a restart, a corrupt file moved aside, nor a database
# deleted while vigild was down after a kill -9 (vigild's enqueue and
# vigilctl enqueue --direct alike).
. "$(dirname "$0")/lib.sh"

cat >"$T/vigil.conf" <<EOF
on_event = {"sh", "-c", "case \$VIGIL_EVENT in state-db-*) echo \"\$VIGIL_EVENT [\$VIGIL_JOB] \$VIGIL_DETAIL\" >>$T/events;; esac"}
EOF
job q 'kind = "queue"' 'concurrency = 4' \
	"command = {\"sh\", \"-c\", \"echo \$VIGIL_MESSAGE_ID >>$T/ran\"}"
job burner 'command = "sleep 100000"'
start_vigild
wait_state burner RUNNING
ctl stop burner >/dev/null
: >"$T/acked"
: >"$T/ran"

lines() { wc -l <"$1" 2>/dev/null || echo 0; }
at_least() { [ "$(lines "$1")" -ge "$2" ]; }
logged() { [ "$(grep -c "$1" "$VLOG" || true)" -ge "$2" ]; }

# The producer: 500 enqueues, one at a time; an acknowledged id is kept.
# (100 under ASan: tests/run-all.sh runs the 500 in its gcc stage.)
N=500
[ -z "$VIGIL_ASAN" ] || N=100
(
	for i in $(seq 1 "$N"); do
		if id=$(ctl enqueue q "m$i"); then echo "$id" >>"$T/acked"; else echo "$i" >>"$T/refused"; fi
	done
) &
producer=$!
track "$producer"

# --- Deleted, as an operator's rm state.db* does.
retry 30 at_least "$T/acked" $((N / 5)) || fail "no $((N / 5)) enqueues: $(lines "$T/acked")"
rm -f "$STATE/state.db" "$STATE/state.db-wal" "$STATE/state.db-shm"
retry 10 logged "put back from vigild's open database" 1 ||
	fail "state.db was not put back after rm: $(tail -n 5 "$VLOG")"
grep -q "state.db was deleted or renamed under vigild" "$VLOG" ||
	fail "the loss was not said: $(tail -n 5 "$VLOG")"
[ -f "$STATE/state.db" ] || fail "no state.db after the put-back"

# --- Replaced by another database.
retry 30 at_least "$T/acked" $((3 * N / 5)) || fail "no $((3 * N / 5)) enqueues: $(lines "$T/acked")"
sqlite3 "$T/other.db" 'CREATE TABLE t (a); INSERT INTO t VALUES (42);'
mv "$T/other.db" "$STATE/state.db"
retry 10 logged "put back from vigild's open database" 2 ||
	fail "state.db was not put back after it was replaced: $(tail -n 5 "$VLOG")"
grep -q "state.db was replaced by another file under vigild" "$VLOG" ||
	fail "the replacement was not said: $(tail -n 5 "$VLOG")"
aside=$(find "$STATE" -maxdepth 1 -name 'state.db.replaced-*' ! -name '*-wal' ! -name '*-shm' | head -n 1)
[ -n "$aside" ] && [ "$(sqlite3 "$aside" 'SELECT a FROM t')" = 42 ] ||
	fail "the stranger's file was not kept aside: $(ls "$STATE")"

wait "$producer" || fail "the producer failed"
[ ! -s "$T/refused" ] || fail "enqueues refused: $(tr '\n' ' ' <"$T/refused")"
[ "$(lines "$T/acked")" -eq "$N" ] || fail "$(lines "$T/acked") of $N acknowledged"
[ "$(sort "$T/acked" | uniq -d | wc -l)" -eq 0 ] || fail "an id was given twice: $(sort "$T/acked" | uniq -d | head -n 3)"

# Every acknowledged message runs, once.
all_ran() { [ "$(sort -u "$T/ran" | wc -l)" -ge "$N" ]; }
retry 60 all_ran || fail "only $(sort -u "$T/ran" | wc -l) of $N ran"
missing=$(comm -23 <(sort "$T/acked") <(sort -u "$T/ran") | head -n 5)
[ -z "$missing" ] || fail "acknowledged, never ran: $missing"
[ "$(sort "$T/ran" | uniq -d | wc -l)" -eq 0 ] || fail "ran twice: $(sort "$T/ran" | uniq -d | head -n 3)"
log "$N acknowledged, $N ran once, through a delete and a replacement"

# Said: status (standard error), status --json, metrics, on_event.
ctl status >/dev/null 2>"$T/status.err" || true
grep -q "^vigild: at .*: .*state.db: put back from vigild's open database" "$T/status.err" ||
	fail "status does not say it: $(cat "$T/status.err")"
ctl --json status >"$T/status.json"
[ "$(jq -c '.state_db | [.lost, .restored, .ok]' "$T/status.json")" = '[2,2,true]' ] ||
	fail "status --json: $(jq -c .state_db "$T/status.json")"
ctl metrics >"$T/metrics"
grep -qx 'vigil_state_db_lost_total 2' "$T/metrics" &&
	grep -qx 'vigil_state_db_restored_total 2' "$T/metrics" &&
	grep -qx 'vigil_state_db_ok 1' "$T/metrics" || fail "metrics: $(grep state_db "$T/metrics")"
events_are() { [ "$(grep -c "^$1 \[\] " "$T/events" 2>/dev/null || true)" -ge "$2" ]; }
retry 10 events_are state-db-lost 2 && retry 10 events_are state-db-restored 2 ||
	fail "on_event: $(cat "$T/events" 2>/dev/null)"

# Kept: the operator's stop and the history, across a restart.
max=$(sort -n "$T/acked" | tail -n 1)
stop_vigild
start_vigild
sleep_state() { is_state burner STOPPED; }
retry 5 sleep_state || fail "the operator's stop was lost: burner is $(state burner)"
ctl history burner | grep -q "stopped" || fail "burner's history was lost: $(ctl history burner)"
id=$(ctl enqueue q after-restart)
[ "$id" -gt "$max" ] || fail "after a restart, id $id is not above $max"
log "after a restart: the stop and the history kept, next id $id"
max=$id

# --- A corrupt file, moved aside at start: the ids go on above.
stop_vigild
printf 'this is not a database at all, not at all\n%.0s' $(seq 1 200) >"$STATE/state.db"
rm -f "$STATE/state.db-wal" "$STATE/state.db-shm"
start_vigild
grep -q "state.db: moved aside as .*corrupt" "$VLOG" || fail "the corrupt file was not said: $(tail -n 5 "$VLOG")"
retry 10 events_are state-db-lost 3 || fail "on_event for the corrupt file: $(cat "$T/events")"
[ "$(ctl --json status | jq .state_db.lost)" = 1 ] || fail "status --json after the corrupt file: $(ctl --json status | jq -c .state_db)"
id=$(ctl enqueue q after-corrupt)
[ "$id" -gt "$max" ] || fail "after a corrupt state.db, id $id is not above $max"
max=$id

# --- vigild killed, then its database deleted while it is down: gone
# for good, but no id comes again.
kill -KILL "$VIGILD_PID"
wait "$VIGILD_PID" 2>/dev/null || true
VIGILD_PID=
rm -f "$STATE"/state.db*
# vigilctl enqueue --direct, with vigild down, keeps the mark too.
id=$("$VIGILCTL" --state-dir "$STATE" enqueue --direct q direct)
[ "$id" -gt "$max" ] || fail "after a kill -9 and a deleted state.db, enqueue --direct gave id $id, not above $max"
log "ids went on: $max, then $id after a kill -9 and a deleted database"
max=$id
rm -f "$STATE"/state.db*
start_vigild
id=$(ctl enqueue q after-kill)
[ "$id" -gt "$max" ] || fail "after a deleted state.db, id $id is not above $max"
stop_vigild
