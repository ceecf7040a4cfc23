#!/bin/bash
# shellcheck disable=SC2317 # predicates called through retry
# Alerts with state (issue 38): a job that fails for ever is said to be
# failing once and in a crash loop once (its restart delay at
# restart_delay_max), then reminded at most every alert_repeat, not at
# every attempt; it is said to have recovered once a run lasts min_uptime
# again.  on_failure and on_event hear the same.  A restart of vigild in
# the middle starts neither the alerts nor the backoff over.  (A crash
# loop of minutes, compressed: delays of milliseconds, alert_repeat 3 s.)
# With start_limit, a service gives up at its Nth failed start within the
# interval.
. "$(dirname "$0")/lib.sh"

cat >"$T/vigil.conf" <<EOF
on_event = {"sh", "-c", "case \$VIGIL_EVENT in state) ;; *) echo \"\$VIGIL_EVENT \$VIGIL_JOB \$VIGIL_FAILURES\" >>$T/events;; esac"}
EOF
job flap "command = {\"sh\", \"-c\", \"[ -e $T/fix ] && exec sleep 100000; exit 3\"}" \
	'restart_delay = "20ms"' 'restart_delay_max = "300ms"' 'min_uptime = "1s"' \
	'alert_repeat = "3s"' \
	"on_failure = {\"sh\", \"-c\", \"echo \$(date +%s%N) \$VIGIL_EVENT \$VIGIL_FAILURES \$VIGIL_FAILING_SINCE >>$T/alerts\"}"
# start_limit: a service that should give up does, at its third failed
# start within a minute (FATAL, said); the default never gives up.
job giveup 'command = "false"' 'restart_delay = "10ms"' 'start_limit = "3/1m"' \
	"on_failure = {\"sh\", \"-c\", \"echo \$VIGIL_EVENT >>$T/giveup\"}"
start_vigild

said() { grep -c " $1 " "$T/alerts" 2>/dev/null || true; }
said_at_least() { [ "$(said "$1")" -ge "$2" ]; }
failures() { awk 'END { print $3 }' "$T/alerts"; }

# --- The loop: failing, crash-loop, then reminders 3 s apart.
retry 30 said_at_least still-failing 2 || fail "no two reminders: $(cat "$T/alerts" 2>/dev/null)"
n=$(failures)
[ "$(said failing)" = 1 ] || fail "failing said $(said failing) times: $(cat "$T/alerts")"
[ "$(said crash-loop)" = 1 ] || fail "crash-loop said $(said crash-loop) times: $(cat "$T/alerts")"
[ "$n" -ge 15 ] || fail "only $n failed runs: the job did not loop"
alerts=$(wc -l <"$T/alerts")
[ "$alerts" -le 5 ] || fail "$alerts alerts for $n failed runs: $(cat "$T/alerts")"
# Reminders at least alert_repeat after the alert before them.  The
# stamps are the hooks' own, taken when each hook ran: a hook that a busy
# machine started 66 ms late made the next gap 2.997 s; 250 ms is left for
# that (a reminder per failure would come every 300 ms at most).
awk '$2 == "still-failing" && $1 - prev < 2750000000 { bad = 1; print "too soon:", $0 } { prev = $1 } END { exit bad }' \
	"$T/alerts" || fail "a reminder came early: $(cat "$T/alerts")"
grep -q "crash-loop [0-9]* 20[0-9-]*T" "$T/alerts" || fail "no VIGIL_FAILING_SINCE: $(cat "$T/alerts")"
grep -q "flap: crash loop: .* restarted every 300ms" "$VLOG" || fail "the crash loop is not in the log"
ctl status flap | grep -q "^  in a crash loop since 20[0-9T:.+-]*: [0-9]* failed runs$" ||
	fail "status does not say it: $(ctl status flap)"
[ "$(ctl --json status flap | jq -r '.jobs[0].alert')" = crash-loop ] ||
	fail "status --json: $(ctl --json status flap | jq -c '.jobs[0]')"
log "$n failed runs, $alerts alerts: $(awk '{ print $2 }' "$T/alerts" | tr '\n' ' ')"

wait_state giveup FATAL
[ "$(grep -c 'giveup: started pid' "$VLOG")" = 3 ] ||
	fail "giveup started $(grep -c 'giveup: started pid' "$VLOG") times, not 3"
grep -q "giveup: gave up: 3 failed starts within 1m (start_limit); vigilctl start giveup tries again" "$VLOG" ||
	fail "giving up is not said: $(grep giveup "$VLOG")"
fatal_said() { grep -qx fatal "$T/giveup" 2>/dev/null; }
retry 10 fatal_said || fail "no fatal alert: $(cat "$T/giveup" 2>/dev/null)"
printf 'kind = "periodic"\nevery = "1h"\ncommand = "true"\nstart_limit = "3/1m"\n' >"$T/p.conf"
mkdir -p "$T/pj" && mv "$T/p.conf" "$T/pj/p.conf"
printf 'command = "true"\nstart_limit = "3"\n' >"$T/pj/q.conf"
! "$VIGILD" -t -c "$T/vigil.conf" -j "$T/pj" >"$T/check.out" 2>&1 || fail "vigild -t took a bad start_limit"
grep -q 'p.conf:4: start_limit: not valid for kind "periodic"' "$T/check.out" &&
	grep -q 'q.conf:2: start_limit: invalid value "3"' "$T/check.out" ||
	fail "vigild -t: $(cat "$T/check.out")"

# --- A restart of vigild: no new burst of alerts, the backoff goes on.
before=$(wc -l <"$T/alerts")
stop_vigild
start_vigild
# One status, taken while it backs off (between, it is STARTING).
backing_off() {
	st=$(ctl status flap)
	again=$(sed -n 's/.*, \([0-9]*\) failed starts in a row.*/\1/p' <<<"$st")
	[ -n "$again" ]
}
retry 10 backing_off || fail "flap does not back off: $(ctl status flap)"
[ "$again" -gt "$n" ] || fail "after the restart, the failures start over: $again (before: $n)"
grep -q "(delay 2[0-9][0-9]ms\|(delay 300ms" <<<"$st" ||
	fail "after the restart, the delay starts over: $st"
grep -q "flap: in a crash loop since before this vigild started" "$VLOG" || fail "the resume is not in the log"
new=$(tail -n +"$((before + 1))" "$T/alerts" | awk '{ print $2 }' | grep -v still-failing || true)
[ -z "$new" ] || fail "after the restart: $new"

# --- Fixed: recovered once a run lasts min_uptime (1 s).
touch "$T/fix"
recovered() { [ "$(said recovered)" = 1 ]; }
retry 20 recovered || fail "no recovered: $(cat "$T/alerts")"
[ "$(is_state flap RUNNING && echo y)" = y ] || fail "flap is $(state flap)"
# on_event heard the same transitions (not one per attempt).
for e in failing crash-loop recovered; do
	[ "$(grep -c "^$e flap " "$T/events" || true)" = 1 ] || fail "on_event: $e: $(cat "$T/events")"
done
! ctl status flap | grep -q 'failed starts in a row\|failed runs' || fail "still failing: $(ctl status flap)"
[ "$(ctl --json status flap | jq -r '.jobs[0].alert')" = null ] || fail "status --json after the recovery"
stop_vigild
log "alerts: $(awk '{ print $2 }' "$T/alerts" | tr '\n' ' ')"
