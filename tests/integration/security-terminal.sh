#!/bin/bash
# shellcheck disable=SC2317 # predicates called through retry
# A job's user writes escape sequences where the operator will read them:
# its output (vigilctl tail, tail -f) and its STATUS= text (status).  On
# a terminal, vigilctl shows every control character vigild relays
# escaped (\x1b), whatever the command; --raw writes the bytes as vigild
# sent them; to a pipe, output stays byte for byte.  The terminal is a pty
# made by script(1).
. "$(dirname "$0")/lib.sh"

need_cmd script bsdutils
need_cmd systemd-notify systemd
script -qec true /dev/null </dev/null >/dev/null 2>&1 ||
	skip "script(1) cannot make a pty here (no /dev/pts?)"

# A title change, a bell, a screen clear and a C1 CSI (UTF-8 0xc2 0x9b).
cat >"$T/esc.sh" <<'EOF2'
#!/bin/sh
printf 'A\033]0;pwned\007B\033[2JC\302\2337mD\n'
exec sleep 1000
EOF2
cat >"$T/st.sh" <<'EOF2'
#!/bin/sh
systemd-notify --ready --status="$(printf 'S\033]0;pwned\007T')"
exec sleep 1000
EOF2
chmod 0755 "$T/esc.sh" "$T/st.sh"
job esc "command = \"$T/esc.sh\""
job st 'ready = "notify"' "command = \"$T/st.sh\""
start_vigild
wait_state esc RUNNING
wait_state st RUNNING
logged() { grep -q D "$LOGS/esc.log" 2>/dev/null; }
retry 10 logged || fail "esc wrote nothing"

ESC=$'\033'
# on_tty FILE ARGS...: vigilctl ARGS with a pty as its output, into FILE.
on_tty() {
	local out=$1 cmd
	shift
	printf -v cmd '%q ' "$VIGILCTL" -s "$SOCK" "$@"
	script -qec "$cmd" /dev/null </dev/null >"$out" 2>&1
}
has_raw_esc() { grep -q "$ESC" "$1"; }
no_raw_esc() { ! has_raw_esc "$1"; }
has_text() { grep -qF -- "$2" "$1"; }

on_tty "$T/tail" tail esc || true
check "tail on a tty: no raw ESC" no_raw_esc "$T/tail"
check "tail on a tty: escaped" \
	has_text "$T/tail" 'A\x1b]0;pwned\x07B\x1b[2JC\xc2\x9b7mD'
on_tty "$T/tail-raw" --raw tail esc || true
check "tail --raw on a tty: the bytes" has_raw_esc "$T/tail-raw"
ctl tail esc >"$T/tail-pipe" || fail "tail to a pipe failed"
check "tail to a pipe: byte for byte" \
	cmp -s <(tail -n 1 "$T/tail-pipe") \
	<(printf 'A\033]0;pwned\007B\033[2JC\302\2337mD\n')

on_tty "$T/status" status st || true
check "status on a tty: no raw ESC" no_raw_esc "$T/status"
check "status on a tty: STATUS= escaped" \
	has_text "$T/status" 'S\x1b]0;pwned\x07T'
on_tty "$T/status-json" --json status st || true
check "status --json on a tty: no raw ESC" no_raw_esc "$T/status-json"

# tail -f: what comes later is escaped too.
script -qefc "$(printf '%q ' "$VIGILCTL" -s "$SOCK" tail -f esc)" /dev/null \
	</dev/null >"$T/follow" 2>&1 &
FOLLOW=$!
track "$FOLLOW"
ctl restart esc >/dev/null || fail "restart failed"
twice() { [ "$(grep -cF 'A\x1b]0;pwned' "$T/follow")" -ge 2 ]; }
check "tail -f on a tty: a later line escaped" retry 10 twice
check "tail -f on a tty: no raw ESC" no_raw_esc "$T/follow"
kill "$FOLLOW" 2>/dev/null || true
wait "$FOLLOW" 2>/dev/null || true
checks_passed
stop_vigild
log "ok"
