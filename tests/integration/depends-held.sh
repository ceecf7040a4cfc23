#!/bin/bash
# A start that would wait for a dependency the operator stopped is refused
# at once (exit 1, who stopped it and when), for start and restart, also
# through another job; --with-deps starts that dependency too.
. "$(dirname "$0")/lib.sh"

job postgres 'command = "sleep 1000"'
job web 'command = "sleep 1001"' 'depends = {"postgres"}'
job mid 'command = "sleep 1002"' 'depends = {"postgres"}' 'autostart = false'
job api 'command = "sleep 1003"' 'depends = {"mid"}' 'autostart = false'
start_vigild
wait_state postgres RUNNING
wait_state web RUNNING

ctl stop postgres >/dev/null || fail "stop postgres failed"
wait_state postgres STOPPED

# bounded EXPECTED COMMAND...: vigilctl must answer within 5 s.
bounded() {
	local want=$1 got=0
	shift
	timeout "$(slow_s 5)" "$VIGILCTL" -s "$SOCK" "$@" >"$T/out" 2>"$T/err" || got=$?
	[ "$got" -ne 124 ] || fail "vigilctl $* hung"
	[ "$got" -eq "$want" ] ||
		fail "vigilctl $* exited $got, expected $want: $(cat "$T/out" "$T/err")"
}
msg='depends on postgres, stopped by uid [0-9]* at [0-9T:.-]*[+-][0-9][0-9]:[0-9][0-9]; start it first or use --with-deps'

bounded 1 restart web
grep -qx "web: $msg" "$T/err" || fail "restart web said: $(cat "$T/err")"
is_state web RUNNING || fail "a refused restart touched web: $(state web)"
bounded 1 restart --no-wait web
grep -qx "web: $msg" "$T/err" || fail "restart --no-wait web said: $(cat "$T/err")"
# start of what already runs does nothing and is fine.
bounded 0 start web
ctl stop web >/dev/null
bounded 1 start web
grep -qx "web: $msg" "$T/err" || fail "start web said: $(cat "$T/err")"
is_state web STOPPED || fail "a refused start touched web: $(state web)"
# Through another job, itself simply stopped.
bounded 1 start api
grep -qx "api: $msg" "$T/err" || fail "start api said: $(cat "$T/err")"
is_state mid STOPPED || fail "a refused start touched mid: $(state mid)"
# Named among the targets, the dependency starts with them.
bounded 0 start web postgres
ctl stop web postgres >/dev/null

bounded 0 restart --with-deps api
is_state api RUNNING || fail "api is $(state api)"
is_state mid RUNNING || fail "mid is $(state mid)"
is_state postgres RUNNING || fail "postgres is $(state postgres)"
ctl status postgres | grep -q "started by uid" ||
	fail "postgres was not started by hand: $(ctl status postgres)"
stop_vigild
