#!/bin/bash
# SIGKILL of vigild in the middle of 200 messages, then a new vigild: every
# message is worked at least once, none is lost, none is dead.  A leftover
# run that survived (it ignores the parent-death signal) still holds its
# slot: it is reclaimed before its message is given out again.
. "$(dirname "$0")/lib.sh"

cat >"$T/work.sh" <<EOF
#!/bin/sh
trap '' TERM
p=\$(cat)
if [ "\$p" = long ] && [ "\$VIGIL_ATTEMPT" = 1 ]; then
	echo \$\$ >"$T/leftover.pid"
	# Past the kill of vigild, however slow the machine.
	exec sleep $((60 * VIGIL_TEST_SLOW))
fi
if [ "\$p" = long ]; then
	# Alive and not a zombie: a zombie runs nothing and holds no lock.
	st=\$(sed -n 's/^.*) \([A-Za-z]\).*\$/\1/p' "/proc/\$(cat "$T/leftover.pid")/stat" 2>/dev/null)
	if [ -n "\$st" ] && [ "\$st" != Z ]; then
		echo alive >"$T/leftover-state"
	else
		echo gone >"$T/leftover-state"
	fi
fi
sleep 0.02
echo "\$VIGIL_MESSAGE_ID" >>"$T/done"
EOF
chmod +x "$T/work.sh"
job crash 'kind = "queue"' 'concurrency = 4' 'stop_timeout = "500ms"' \
	"command = \"$T/work.sh\""
start_vigild

: >"$T/done"
ids=$(ctl enqueue crash long)
for i in $(seq 2 200); do
	ids="$ids $(ctl enqueue crash "m$i")" || fail "enqueue $i"
done
done_at_least() { [ "$(wc -l <"$T/done")" -ge "$1" ]; }
exists() { [ -s "$1" ]; }
retry 30 done_at_least 50 || fail "only $(wc -l <"$T/done") done"
retry 10 exists "$T/leftover.pid" || fail "the long message never started"
leftover=$(cat "$T/leftover.pid")
track "$leftover"
kill -KILL "$VIGILD_PID"
wait "$VIGILD_PID" 2>/dev/null || true
VIGILD_PID=
n=$(wc -l <"$T/done")
log "vigild killed after $n of 200 messages"
alive "$leftover" || fail "the leftover did not survive (it ignores TERM)"
[ "$(sqlite3 "$STATE/state.db" "SELECT count(*) FROM queue WHERE job = 'crash' AND state = 1")" -ge 1 ] ||
	fail "no message left running in state.db"

start_vigild
empty() { [ "$(ctl --json queue crash | jq '.queues[0] | .available + .delayed + .running + .dead')" = 0 ]; }
retry 60 empty || fail "queue not empty: $(ctl queue crash)"
dead "$leftover" || fail "leftover pid $leftover still alive"
[ "$(cat "$T/leftover-state" 2>/dev/null)" = gone ] ||
	fail "the long message ran again while its leftover was $(cat "$T/leftover-state" 2>/dev/null)"
for id in $ids; do
	grep -qx "$id" "$T/done" || fail "message $id was never done"
done
[ "$(sort -u "$T/done" | wc -l)" = 200 ] || fail "$(sort -u "$T/done" | wc -l) distinct messages done"
grep -q 'messages left running by an earlier vigild are available again' "$VLOG" ||
	fail "no recovery in the log"
grep -Eq 'lock held by leftover|its cgroup holds pid' "$VLOG" ||
	fail "the leftover was not reclaimed"
log "$(wc -l <"$T/done") runs for 200 messages"
stop_vigild
