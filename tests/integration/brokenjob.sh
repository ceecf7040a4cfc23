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
grep -q "broken.conf:2:" "$VLOG" || fail "vigild did not report the broken file"
# A broken file shows in status as BROKEN with its FILE:LINE: message, and
# status of it exits 1 (not 4, no such job).
rc=0
ctl status broken >"$T/st" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "status of a broken job exited $rc, expected 1"
grep -Eq "^broken +BROKEN .*$JOBS/broken.conf:2: .*restart_dealy" "$T/st" ||
	fail "status broken: $(cat "$T/st")"
ctl status >"$T/all" 2>&1 || fail "status: $(cat "$T/all")"
grep -Eq "^badval +BROKEN .*badval.conf:3: stop_timeout" "$T/all" ||
	fail "status lacks badval: $(cat "$T/all")"
grep -Eq "^good +RUNNING" "$T/all" || fail "status lacks good: $(cat "$T/all")"
rc=0
ctl status nosuch >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 4 ] || fail "status of a missing job exited $rc, expected 4"
rc=0
ctl start broken >"$T/st" 2>&1 || rc=$?
[ "$rc" -eq 1 ] && grep -q "broken: BROKEN: .*broken.conf:2:" "$T/st" ||
	fail "start of a broken job exited $rc: $(cat "$T/st")"
if command -v jq >/dev/null; then
	ctl --json status >"$T/st.json" 2>&1 || true
	jq -e '[.jobs[] | select(.name == "broken")][0] |
	    .state == "BROKEN" and (.reason | test("broken.conf:2: "))' \
		"$T/st.json" >/dev/null || fail "status --json: $(cat "$T/st.json")"
fi
# A reload that fixes the files makes them normal jobs.
job broken 'command = "sleep 1000"'
rm "$JOBS/badval.conf"
ctl reload >/dev/null || fail "reload of fixed files failed"
wait_state broken RUNNING
ctl status >"$T/all" 2>&1 || fail "status: $(cat "$T/all")"
! grep -q BROKEN "$T/all" || fail "still BROKEN after the fix: $(cat "$T/all")"
# A reload that breaks a running job's file changes nothing (the job runs
# its previous config) and status names the error.
p=$(job_pid good)
job good 'command = "sleep 1000"' 'bogus = 1'
rc=0
ctl reload >"$T/st" 2>&1 || rc=$?
[ "$rc" -eq 1 ] && grep -q "reload: 1 error, nothing changed" "$T/st" ||
	fail "reload of a broken file exited $rc: $(cat "$T/st")"
[ "$(job_pid good)" = "$p" ] || fail "the broken reload touched good"
ctl status good >"$T/st" 2>&1 || fail "status good: $(cat "$T/st")"
grep -q "config error: .*good.conf:2: " "$T/st" ||
	fail "status good does not name the error: $(cat "$T/st")"
stop_vigild
job good 'command = "sleep 1000"'

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
