#!/bin/bash
# watch = {...}: 50 changes in a watched directory, each within
# watch_delay of the last, are one restart, watch_delay after the last (a
# writer held up longer than watch_delay between two, as on a busy
# machine, may see two: it says so, and the test counts its pauses); a
# change in a new subdirectory too;
# a change in a path not watched, or to an editor's swap file, a .pyc or
# under .git, is none; a watched file replaced by a rename restarts it.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/app/.git" "$T/app/__pycache__" "$T/other" "$T/conf"
echo a >"$T/conf/app.ini"
# watch_delay: 300 ms, VIGIL_TEST_SLOW times that on a busy machine.
DELAY_MS=$((300 * VIGIL_TEST_SLOW))
nap_ms() { sleep "$(($1 / 1000)).$(printf %03d $(($1 % 1000)))"; }
# quiet N: N times watch_delay, for a change that must not restart (a
# restart would come watch_delay after it).
quiet() { nap_ms $(($1 * DELAY_MS)); }
job web 'command = "sleep 100000"' \
	"watch = {\"$T/app\", \"$T/conf/app.ini\"}" "watch_delay = \"${DELAY_MS}ms\""
job calm 'command = "sleep 100000"'
# crashy crashes until "fixed" exists: FATAL, then a saved fix starts it.
mkdir -p "$T/crashsrc"
job crashy "command = {\"sh\", \"-c\", \"[ -e $T/fixed ] || exit 1; exec sleep 100000\"}" \
	"watch = {\"$T/crashsrc\", \"$T/later\"}" 'max_restarts = 1' \
	'restart_delay = "10ms"' 'watch_delay = "100ms"'
start_vigild
wait_state web RUNNING
wait_state calm RUNNING
calm=$(job_pid calm)
restarts() { grep -c "web: .* under its watched paths" "$VLOG" || true; }

# 50 changes, 4 ms apart: one restart, unless the writer itself was held
# up for watch_delay or longer between two (then one more per pause, at
# most).  The pauses are measured by the writer, from bash's own clock.
p=$(job_pid web)
track "$p"
t0=${EPOCHREALTIME/./}
prev=$t0 pauses=0 maxgap=0
for i in $(seq 50); do
	echo "$i" >>"$T/app/main.py"
	now=${EPOCHREALTIME/./}
	gap=$(((now - prev) / 1000))
	[ "$gap" -le "$maxgap" ] || maxgap=$gap
	[ "$gap" -lt "$DELAY_MS" ] || pauses=$((pauses + 1))
	prev=$now
	sleep 0.004
done
log "the 50 writes took $(((prev - t0) / 1000)) ms, the longest gap $maxgap ms ($pauses of watch_delay or more)"
retry 5 dead "$p" || fail "web was not restarted"
wait_state web RUNNING
# Quiet for longer than watch_delay: no second restart comes.
quiet 3
[ "$(restarts)" -ge 1 ] && [ "$(restarts)" -le $((1 + pauses)) ] ||
	fail "$(restarts) restarts for one burst (the writer paused $pauses times for watch_delay or more): $(cat "$VLOG")"
grep -q "web: [0-9]* changes under its watched paths (last: $T/app/main.py): restarting" "$VLOG" ||
	fail "no restart line: $(cat "$VLOG")"

# Ignored: swap files, .pyc, __pycache__, .git; a path not watched.
p=$(job_pid web)
track "$p"
touch "$T/app/.main.py.swp" "$T/app/main.py~" "$T/app/x.pyc" \
	"$T/app/__pycache__/main.cpython-311.pyc" "$T/app/.git/index" \
	"$T/other/file" "$T/conf/other.ini"
quiet 3
[ "$(job_pid web)" = "$p" ] || fail "an ignored change restarted web: $(tail -n 3 "$VLOG")"
[ "$(restarts)" -eq 1 ] || fail "an ignored change counted"

# A new subdirectory is followed.
mkdir "$T/app/pkg"
retry 5 dead "$p" || fail "making a subdirectory did not restart web"
wait_state web RUNNING
sleep 0.5
p=$(job_pid web)
track "$p"
echo x >"$T/app/pkg/mod.py"
retry 5 dead "$p" || fail "a change in the new subdirectory did not restart web"
wait_state web RUNNING

# A watched file replaced by rename (as editors save).
p=$(job_pid web)
track "$p"
echo b >"$T/conf/app.ini.new"
mv "$T/conf/app.ini.new" "$T/conf/app.ini"
retry 5 dead "$p" || fail "replacing the watched file did not restart web"
wait_state web RUNNING
[ "$(job_pid calm)" = "$calm" ] || fail "a job without watch was restarted"

# A crashed (FATAL) job is started again by a change: the fix.
wait_state crashy FATAL
touch "$T/fixed"
echo fix >"$T/crashsrc/app.py"
wait_state crashy RUNNING
# A watched path that did not exist, made a directory: its files count.
p=$(job_pid crashy)
track "$p"
mkdir "$T/later"
retry 5 dead "$p" || fail "making the watched directory did not restart crashy"
wait_state crashy RUNNING
p=$(job_pid crashy)
track "$p"
echo z >"$T/later/x.py"
retry 5 dead "$p" || fail "a change in the directory made later did not restart crashy"

# vigild held up (SIGSTOP) past watch_delay after a change it had read,
# with a second change waiting in the kernel: on waking, its wait is due
# and the second change unread; both are one restart (the second change
# is read before the wait ends, and the restart starts what it wrote).
wait_state web RUNNING
p=$(job_pid web)
track "$p"
n0=$(restarts)
echo held1 >>"$T/app/main.py"
nap_ms $((DELAY_MS / 3)) # (vigild reads it within ms, not always)
kill -STOP "$VIGILD_PID"
quiet 2
echo held2 >>"$T/app/main.py"
kill -CONT "$VIGILD_PID"
retry 5 dead "$p" || fail "web was not restarted after vigild's pause"
wait_state web RUNNING
quiet 3
[ "$(restarts)" -eq $((n0 + 1)) ] ||
	fail "$(($(restarts) - n0)) restarts for two changes vigild found at once: $(tail -n 8 "$VLOG")"

# An operator's stop is kept: a change does not start it.
ctl stop web >/dev/null || fail "stop web"
echo y >>"$T/app/main.py"
quiet 3
is_state web STOPPED || fail "a change started a stopped job: $(state web)"
stop_vigild
