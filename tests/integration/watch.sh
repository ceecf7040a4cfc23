#!/bin/bash
# watch = {...}: 50 changes in a watched directory within 200 ms are one
# restart, watch_delay after the last; a change in a new subdirectory too;
# a change in a path not watched, or to an editor's swap file, a .pyc or
# under .git, is none; a watched file replaced by a rename restarts it.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/app/.git" "$T/app/__pycache__" "$T/other" "$T/conf"
echo a >"$T/conf/app.ini"
job web 'command = "sleep 100000"' \
	"watch = {\"$T/app\", \"$T/conf/app.ini\"}" 'watch_delay = "300ms"'
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

# 50 changes within about 200 ms: one restart.
p=$(job_pid web)
track "$p"
t0=$(now_ms)
for i in $(seq 50); do
	echo "$i" >>"$T/app/main.py"
	sleep 0.004
done
t1=$(now_ms)
[ $((t1 - t0)) -lt 600 ] || log "the 50 writes took $((t1 - t0)) ms"
retry 5 dead "$p" || fail "web was not restarted"
wait_state web RUNNING
# Quiet for longer than watch_delay: no second restart comes.
sleep 1
[ "$(restarts)" -eq 1 ] || fail "$(restarts) restarts for one burst: $(cat "$VLOG")"
grep -q "web: [0-9]* changes under its watched paths (last: $T/app/main.py): restarting" "$VLOG" ||
	fail "no restart line: $(cat "$VLOG")"

# Ignored: swap files, .pyc, __pycache__, .git; a path not watched.
p=$(job_pid web)
track "$p"
touch "$T/app/.main.py.swp" "$T/app/main.py~" "$T/app/x.pyc" \
	"$T/app/__pycache__/main.cpython-311.pyc" "$T/app/.git/index" \
	"$T/other/file" "$T/conf/other.ini"
sleep 1
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

# An operator's stop is kept: a change does not start it.
ctl stop web >/dev/null || fail "stop web"
echo y >>"$T/app/main.py"
sleep 1
is_state web STOPPED || fail "a change started a stopped job: $(state web)"
stop_vigild
