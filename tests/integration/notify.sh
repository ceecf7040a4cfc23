#!/bin/bash
# Readiness for jobs (ready = "notify"), as systemd offers it: READY=1 on
# RUNTIME/notify.sock makes a job RUNNING, STATUS= shows in status, a late
# WATCHDOG=1 restarts the job, no READY=1 within ready_timeout is a failed
# start, MAINPID= hands the run to a forked daemon, datagrams from outside
# a job are ignored, and vigild's own NOTIFY_SOCKET never reaches a job.
. "$(dirname "$0")/lib.sh"
need_cmd systemd-notify systemd
need_helper sendraw

job waiter "command = {\"sh\", \"-c\", \"while [ ! -e $T/go ]; do sleep 0.02; done; systemd-notify --ready --status='all set'; echo \$? > $T/notify.rc; exec sleep 1000\"}" \
	'ready = "notify"'
job dependent 'command = "sleep 1001"' 'depends = {"waiter"}'
job plain 'command = "sleep 1002"'
job dog "command = {\"sh\", \"-c\", \"systemd-notify --ready; exec sleep 1000\"}" \
	'ready = "notify"' 'watchdog = "400ms"' 'restart_delay = "50ms"'
job fed "command = {\"sh\", \"-c\", \"systemd-notify --ready; while :; do systemd-notify WATCHDOG=1; sleep 0.1; done\"}" \
	'ready = "notify"' 'watchdog = "1s"'
job mute 'command = "sleep 1003"' 'ready = "notify"' 'ready_timeout = "300ms"' \
	'restart_delay = "10s"'
job forker "command = {\"sh\", \"-c\", \"sleep 1004 & systemd-notify --ready MAINPID=\$!; exit 0\"}" \
	'ready = "notify"'

# vigild's own NOTIFY_SOCKET (from systemd) is not a job's.
NOTIFY_SOCKET=$T/systemd-notify.sock start_vigild --log-level debug

# Not ready until it says so; its dependent waits.
wait_state waiter STARTING
wp=$(job_pid waiter)
rc=0
ctl wait --timeout 300ms waiter >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "waiter became RUNNING without READY=1"
is_state dependent STARTING || fail "dependent is $(state dependent) before waiter is ready"
ctl status dependent | grep -q "waiting for waiter" || fail "dependent does not say why it waits"
# A READY=1 from outside the job is ignored.
NOTIFY_SOCKET=$RUN/notify.sock systemd-notify --ready --status=intruder || true
rc=0
ctl wait --timeout 300ms waiter >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "a datagram from outside the job made it RUNNING"
tr '\0' '\n' <"/proc/$wp/environ" | grep -qx "NOTIFY_SOCKET=$RUN/notify.sock" ||
	fail "the job did not get vigild's notify.sock"
pp=$(job_pid plain)
tr '\0' '\n' <"/proc/$pp/environ" | grep -q "^NOTIFY_SOCKET=" &&
	fail "a ready = exec job got a NOTIFY_SOCKET"
tr '\0' '\n' <"/proc/$pp/environ" | grep -q "systemd-notify.sock" &&
	fail "vigild's own NOTIFY_SOCKET leaked to a job"

t0=$(now_ms)
touch "$T/go"
wait_state waiter RUNNING
wait_state dependent RUNNING
log "READY=1 to RUNNING of waiter and its dependent: $(($(now_ms) - t0)) ms"
ctl status waiter | grep -q "status: all set" || fail "STATUS= not shown: $(ctl status waiter)"
ctl --json status waiter | grep -q '"status":"all set"' || fail "STATUS= not in JSON"
# systemd-notify's BARRIER=1 fd was closed at once: it did not block 5 s.
retry 3 test -s "$T/notify.rc" || fail "systemd-notify still blocked"
[ "$(cat "$T/notify.rc")" = 0 ] || fail "systemd-notify failed: $(cat "$T/notify.rc")"
# The dependent started only after the dependency was ready.
ds=$(awk '{ print $22 }' "/proc/$(job_pid dependent)/stat")
ws=$(awk '{ print $22 }' "/proc/$(job_pid waiter)/stat")
[ "$ds" -ge "$ws" ] || fail "dependent started before waiter"

# The watchdog: silence restarts the job; regular pings keep it.
restarted() { [ "$(ctl status dog | awk 'NR == 2 { print $5 }')" -ge 1 ]; }
retry 10 restarted || fail "a silent watchdog job was not restarted"
grep -q "dog: no WATCHDOG=1 within" "$VLOG" || fail "no watchdog message"
fp=$(job_pid fed)
rc=0
ctl wait --state BACKOFF --timeout 2500ms fed >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 1 ] && [ "$(job_pid fed)" = "$fp" ] || fail "a pinging job was restarted"

# No READY=1 within ready_timeout: a failed start, with the reason.
wait_state mute BACKOFF 10
ctl status mute | grep -q "ready timeout" || fail "mute: $(ctl status mute)"

# MAINPID=: the forked daemon carries the run after its parent exits.
wait_state forker RUNNING
main_is_sleep() { grep -q 1004 "/proc/$(job_pid forker)/cmdline" 2>/dev/null; }
retry 5 main_is_sleep || fail "the main pid did not move to the daemon"
is_state forker RUNNING || fail "forker is $(state forker)"
fk=$(job_pid forker)
ctl stop forker >/dev/null
dead "$fk" || fail "stopping forker left its daemon"

# Garbage is ignored and vigild still answers.
printf 'garbage\0\377' | "$HELPERS/sendraw" -d "$RUN/notify.sock" || fail "sendraw -d"
retry 5 grep -q "notify: datagram from pid .* ignored" "$VLOG" || fail "garbage not counted"
ctl ping >/dev/null || fail "vigild does not answer"

# Shutdown stops the dependent before its dependency.
stop_vigild
dl=$(grep -n "dependent: pid .* stopped" "$VLOG" | cut -d: -f1)
wl=$(grep -n "waiter: pid .* stopped" "$VLOG" | cut -d: -f1)
[ -n "$dl" ] && [ -n "$wl" ] && [ "$dl" -lt "$wl" ] ||
	fail "shutdown did not stop the dependent first ($dl, $wl)"
log "ok"
