#!/bin/bash
# shellcheck disable=SC2317 # predicates called through retry
# An operator's sqlite3 holding a write lock on state.db for a moment must
# not cost vigild the database for 30 s: queue messages whose runs end
# while the lock is held reach done soon after it is released, without a
# restart of vigild, the run history is written, and new messages are
# taken at once.
. "$(dirname "$0")/lib.sh"

need_cmd sqlite3 sqlite3
need_cmd jq jq
python3 -c 'import sqlite3' 2>/dev/null ||
	skip_fixable "python3 with its sqlite3 module not installed (Debian package python3)"

DB=$STATE/state.db
job q 'kind = "queue"' 'concurrency = 4' \
	"command = {\"sh\", \"-c\", \"touch $T/started-\$VIGIL_MESSAGE_ID; while [ ! -e $T/go ]; do sleep 0.02; done; touch $T/ran-\$VIGIL_MESSAGE_ID\"}"
job qf 'kind = "queue"' 'max_attempts = 1' \
	"command = {\"sh\", \"-c\", \"echo boom-\$VIGIL_MESSAGE_ID; while [ ! -e $T/go ]; do sleep 0.02; done; touch $T/ran-f; exit 3\"}"
job svc 'command = "sleep 1000"'
start_vigild
wait_state svc RUNNING

count() { ctl --json queue "${2:-q}" 2>/dev/null | jq ".queues[0].$1"; }
queue_is() { [ "$(count "$1" "${3:-q}")" = "$2" ]; }
nfiles() { find "$T" -maxdepth 1 -name "$1-*" | wc -l; }
has_files() { [ "$(nfiles "$1")" -ge "$2" ]; }
sql() { sqlite3 -cmd '.timeout 5000' "$DB" "$1"; }
exists() { [ -e "$1" ]; }
slots_waiting() {
	local i
	for i in 0 1 2 3; do is_state "q@$i" WAITING || return 1; done
}

for i in 1 2 3 4; do
	ctl enqueue q "message $i" >/dev/null || fail "enqueue $i failed"
done
retry 10 has_files started 4 || fail "only $(nfiles started) of 4 runs started"
queue_is running 4 || fail "not 4 running: $(ctl queue q)"
ctl enqueue qf "doomed" >/dev/null || fail "enqueue qf failed"
retry 10 queue_is running 1 qf || fail "qf not running: $(ctl queue qf)"

# The operator's lock: an exclusive transaction held until told to end.
python3 - "$DB" "$T/locked" "$T/release" <<'EOF' &
import os, sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], timeout=10, isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
db.execute("CREATE TABLE IF NOT EXISTS operator_note (x)")
open(sys.argv[2], "w").close()
deadline = time.time() + 30
while not os.path.exists(sys.argv[3]) and time.time() < deadline:
    time.sleep(0.02)
db.execute("COMMIT")
EOF
LOCKER=$!
track "$LOCKER"
retry 10 exists "$T/locked" || fail "the lock was not taken"

# While it is held: the runs end, and a service restarts.
touch "$T/go"
retry 10 has_files ran 5 || fail "the runs did not end"
retry 10 slots_waiting || fail "the slots did not come free"
retry 10 is_state qf WAITING || fail "qf's slot did not come free"
p=$(job_pid svc)
ctl restart svc >/dev/null || fail "restart during the lock failed"
wait_state svc RUNNING
[ "$(job_pid svc)" != "$p" ] || fail "svc was not restarted"
# vigild's writes meet the lock, and keep them for later.
retry 5 grep -q 'database is locked; keeping writes in memory' "$VLOG" ||
	fail "vigild did not meet the lock"
touch "$T/release"
wait "$LOCKER" || fail "the locker failed"
released=$(now_ms)

# Well under 30 s: the messages are done (deleted), nothing is running.
retry 5 queue_is running 0 ||
	fail "messages still running after the lock: $(ctl queue q)"
queue_is available 0 || fail "messages not done: $(ctl queue q)"
[ "$(sql "SELECT count(*) FROM queue WHERE job = 'q'")" = 0 ] ||
	fail "messages left in state.db: $(sql "SELECT id, state FROM queue")"
log "settled $(($(now_ms) - released)) ms after the release"
# The failed run: dead, with its output tail.
queue_is dead 1 qf || fail "qf's message is not dead: $(ctl queue qf)"
[ "$(sql "SELECT CAST(output AS TEXT) FROM queue WHERE job = 'qf'")" = "boom-$(sql "SELECT id FROM queue WHERE job = 'qf'")" ] ||
	fail "qf's tail: $(sql "SELECT * FROM queue WHERE job = 'qf'")"

# The history: the 4 runs ended, and svc's stopped run and its new one.
[ "$(sql "SELECT count(*) FROM runs WHERE job = 'q' AND ended IS NOT NULL")" -ge 4 ] ||
	fail "queue runs not ended in history: $(sql "SELECT * FROM runs WHERE job = 'q'")"
[ "$(sql "SELECT count(*) FROM runs WHERE job = 'svc' AND reason LIKE 'restarted (%'")" = 1 ] ||
	fail "svc's stopped run missing: $(sql "SELECT * FROM runs WHERE job = 'svc'")"
[ "$(sql "SELECT count(*) FROM runs WHERE job = 'svc' AND ended IS NULL")" = 1 ] ||
	fail "svc's new run missing: $(sql "SELECT * FROM runs WHERE job = 'svc'")"
ctl history q | grep -q exited || fail "history q shows no ended run"

# New messages are taken at once, not after a 30 s pause.
for i in 5 6; do
	ctl enqueue q "message $i" >/dev/null || fail "enqueue $i after the lock failed"
done
retry 5 has_files ran 7 || fail "new messages did not run"
retry 5 queue_is running 0 || fail "new messages not done: $(ctl queue q)"
stop_vigild
log "ok"
