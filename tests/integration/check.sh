#!/bin/bash
# vigild -t says everything (issue 38): every error of every file, each
# with its line, syntax errors (where libconfuse stops) as well as bad
# values, and a reload reports them the same way; and a warning (not an
# error: exit 0) for each job whose command cannot run: not found on the
# job's PATH (its environment's), not a file, not executable by the
# job's user.  A command that can run gives no warning.
. "$(dirname "$0")/lib.sh"

check_t() {
	local rc=0
	"$VIGILD" -t -c "$T/vigil.conf" -j "$JOBS" >"$T/check.out" 2>&1 || rc=$?
	echo "$rc"
}
has() {
	grep -qF -- "$1" "$T/check.out" || fail "vigild -t does not say '$1': $(cat "$T/check.out")"
}

# --- Every error of a file, in the order of its lines.
job many 'command = "sleep 1000"' 'bogus_one = 1' 'restart = "sometimes"' \
	'bogus_two = "x"' 'stop_timeout = "abc"'
job also 'command = "sleep 1000"' 'instances = "lots"' 'nope = {"a"}'
job good 'command = "sleep 1000"'
rc=$(check_t)
[ "$rc" -eq 1 ] || fail "vigild -t exited $rc with broken files: $(cat "$T/check.out")"
has "$JOBS/many.conf:2: no such option 'bogus_one'"
has "$JOBS/many.conf:3: restart: invalid value \"sometimes\""
has "$JOBS/many.conf:4: no such option 'bogus_two'"
has "$JOBS/many.conf:5: stop_timeout: invalid duration \"abc\""
has "$JOBS/also.conf:2: instances"
has "$JOBS/also.conf:3: no such option 'nope'"
has "$JOBS: 1 job valid, 6 errors"
[ "$(grep -c "many.conf:" "$T/check.out")" -eq 4 ] ||
	fail "many.conf: not exactly its 4 errors: $(cat "$T/check.out")"
# A brace left open: its error, and no more than a few after it.
printf 'command = {"sh", "-c",\n  "sleep 1000"\n  bogus = 2\n' >"$JOBS/open.conf"
rc=$(check_t)
[ "$rc" -eq 1 ] || fail "vigild -t exited $rc"
has "$JOBS/open.conf:3:"
[ "$(grep -c "open.conf:" "$T/check.out")" -le 3 ] ||
	fail "open.conf: a cascade of errors: $(cat "$T/check.out")"
rm "$JOBS/open.conf"

# --- A reload reports every error too, and changes nothing.
rm "$JOBS/many.conf" "$JOBS/also.conf"
start_vigild
wait_state good RUNNING
p=$(job_pid good)
job good 'command = "sleep 1000"' 'bogus_one = 1' 'stop_signal = "NOPE"' \
	'bogus_two = 2'
rc=0
ctl reload >"$T/reload.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "reload of a broken file exited $rc: $(cat "$T/reload.out")"
for want in "good.conf:2: no such option 'bogus_one'" "good.conf:3: stop_signal" \
	"good.conf:4: no such option 'bogus_two'" "reload: 3 errors, nothing changed"; do
	grep -qF -- "$want" "$T/reload.out" ||
		fail "reload does not say '$want': $(cat "$T/reload.out")"
done
[ "$(job_pid good)" = "$p" ] || fail "the rejected reload touched good"
stop_vigild

# --- Commands that cannot run: warnings, exit 0.
mkdir -p "$T/bin" "$T/work"
printf '#!/bin/sh\nexec sleep 1000\n' >"$T/bin/mine"
chmod 0755 "$T/bin/mine"
cp "$T/bin/mine" "$T/work/local"
chmod 0755 "$T/work/local"
cp "$T/bin/mine" "$T/rootonly"
chmod 0700 "$T/rootonly"
job good 'command = "sleep 1000"'
job missing 'command = "no-such-command-here --flag"'
job notexec "command = \"$T/vigil.conf\""
job dir "command = \"$T/bin\""
job ownpath 'command = "mine"' "environment = {\"PATH=$T/bin\"}"
job relative 'command = "./local"' "directory = \"$T/work\""
job absolute "command = \"$T/bin/mine\""
ids=
if id nobody >/dev/null 2>&1; then
	chmod 0755 "$T"
	job asnobody "command = \"$T/rootonly\"" 'user = "nobody"'
	job asroot "command = \"$T/rootonly\""
	ids=1
fi
rc=$(check_t)
[ "$rc" -eq 0 ] || fail "vigild -t exited $rc for warnings alone: $(cat "$T/check.out")"
has "$JOBS/missing.conf: warning: command: \"no-such-command-here\" is not found on the job's PATH"
has "$JOBS/notexec.conf: warning: command: $T/vigil.conf cannot run: not executable"
has "$JOBS/dir.conf: warning: command: $T/bin cannot run: not a regular file"
n=3
if [ -n "$ids" ]; then
	has "$JOBS/asnobody.conf: warning: command: $T/rootonly cannot run: not executable by the job's user"
	n=4
fi
has ", 0 errors, $n warnings"
[ "$(grep -c 'warning:' "$T/check.out")" -eq "$n" ] ||
	fail "not exactly $n warnings (the others can run): $(cat "$T/check.out")"
# The job whose PATH is its own is found there, and not on the default.
job ownpath 'command = "mine"'
rc=$(check_t)
has "$JOBS/ownpath.conf: warning: command: \"mine\" is not found on the job's PATH"
log "ok"
