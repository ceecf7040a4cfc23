#!/bin/bash
# A crash loop: delays between starts grow (100ms, 200ms, 400ms, ...) and
# the job never stops being retried; with max_restarts it turns FATAL.
. "$(dirname "$0")/lib.sh"

job crash "command = {\"sh\", \"-c\", \"date +%s%N >> $T/starts; exit 1\"}"
job giveup 'command = "false"' 'max_restarts = 2' 'restart_delay = "10ms"'
start_vigild

wait_state giveup FATAL 10
r=$(ctl status giveup | awk 'NR == 2 { print $5 }')
[ "$r" = 2 ] || fail "giveup: $r restarts before FATAL, expected 2"

# Six starts need 0.1 + 0.2 + 0.4 + 0.8 + 1.6 s, give or take 10%.
six_starts() { [ "$(wc -l 2>/dev/null <"$T/starts")" -ge 6 ] 2>/dev/null; }
retry 15 six_starts || fail "fewer than 6 starts"
mapfile -t s <"$T/starts"
prev=0
for i in 1 2 3 4 5; do
	gap=$(((s[i] - s[i - 1]) / 1000000))
	log "gap $i: ${gap} ms"
	expect=$((100 << (i - 1)))
	[ "$gap" -ge $((expect * 85 / 100)) ] || fail "gap $i is $gap ms, expected ~$expect"
	[ "$gap" -gt "$prev" ] || fail "gap $i ($gap ms) did not grow"
	prev=$gap
done
st=$(state crash)
case $st in BACKOFF | STARTING | RUNNING) ;; *) fail "crash is $st" ;; esac
ctl status crash | grep -q 'next start in' || [ "$st" != BACKOFF ] ||
	fail "status does not show the next start"
ctl --json status crash | grep -q '"state":"\(BACKOFF\|STARTING\|RUNNING\)"' ||
	fail "json status"
stop_vigild
log "ok"
