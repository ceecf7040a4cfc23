#!/bin/bash
# A peer without control rights (socket_mode 0666) cannot lock others out
# nor make vigild's memory grow: its waits beyond a few and its
# connections beyond a cap are refused with a clear message, root is
# still served, a huge target list costs no more than the instances there
# are, and an oversized request is refused from its header.  And vigilctl
# does not wait forever for a vigild that does not answer (--timeout,
# exit 69), while waits and slow stops outlast that timeout.
. "$(dirname "$0")/lib.sh"
# Mostly waits (vigilctl's default timeout): run in stages 1 and 2 of
# tests/run-all.sh, not again under valgrind nor in distcheck.
[ -z "${VIGILD_WRAPPER:-}" ] || skip "timing under valgrind"
[ -z "${VIGIL_SKIP_SLOW:-}" ] || skip "VIGIL_SKIP_SLOW is set"
need_nobody
need_cmd timeout coreutils
need_helper sendraw
need_helper ignore-term
NOBODY=$(id -u nobody)
# vigilctl must be reachable by other users too: not so in a build under
# a directory closed to others (such as /root).
setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
	test -x "$VIGILCTL" ||
	skip "user nobody cannot run $VIGILCTL (a directory on its path is closed to others)"
setpriv --reuid=20001 --regid=20001 --clear-groups test -x "$VIGILCTL" ||
	skip "uid 20001 cannot run $VIGILCTL (a directory on its path is closed to others)"

# Run as nobody; in the background, so that $! is the process itself.
NOBODY_RUN=(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups)
as_nobody() { "${NOBODY_RUN[@]}" "$VIGILCTL" -s "$SOCK" "$@"; }
# root's vigilctl, never waiting for good (the holes make it hang).
ctl_t() { timeout "$(slow_s 10)" "$VIGILCTL" -s "$SOCK" "$@"; }

# Failures are gathered, so that one run shows every hole.
BAD=
bad() {
	printf 'BAD: %s\n' "$*" >&2
	BAD="$BAD
$*"
}

# A stopped vigild must get going again whatever happens (set +e: the
# status is handed on to lib.sh's cleanup through $?).
trap 'rc=$?; set +e; [ -z "$VIGILD_PID" ] || kill -CONT "$VIGILD_PID" 2>/dev/null; (exit $rc); cleanup' EXIT

# untrack: forget the processes tracked since mark, all of them reaped
# (cleanup must not signal their pids, which may be reused by then).
mark() { MARK=$TRACKED; }
untrack() { TRACKED=$MARK; }

printf 'socket_mode = "0666"\n' >"$T/vigil.conf"
job a 'command = "sleep 1000"'
job idle 'command = "sleep 1000"' 'autostart = false'
job stubborn "command = {\"$HELPERS/ignore-term\", \"$T/ready\"}" \
	'stop_timeout = "3s"'
# 50 instances that "all" names, none running.
for i in 1 2 3 4 5; do
	job "many$i" 'command = "sleep 1000"' 'autostart = false' 'instances = 10'
done
start_vigild
wait_state a RUNNING
retry 10 test -s "$T/ready" || fail "stubborn did not start"

# (a) 520 waits that never settle, from one user without control rights.
log "520 waits from uid $NOBODY"
pids=
for _ in $(seq 1 520); do
	"${NOBODY_RUN[@]}" "$VIGILCTL" -s "$SOCK" wait --state FATAL idle \
		>>"$T/flood.out" 2>&1 &
	pids="$pids $!"
done
mark
# shellcheck disable=SC2086 # the pids, as words
track $pids
parked() {
	local p n=0
	for p in $pids; do
		if tracked_alive "$p"; then n=$((n + 1)); fi
	done
	echo "$n"
}
few_parked() { [ "$(parked)" -le 4 ]; }
# The flood has done what it can: all but a few refused, or (without the
# caps) every client slot taken.
flooded() { few_parked || grep -q "not accepting clients for now" "$VLOG"; }
retry 30 flooded || bad "the waits neither settled nor filled vigild"
t0=$(now_ms)
if ctl_t status >/dev/null; then
	log "root's status answered in $(($(now_ms) - t0)) ms"
else
	bad "root's status did not answer while uid $NOBODY held waits"
fi
retry 20 few_parked || bad "$(parked) waits of uid $NOBODY still held"
refused=$(grep -cE 'too many (waiting requests|connections) from uid' "$T/flood.out" || true)
log "$refused waits refused; $(parked) held"
[ "$refused" -ge 500 ] || bad "only $refused of 520 waits refused with a message"
# Reap each one (those still waiting are ended first: not yet reaped,
# their pids cannot have been reused).
n69=0
for p in $pids; do
	if tracked_alive "$p"; then kill "$p" 2>/dev/null || true; fi
	rc=0
	wait "$p" 2>/dev/null || rc=$?
	[ "$rc" -ne 69 ] || n69=$((n69 + 1))
done
untrack
[ "$n69" -ge 500 ] || bad "only $n69 refused waits exited 69"
retry 10 ctl_t ping >/dev/null || fail "vigild does not answer after the waits"

# (a) Idle connections: a uid gets 32, the next one is refused at once,
# root is still served.
log "40 idle connections from uid $NOBODY"
mkfifo "$T/hold"
exec 7<>"$T/hold"
holders=
for _ in $(seq 1 40); do
	"${NOBODY_RUN[@]}" "$HELPERS/sendraw" -t 60 "$SOCK" <"$T/hold" 7>&- \
		2>/dev/null &
	holders="$holders $!"
done
mark
# shellcheck disable=SC2086 # the pids, as words
track $holders
nobody_refused() {
	local rc=0
	as_nobody ping >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" -eq 69 ] && grep -q "too many connections from uid $NOBODY" "$T/err"
}
if retry 8 nobody_refused; then
	log "refused: $(cat "$T/err")"
else
	bad "uid $NOBODY was not refused a 41st connection: $(cat "$T/out" "$T/err" | head -n 2)"
fi
ctl_t ping >/dev/null ||
	bad "root's ping not served while uid $NOBODY holds its connections"
# shellcheck disable=SC2086 # the pids, as words
end_tracked $holders
untrack
exec 7>&-
retry 10 as_nobody ping >/dev/null || bad "uid $NOBODY not served again"

# (a) A request larger than a peer without rights may send.
rc=0
as_nobody status "$(head -c 70000 /dev/zero | tr '\0' x)" >/dev/null \
	2>"$T/err" || rc=$?
[ "$rc" -eq 1 ] && grep -q "request too large" "$T/err" ||
	bad "a 70 kB request of uid $NOBODY: exit $rc, $(head -c 80 "$T/err")"

# (a) Huge target lists from 20 users: vigild's memory stays bounded.
rss() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$VIGILD_PID/status"; }
rss0=$(rss VmRSS)
mapfile -t alls < <(yes all | head -n 4000)
flood=
for i in $(seq 1 20); do
	setpriv --reuid=$((20000 + i)) --regid=$((20000 + i)) --clear-groups \
		"$VIGILCTL" -s "$SOCK" wait --timeout 2s --state FATAL \
		"${alls[@]}" >/dev/null 2>&1 &
	flood="$flood $!"
done
mark
# shellcheck disable=SC2086 # the pids, as words
track $flood
for p in $flood; do
	timeout "$(slow_s 30)" tail --pid="$p" -f /dev/null || bad "a flood client hangs"
done
for p in $flood; do wait "$p" 2>/dev/null || true; done
untrack
hwm=$(rss VmHWM)
log "VmRSS before ${rss0} kB, peak after the flood ${hwm} kB"
[ $((hwm - rss0)) -lt 65536 ] ||
	bad "vigild grew by $(((hwm - rss0) / 1024)) MB for 20 target lists"
ctl_t ping >/dev/null || fail "vigild does not answer after the flood"

# (b) A vigild that does not answer: vigilctl gives up, exit 69.
log "vigild stopped"
kill -STOP "$VIGILD_PID"
"$VIGILCTL" -s "$SOCK" status >"$T/def.out" 2>&1 &
def=$!
track "$def"
t0=$(now_ms)
rc=0
timeout "$(slow_s 10)" "$VIGILCTL" -s "$SOCK" --timeout 1s status >/dev/null 2>"$T/err" ||
	rc=$?
t1=$(now_ms)
[ "$rc" -eq 69 ] || bad "--timeout 1s against a stopped vigild: exit $rc"
[ $((t1 - t0)) -lt $(($(slow_s 5) * 1000)) ] || bad "--timeout 1s took $((t1 - t0)) ms"
grep -q "vigild did not answer within 1s" "$T/err" ||
	bad "unclear: $(head -n 2 "$T/err")"
# The default is 30 s.
timeout "$(slow_s 45)" tail --pid="$def" -f /dev/null || true
t1=$(now_ms)
rc=0
if alive "$def"; then
	bad "vigilctl without --timeout still waits after 45 s"
	kill "$def"
fi
wait "$def" || rc=$?
log "default timeout: exit $rc after $((t1 - t0)) ms: $(head -n 2 "$T/def.out")"
[ "$rc" -eq 69 ] && grep -q "did not answer within 30s" "$T/def.out" ||
	bad "vigilctl without --timeout: exit $rc, $(head -n 2 "$T/def.out")"
kill -CONT "$VIGILD_PID"
retry 10 ctl_t ping >/dev/null || fail "vigild does not answer after SIGCONT"

# (b) What takes long once vigild has the request is not cut off.
t0=$(now_ms)
rc=0
"$VIGILCTL" -s "$SOCK" --timeout 1s stop stubborn 2>"$T/err" || rc=$?
t1=$(now_ms)
log "stop of a job that ignores TERM: exit $rc in $((t1 - t0)) ms"
[ "$rc" -eq 0 ] || bad "stop with --timeout 1s: exit $rc, $(head -n 2 "$T/err")"
[ $((t1 - t0)) -ge 2500 ] || bad "the stop took only $((t1 - t0)) ms"
is_state stubborn STOPPED || bad "stubborn is $(state stubborn)"
t0=$(now_ms)
rc=0
"$VIGILCTL" -s "$SOCK" --timeout 1s wait --timeout 3s --state FATAL a \
	2>"$T/err" || rc=$?
t1=$(now_ms)
[ "$rc" -eq 1 ] && grep -q "timed out" "$T/err" ||
	bad "wait with --timeout 1s: exit $rc, $(head -n 2 "$T/err")"
[ $((t1 - t0)) -ge 2500 ] || bad "the wait ended after $((t1 - t0)) ms"
"$VIGILCTL" -s "$SOCK" --timeout 1s tail -f a >/dev/null 2>&1 &
tf=$!
track "$tf"
retry 2 false || true # tail -f must outlive --timeout: give it 2 s
alive "$tf" || bad "tail -f with --timeout 1s ended"
kill "$tf" 2>/dev/null || true
wait "$tf" 2>/dev/null || true

[ -z "$BAD" ] || fail "$(printf '%s' "$BAD" | sed '/^$/d' | tr '\n' ';')"
stop_vigild
log "ok"
