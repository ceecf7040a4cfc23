#!/bin/bash
# Who may do what: with the default socket_mode 0600 only root (and
# vigild's user) can connect; with 0666 anyone may read but only members
# of socket_group may act.  State-changing requests are logged with the
# caller's uid.
. "$(dirname "$0")/lib.sh"
need_nobody
# vigilctl must be reachable by nobody too: not so in a build under a
# directory closed to others (such as /root).
setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
	test -x "$VIGILCTL" ||
	skip "user nobody cannot run $VIGILCTL (a directory on its path is closed to others)"

as_nobody() {
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
		"$VIGILCTL" -s "$SOCK" "$@"
}

job a 'command = "sleep 1000"'
start_vigild
wait_state a RUNNING
[ "$(stat -c %a "$SOCK")" = 600 ] || fail "socket mode is $(stat -c %a "$SOCK")"
rc=0
as_nobody status >/dev/null 2>"$T/err" || rc=$?
[ "$rc" -eq 69 ] || fail "nobody reached a 0600 socket (exit $rc)"
grep -q "permission denied (root and the members of vigil.conf.s socket_group may connect)" "$T/err" ||
	fail "unclear: $(cat "$T/err")"
stop_vigild

printf 'socket_mode = "0666"\n' >"$T/vigil.conf"
start_vigild
wait_state a RUNNING
p=$(job_pid a)
as_nobody status a >/dev/null || fail "nobody cannot read status"
rc=0
as_nobody stop a >/dev/null 2>"$T/err" || rc=$?
[ "$rc" -eq 1 ] || fail "nobody's stop exited $rc"
grep -q "stop: permission denied" "$T/err" || fail "unclear: $(cat "$T/err")"
[ "$(job_pid a)" = "$p" ] || fail "nobody's stop had an effect"
grep -q "uid $(id -u nobody): stop: permission denied" "$VLOG" || fail "refusal not logged"
stop_vigild

printf 'socket_group = "%s"\nsocket_mode = "0660"\n' "$(id -gn nobody)" >"$T/vigil.conf"
start_vigild
wait_state a RUNNING
[ "$(stat -c %a "$SOCK")" = 660 ] || fail "socket mode is $(stat -c %a "$SOCK")"
[ "$(stat -c %g "$SOCK")" = "$(id -g nobody)" ] || fail "socket group"
as_nobody stop a >/dev/null || fail "a socket_group member may not stop"
is_state a STOPPED || fail "stop by a group member did nothing"
grep -q "uid $(id -u nobody): stop" "$VLOG" || fail "request not logged with the uid"
stop_vigild
log "ok"
