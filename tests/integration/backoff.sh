#!/bin/bash
# A crash loop: the delays vigild chooses between starts grow (100ms,
# 200ms, 400ms, ... give or take 10 %), no start comes before its delay,
# and the job never stops being retried; with max_restarts it turns
# FATAL.  A busy machine makes gaps longer, never shorter: the gaps are
# checked against the delays chosen, not against each other.
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
# The delays chosen, in ms: "crash: restarting in 91.012ms (failed start 1)".
mapfile -t d < <(sed -n 's/^vigild: crash: restarting in \([0-9.]*\)\(ms\|s\|us\) (failed start [0-9]*)$/\1 \2/p' "$VLOG" |
	awk '{ v = $1; if ($2 == "s") v *= 1000; else if ($2 == "us") v /= 1000; printf "%d\n", v }')
[ "${#d[@]}" -ge 5 ] || fail "fewer than 5 delays in the log: $(grep 'crash: restarting' "$VLOG")"
prev=0
for i in 1 2 3 4 5; do
	gap=$(((s[i] - s[i - 1]) / 1000000))
	want=${d[i - 1]}
	expect=$((100 << (i - 1)))
	log "gap $i: ${gap} ms after a delay of $want ms (~$expect)"
	[ "$want" -ge $((expect * 89 / 100)) ] && [ "$want" -le $((expect * 111 / 100)) ] ||
		fail "delay $i is $want ms, expected $expect ms give or take 10 %"
	[ "$want" -gt "$prev" ] || fail "delay $i ($want ms) did not grow"
	[ "$gap" -ge $((want * 95 / 100)) ] || fail "start $((i + 1)) came $gap ms after the last, before its delay of $want ms"
	prev=$want
done
st=$(state crash)
case $st in BACKOFF | STARTING | RUNNING) ;; *) fail "crash is $st" ;; esac
ctl status crash | grep -q 'next start in' || [ "$st" != BACKOFF ] ||
	fail "status does not show the next start"
ctl --json status crash | grep -q '"state":"\(BACKOFF\|STARTING\|RUNNING\)"' ||
	fail "json status"
stop_vigild
log "ok"
