#!/bin/bash
# A broken job file is reported as FILE:LINE: message and skipped; the
# other jobs run.  vigild --check validates everything and exits 0 or 1.
. "$(dirname "$0")/lib.sh"

job good 'command = "sleep 1000"'
job broken 'command = "sleep 1000"' 'restart_dealy = "1s"'
job badval 'command = "sleep 1000"' '' 'stop_timeout = "ten seconds"'
printf 'not a job\n' >"$JOBS/README"
printf 'command = "x"\n' >"$JOBS/.hidden.conf"
printf 'command = "x"\n' >"$JOBS/old.conf~"

rc=0
"$VIGILD" -t -c "$T/vigil.conf" -j "$JOBS" >"$T/check.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "--check exited $rc with broken files"
grep -q "$JOBS/broken.conf:2: .*restart_dealy" "$T/check.out" ||
	fail "no FILE:LINE error for the unknown option: $(cat "$T/check.out")"
grep -q "$JOBS/badval.conf:3: stop_timeout" "$T/check.out" ||
	fail "no FILE:LINE error for the bad duration: $(cat "$T/check.out")"

start_vigild
wait_state good RUNNING
ctl status broken >/dev/null 2>&1 && fail "broken job was loaded"
rc=0
ctl status broken >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 4 ] || fail "status of a missing job exited $rc, expected 4"
grep -q "broken.conf:2:" "$VLOG" || fail "vigild did not report the broken file"
stop_vigild

rm "$JOBS/broken.conf" "$JOBS/badval.conf"
"$VIGILD" -t -c "$T/vigil.conf" -j "$JOBS" >"$T/check.out" 2>&1 ||
	fail "--check failed on valid files: $(cat "$T/check.out")"
# depends: unknown names and cycles are errors with FILE:LINE.
mkdir "$T/deps"
printf 'command = "sleep 1"\ndepends = {"b"}\n' >"$T/deps/a.conf"
printf 'command = "sleep 1"\n\ndepends = {"a"}\n' >"$T/deps/b.conf"
printf 'command = "sleep 1"\ndepends = {"nope"}\n' >"$T/deps/c.conf"
rc=0
"$VIGILD" -t -c "$T/vigil.conf" -j "$T/deps" >"$T/check.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "--check accepted bad depends"
grep -q "$T/deps/c.conf:2: depends: no such job \"nope\"" "$T/check.out" ||
	fail "unknown dependency: $(cat "$T/check.out")"
grep -q "$T/deps/b.conf:3: depends: dependency cycle" "$T/check.out" ||
	fail "cycle: $(cat "$T/check.out")"
log "ok"
