#!/bin/bash
# shellcheck disable=SC2317 # predicates called through retry
# An on_event that cannot keep up drops state changes, not what an
# operator is told of: with its queue full of a flood's state changes,
# vigild's own events (state.db deleted under it, then put back) take the
# place of the oldest state changes and reach the hook once it catches
# up; the drops are still counted in the log.
. "$(dirname "$0")/lib.sh"
# A flood (as hooks-flood.sh): run in stage 1 of tests/run-all.sh, not
# again under valgrind nor in distcheck.
[ -z "${VIGILD_WRAPPER:-}" ] || skip "a flood under valgrind"
[ -z "${VIGIL_SKIP_SLOW:-}" ] || skip "VIGIL_SKIP_SLOW is set"
[ -z "${VIGIL_SKIP_TIMING:-}" ] || skip "VIGIL_SKIP_TIMING is set (a timing, load or container test: the gcc stage runs it)"

# While $T/gate exists each hook takes 200 ms: far slower than the flood,
# so the queue stays full.  Without it, the queue drains in moments.
# Every event but a state change is written down.
cat >"$T/vigil.conf" <<EOF
on_event = {"sh", "-c", "[ ! -e $T/gate ] || sleep 0.2; [ \"\$VIGIL_EVENT\" = state ] || echo \"\$VIGIL_EVENT\" >>$T/events"}
EOF
: >"$T/gate"
# Each instance fails and restarts every 50 ms: hundreds of changes a
# second for a hook that takes five.
job flap 'command = "false"' 'instances = 20' 'restart_delay = "50ms"' \
	'restart_delay_max = "50ms"'
start_vigild

drops() { grep -c 'on_event: [0-9]* events\{0,1\} dropped' "$VLOG" || true; }
dropping() { [ "$(drops)" -ge 1 ]; }
retry 20 dropping || fail "the queue never filled; log: $(tail -n 5 "$VLOG")"
# The queue is full and stays so: vigild's own events come now.
rm -f "$STATE/state.db" "$STATE/state.db-wal" "$STATE/state.db-shm"
put_back() { grep -q "put back from vigild's open database" "$VLOG"; }
retry 10 put_back || fail "state.db was not put back: $(tail -n 5 "$VLOG")"
# The flood goes on a little after them, then ends; the hook catches up.
ctl stop flap >/dev/null || fail "stop flap"
rm -f "$T/gate"
events_are() { [ "$(grep -cx "$1" "$T/events" 2>/dev/null || true)" -ge 1 ]; }
check "state-db-lost reached on_event through the full queue" \
	retry 60 events_are state-db-lost
check "state-db-restored reached on_event through the full queue" \
	retry 60 events_are state-db-restored
# State changes were dropped, and said to be (the next hook says it).
said() { grep -q 'on_event: [0-9]* events\{0,1\} dropped: the hook cannot keep up' "$VLOG"; }
check "the drops are counted in the log" retry 10 said
checks_passed
log "$(grep -c . "$T/events") events other than state changes reached on_event: $(sort "$T/events" | uniq -c | tr -s ' \n' ' ')"
