#!/bin/bash
# Malformed input on the control socket: random bytes, bad headers, bad
# command payloads, a truncated request and many garbage clients at once.
# vigild must close each offending connection itself (tests/helpers/
# sendraw never shuts down its write side), keep a connection whose
# request is merely incomplete, serve a client that does not read its
# big reply without blocking anyone else, and leave its job alone.
. "$(dirname "$0")/lib.sh"

# Headers are built byte by byte in host order (little-endian only).
[ "$(printf '\001\000' | od -An -tu2 | tr -d ' ')" = 1 ] ||
	skip "big-endian machine: the test writes headers little-endian"
need_helper sendraw

# le N BYTES: N as BYTES little-endian bytes, through printf octal escapes.
le() {
	local i s=
	for ((i = 0; i < $2; i++)); do
		s="$s\\0$(printf %03o $((($1 >> (8 * i)) & 255)))"
	done
	printf '%b' "$s"
}

# hdr VERSION TYPE LEN: a struct proto_header.
hdr() { le "$1" 2 && le "$2" 2 && le "$3" 4; }

# words WORD...: a PROTO_COMMAND payload, flags 0.
words() {
	le 0 4
	printf '%s\0' "$@"
}

# send NAME EXPECTED-EXIT [SENDRAW-OPTIONS]: stdin through sendraw.
send() {
	local name=$1 want=$2 rc=0
	shift 2
	"$HELPERS/sendraw" "$@" "$SOCK" 2>"$T/$name.err" || rc=$?
	[ "$rc" -eq "$want" ] ||
		fail "$name: sendraw exited $rc, not $want: $(cat "$T/$name.err")"
	log "$name: $(cat "$T/$name.err")"
}

# bytes_read NAME: how many bytes sendraw read in case NAME.
bytes_read() { sed -n 's/^sendraw: wrote [0-9]*, read \([0-9]*\)$/\1/p' "$T/$1.err"; }

malformed() { grep -c 'malformed request, dropped' "$VLOG" || true; }

job a 'command = "sleep 1000"'
# 4000 instances, never started: a status of them is a big reply.
for i in 1 2 3 4; do
	job "many$i" 'command = "sleep 1000"' 'autostart = false' \
		'instances = 1000'
done
start_vigild --log-level debug
wait_state a RUNNING
pid=$(job_pid a)
[ -n "$pid" ] || fail "no pid for a"

# A well-formed request through sendraw: the reply (pong, exit 0 = 25
# bytes), then vigild closes even though bytes follow the request.
{ hdr 1 1 9 && words ping && printf 'trailing junk'; } | send ping 0
[ "$(bytes_read ping)" = 25 ] || fail "ping: reply of $(bytes_read ping) bytes"

# Requests of our version that vigild must log as malformed; to one of
# another version (almost surely what random bytes look like) it may
# answer with its own version before closing.
dropped=0
# (a) 64 KiB of random bytes.
head -c 65536 /dev/urandom | send urandom 0
# (b) a length over PROTO_MAX_PAYLOAD, refused from the header alone.
hdr 1 1 4294967295 | send huge-len 0
hdr 1 1 $((256 * 1024 + 1)) | send cap-plus-one 0
dropped=$((dropped + 2))
# (c) another protocol version, with a valid payload.
{ hdr 99 1 9 && words ping; } | send version-99 0
# (e) a command payload without its final NUL; also at the full cap.
{ hdr 1 1 8 && le 0 4 && printf ping; } | send no-nul 0
{ hdr 1 1 $((256 * 1024)) && head -c $((256 * 1024)) /dev/zero |
	tr '\0' x; } | send no-nul-max 0
dropped=$((dropped + 2))
# Other malformed requests: bad types, too short, too many words.
{ hdr 1 0 9 && words ping; } | send type-0 0
{ hdr 1 2 9 && words ping; } | send type-stdout 0
{ hdr 1 6 9 && words ping; } | send type-ack 0
{ hdr 1 7 9 && words ping; } | send type-max 0
{ hdr 1 1 4 && le 0 4; } | send flags-only 0
hdr 1 1 0 | send empty 0
{ hdr 1 1 $((4 + 4097)) && le 0 4 && head -c 4097 /dev/zero; } |
	send too-many-words 0
dropped=$((dropped + 7))
# (d) a truncated request: the header promises 100 bytes, 10 come.  vigild
# must wait for the rest (sendraw times out, exit 1); then the client
# closes, which is not a malformed request.
{ hdr 1 1 100 && head -c 10 /dev/zero; } | send truncated 1 -t 1
# (f) 20 clients at once sending random bytes, with pings in between.
# Each sends at least a header: with fewer bytes vigild rightly waits.
pids=
for i in $(seq 1 20); do
	head -c $((RANDOM % 16384 + 8)) /dev/urandom |
		"$HELPERS/sendraw" "$SOCK" 2>"$T/par$i.err" &
	pids="$pids $!"
	track $!
	[ $((i % 5)) -ne 0 ] || ctl ping >/dev/null || fail "ping failed under load"
done
i=0
for p in $pids; do
	i=$((i + 1))
	wait "$p" || fail "parallel client $i: $(cat "$T/par$i.err")"
done
has_dropped() { [ "$(malformed)" -ge "$dropped" ]; }
retry 5 has_dropped ||
	fail "$(malformed) requests logged as malformed, expected $dropped or more"

# (g) A slow reader: a request whose reply (JSON status of 4000 instances,
# several hundred KiB) does not fit in the socket, from a client that
# reads nothing until its stdin, a fifo, ends.  vigild must keep serving
# others meanwhile, then deliver the whole reply.
mkfifo "$T/slow.fifo"
exec 3<>"$T/slow.fifo"
"$HELPERS/sendraw" -t 10 "$SOCK" <"$T/slow.fifo" 2>"$T/slow.err" 3>&- &
slow=$!
track "$slow"
n=4000
{
	hdr 1 1 $((4 + 7 + 4)) && le 1 4 && printf 'status\0all\0'
} >&3
# Wait until the reply starts to fill sendraw's socket (the Recv-Q of
# its connection; a few hundred KiB at most fit, the rest waits in vigild).
slow_queued() {
	ss -xp 2>/dev/null |
		awk -v p="pid=$slow," 'index($0, p) && $3 > 0 { f = 1 }
			END { exit !f }'
}
if command -v ss >/dev/null 2>&1; then
	retry 10 slow_queued || fail "the slow client's reply did not queue up"
else
	log "no ss(8): not checking that the reply is queued"
fi
ctl ping >/dev/null || fail "ping blocked by a slow reader"
is_state a RUNNING || fail "status blocked by a slow reader"
exec 3>&-
rc=0
wait "$slow" || rc=$?
[ "$rc" -eq 0 ] || fail "slow reader: sendraw exited $rc: $(cat "$T/slow.err")"
log "slow: $(cat "$T/slow.err")"
[ "$(bytes_read slow)" -gt $((n * 100)) ] ||
	fail "slow reader got only $(bytes_read slow) bytes"

# Nothing else was disturbed.
ctl ping >/dev/null || fail "vigild no longer answers ping"
is_state a RUNNING || fail "a is $(state a), not RUNNING"
[ "$(job_pid a)" = "$pid" ] || fail "a was restarted: pid $(job_pid a), was $pid"
alive "$pid" || fail "a's process $pid is gone"
alive "$VIGILD_PID" || fail "vigild died"
stop_vigild
log "ok"
