#!/bin/bash
# vigild's own log: levels (--log-level, log_level), a level word on
# stderr, and journald's "<N>" priority prefix only when JOURNAL_STREAM
# names the stream stderr really is.
. "$(dirname "$0")/lib.sh"

job good 'command = "sleep 1000"'
printf 'command = "sleep 1000"\nbogus = 1\n' >"$JOBS/broken.conf"

# run_once LOGFILE ARGS...: start vigild with stderr to LOGFILE, wait until
# good runs, stop it.
run_once() {
	local out=$1
	shift
	VLOG=$out start_vigild "$@"
	wait_state good RUNNING
	stop_vigild
}

# Default level info: info lines plain, warnings labelled.
run_once "$T/info.log"
grep -q '^vigild: vigild .* started: ' "$T/info.log" || fail "no info line: $(cat "$T/info.log")"
grep -q '^vigild: warning: 1 error in ' "$T/info.log" ||
	fail "warning not labelled: $(cat "$T/info.log")"
grep -q 'debug: ' "$T/info.log" && fail "debug lines at level info"

# Paths given as DIR/../DIR are printed tidied; the state.db line does not
# read like an error; "1 error", not "1 errors" (issue 17).
run_once "$T/paths.log" -j "$JOBS/../$(basename "$JOBS")/." \
	--state-dir "$STATE/./../$(basename "$STATE")"
grep -qx "vigild: state: $STATE/state.db" "$T/paths.log" ||
	fail "no tidy state line: $(cat "$T/paths.log")"
grep -q ': open$' "$T/paths.log" && fail "a line ends in ': open': $(cat "$T/paths.log")"
grep -q "^$JOBS/broken.conf:2: " "$T/paths.log" ||
	fail "the error does not give the tidy path: $(cat "$T/paths.log")"
grep -q "^vigild: warning: 1 error in $JOBS: " "$T/paths.log" ||
	fail "the warning does not give the tidy path: $(cat "$T/paths.log")"
grep -q '/\.\./\|/\./' "$T/paths.log" && fail "untidy paths: $(cat "$T/paths.log")"

# warn: no info lines.
run_once "$T/warn.log" --log-level warn
grep -q ' started: ' "$T/warn.log" && fail "info lines at level warn"
grep -q '^vigild: warning: ' "$T/warn.log" || fail "no warnings at level warn"

# debug, from vigil.conf.
printf 'log_level = "debug"\n' >"$T/vigil.conf"
run_once "$T/debug.log"
grep -q '^vigild: debug: ' "$T/debug.log" || fail "no debug lines with log_level = debug"
: >"$T/vigil.conf"

# A JOURNAL_STREAM that is stderr: "<N>" priorities, no program name.
: >"$T/journal.log"
JOURNAL_STREAM=$(stat -c '%d:%i' "$T/journal.log")
export JOURNAL_STREAM
run_once "$T/journal.log"
grep -q '^<6>vigild .* started: ' "$T/journal.log" || fail "no <6> info line: $(cat "$T/journal.log")"
grep -q '^<4>1 error in ' "$T/journal.log" || fail "no <4> warning line: $(cat "$T/journal.log")"
grep -q '^vigild: ' "$T/journal.log" && fail "plain lines on a journal stream"

# A JOURNAL_STREAM inherited but not stderr (stderr redirected): plain.
: >"$T/other.log"
JOURNAL_STREAM=$(stat -c '%d:%i' "$T/journal.log")
run_once "$T/other.log"
grep -q '^<' "$T/other.log" && fail "<N> prefixes on a stderr that is not the journal"
grep -q '^vigild: vigild .* started: ' "$T/other.log" || fail "no plain line: $(cat "$T/other.log")"
unset JOURNAL_STREAM
log "ok"
