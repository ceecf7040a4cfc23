#!/bin/bash
# Clients cannot hurt vigild: one that never completes a request is
# dropped after the request timeout; running out of descriptors pauses
# accepting instead of spinning; a half-closed client still gets the reply
# to a waiting command.
. "$(dirname "$0")/lib.sh"
need_helper sendraw

job a 'command = "sleep 1000"'
job b 'command = "sleep 1000"' 'autostart = false'
# vigild raises its soft limit to the hard one: lower both.
ulimit -n 64
start_vigild --log-level debug
wait_state a RUNNING

# A half-closed client that waits for a start gets its reply.
printf 'start\0b\0' >"$T/body"
len=$(wc -c <"$T/body")
{
	printf '\001\000\001\000'
	# shellcheck disable=SC2059 # an octal escape built for the length byte
	printf "\\$(printf %03o $((len + 4)))\\000\\000\\000"
	printf '\000\000\000\000'
	cat "$T/body"
} >"$T/req"
"$HELPERS/sendraw" -h -o -t 10 "$SOCK" <"$T/req" >"$T/reply" 2>/dev/null ||
	fail "half-closed client got no complete reply"
is_state b RUNNING || fail "start from a half-closed client did nothing"
# The reply ends with PROTO_EXIT (type 4) and code 0.
tail -c 12 "$T/reply" | od -An -tx1 | tr -d ' \n' | grep -q '0100040004000000''00000000$' ||
	fail "reply does not end with exit 0: $(od -An -tx1 "$T/reply" | tail -n 2)"

# Hold more connections than vigild has descriptors.
mkfifo "$T/hold"
exec 7<>"$T/hold"
pids=
for _ in $(seq 1 80); do
	"$HELPERS/sendraw" -t 60 "$SOCK" <"$T/hold" 7>&- 2>/dev/null &
	pids="$pids $!"
done
for p in $pids; do track "$p"; done
# What vigild and its clients were doing, when it did not pause: its
# descriptors and limit, the clients still alive, vigild's last words.
no_pause() {
	local alive=0 p
	for p in $pids; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
	log "vigild fds: $(find "/proc/$VIGILD_PID/fd" -mindepth 1 2>/dev/null | wc -l)," \
		"$(grep 'open files' "/proc/$VIGILD_PID/limits" 2>/dev/null | tr -s ' ')"
	log "vigild state: $(awk '{ print $3 }' "/proc/$VIGILD_PID/stat" 2>/dev/null)," \
		"clients alive: $alive of 80," \
		"connected to the socket: $(ss -xH 2>/dev/null | grep -c "$SOCK")"
	tail -n 15 "$VLOG" | sed 's/^/# vigild: /'
	fail "no pause on EMFILE"
}
retry 10 grep -q "not accepting clients for now" "$VLOG" || no_pause
ticks() { awk '{ print $14 + $15 }' "/proc/$VIGILD_PID/stat"; }
t0=$(ticks)
retry 3 false || true # a 3 s window to measure CPU time in
t1=$(ticks)
[ $((t1 - t0)) -lt 50 ] || fail "vigild burnt $((t1 - t0)) ticks while out of descriptors"
# Idle clients are dropped after the request timeout (10 s).
first_drop() { grep -q "no complete request in time, dropped" "$VLOG"; }
retry 20 first_drop || fail "no idle client was dropped"
# Let the rest go (they are ours); vigild then answers at once.
# shellcheck disable=SC2086 # the pids, as words
end_tracked $pids
exec 7>&-
retry 10 ctl ping >/dev/null || fail "vigild does not answer after the storm"
[ "$(grep -c "accept: Too many open files" "$VLOG")" -eq 0 ] || fail "accept errors logged in a loop"
stop_vigild
log "ok"
