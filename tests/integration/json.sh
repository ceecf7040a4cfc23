#!/bin/bash
# --json on every read command: one JSON document with the documented
# field names, parsed with jq.
# vigilctl is the subject: LeakSanitizer checks it too (lib.sh).
VIGIL_CTL_LEAKS=1
. "$(dirname "$0")/lib.sh"
need_cmd jq jq

job a 'command = "sleep 1000"'
job two 'command = "sleep 1000"' 'instances = 2'
job bad 'command = "false"' 'restart_delay = "10s"'
start_vigild
wait_state a RUNNING
wait_state bad BACKOFF

ctl --json status >"$T/s.json" || fail "status --json"
jq -e '.jobs | length == 4' "$T/s.json" >/dev/null || fail "not 4 entries: $(cat "$T/s.json")"
jq -e --arg p "$(job_pid a)" '.jobs[] | select(.name == "a") |
	.job == "a" and .instance == 0 and .state == "RUNNING" and
	(.pid | tostring) == $p and (.uptime_s | type) == "number" and
	.restarts == 0 and .last_exit == null and .last_end == null and
	.reason == null' \
	"$T/s.json" >/dev/null || fail "fields of a: $(cat "$T/s.json")"
jq -e '.jobs[] | select(.name == "two@1") | .job == "two" and .instance == 1' \
	"$T/s.json" >/dev/null || fail "instance fields"
jq -e '.jobs[] | select(.name == "bad") | .state == "BACKOFF" and
	.pid == null and .last_exit == "exit 1" and .last_end == "exited 1" and
	.failures >= 1 and
	.delay_s > 0 and .next_start_s >= 0 and (.reason | test("exit 1"))' \
	"$T/s.json" >/dev/null || fail "fields of bad: $(cat "$T/s.json")"

rc=0
ctl --json status bad >"$T/b.json" || rc=$?
[ "$rc" -eq 3 ] || fail "status --json of a job not running exited $rc"
jq -e '.jobs | length == 1' "$T/b.json" >/dev/null || fail "status bad"

ctl --json pid | jq -e --arg p "$VIGILD_PID" '(.pid | tostring) == $p' >/dev/null ||
	fail "pid --json"
ctl --json pid two | jq -e '.pids | length == 2 and all(.pid > 0)' >/dev/null ||
	fail "pid --json two"
ctl --json version | jq -e '.version | test("^[0-9]")' >/dev/null || fail "version --json"
ctl --json ping | jq -e '.pong == true' >/dev/null || fail "ping --json"
ctl --json list-commands | jq -e '[.commands[].name] | index("status") != null' >/dev/null ||
	fail "list-commands --json"
job c 'command = "sleep 1000"'
ctl --json reload --dry-run | jq -e '.applied == false and .added == ["c"] and
	.changed == [] and .removed == [] and .unchanged == 3' >/dev/null ||
	fail "reload --dry-run --json"
stop_vigild
log "ok"
