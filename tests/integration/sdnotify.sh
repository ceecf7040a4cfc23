#!/bin/bash
# vigild towards systemd, with a listener as its NOTIFY_SOCKET: READY=1
# once the autostart jobs are launched, with STATUS= (counts) in the same
# message, STATUS= again as they change, RELOADING=1
# with MONOTONIC_USEC then READY=1 around a reload (SIGHUP), WATCHDOG=1
# pings when WATCHDOG_USEC is set, STOPPING=1 and EXTEND_TIMEOUT_USEC at
# shutdown.  No job sees this NOTIFY_SOCKET or WATCHDOG_USEC.
. "$(dirname "$0")/lib.sh"
need_helper dgram-listen

"$HELPERS/dgram-listen" "$T/systemd.sock" "$T/msgs" &
listener=$!
track "$listener"
retry 5 test -S "$T/systemd.sock" || fail "listener did not start"
has() { grep -q -- "$1" "$T/msgs" 2>/dev/null; }

job a 'command = "sleep 1000"' 'stop_timeout = "17s"'
job b 'command = "sleep 1000"' 'instances = 2'
NOTIFY_SOCKET=$T/systemd.sock WATCHDOG_USEC=300000 start_vigild
wait_state a RUNNING
# READY=1 comes with STATUS=: systemd's status line has the counts from
# the start (issue 38).
retry 5 has '^READY=1|STATUS=[0-9]* running, [0-9]* starting, ' ||
	fail "no READY=1 with STATUS=: $(cat "$T/msgs")"
retry 5 has '^STATUS=3 running, 0 starting, 0 backoff, 0 failed' ||
	fail "no STATUS= with counts: $(cat "$T/msgs")"
pings() { [ "$(grep -c '^WATCHDOG=1$' "$T/msgs")" -ge 4 ]; }
retry 5 pings || fail "no WATCHDOG=1 pings: $(cat "$T/msgs")"
env=$(tr '\0' '\n' <"/proc/$(job_pid a)/environ")
printf '%s\n' "$env" | grep -q '^NOTIFY_SOCKET=\|^WATCHDOG_' &&
	fail "a job got vigild's NOTIFY_SOCKET or WATCHDOG_*"

job c 'command = "sleep 1000"'
kill -HUP "$VIGILD_PID"
retry 5 has '^RELOADING=1|MONOTONIC_USEC=[0-9]' || fail "no RELOADING=1: $(cat "$T/msgs")"
wait_state c RUNNING
[ "$(grep -c '^READY=1' "$T/msgs")" -ge 2 ] || fail "no READY=1 after the reload"
retry 5 has '^STATUS=4 running' || fail "STATUS= not updated: $(tail -n 3 "$T/msgs")"

stop_vigild
has '^STOPPING=1$' || fail "no STOPPING=1"
has '^EXTEND_TIMEOUT_USEC=22000000$' || fail "no EXTEND_TIMEOUT_USEC: $(grep EXTEND "$T/msgs")"
log "ok"
