# shellcheck shell=bash
# Shared setup for black-box tests: a private temp root with its own
# jobs.d, runtime, state and log dirs; a vigild started in the foreground
# and driven only through vigilctl, signals and the files it writes.
# Every wait polls with a deadline.  Cleanup ends only the processes this
# test started (by pid), and keeps the directory when the test failed.

set -eu

: "${VIGILD:?VIGILD must point to the vigild binary}"
: "${VIGILCTL:?VIGILCTL must point to the vigilctl binary}"
: "${HELPERS:=}"
: "${VIGILD_WRAPPER:=}"

# In distcheck (VIGIL_DISTCHECK: the tarball builds and its tests run),
# the black-box scenarios ran in the suite's other builds: a smoke test
# of the tarball's own harness is enough.
if [ -n "${VIGIL_DISTCHECK:-}" ]; then
	case ${0##*/} in
	basic.sh | cli.sh | json.sh) ;;
	*)
		echo "SKIP: VIGIL_DISTCHECK (run in the suite's other builds)"
		exit 77
		;;
	esac
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/vigil-test.XXXXXX")
JOBS=$T/jobs.d
RUN=$T/run
STATE=$T/state
LOGS=$T/log
SOCK=$RUN/vigild.sock
VLOG=$T/vigild.log
VIGILD_PID=
TRACKED=
mkdir -p "$JOBS"
: >"$T/vigil.conf"
export VIGIL_SOCKET=$SOCK

# Under ASan (the suite's second stage) LeakSanitizer's check at the
# exit of every vigilctl costs about 40 ms of CPU, and the tests run
# vigilctl thousands of times (CI is CPU-bound, issue 43): vigilctl runs
# without it, through a wrapper, except in the tests that drive its own
# paths (VIGIL_CTL_LEAKS=1 before this file: cli, json, queuectl, the
# importers).  vigild keeps the check everywhere.  VIGILCTL_BIN is the
# binary itself, for a test that copies it.
# shellcheck disable=SC2034 # systemd.sh's
VIGILCTL_BIN=$VIGILCTL
if [ -z "${VIGIL_CTL_LEAKS:-}" ] && grep -qa __asan_init "$VIGILCTL" 2>/dev/null; then
	mkdir -p "$T/bin"
	# shellcheck disable=SC2016 # the wrapper's own expansions
	printf '#!/bin/sh\nASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" exec %s "$@"\n' \
		"'$VIGILCTL'" >"$T/bin/vigilctl"
	chmod 755 "$T/bin/vigilctl"
	VIGILCTL=$T/bin/vigilctl
fi

log() { printf '# %s\n' "$*"; }

fail() {
	printf 'FAIL: %s\n' "$*" >&2
	exit 1
}

ctl() { "$VIGILCTL" -s "$SOCK" "$@"; }

# VIGIL_ASAN: vigild is built with AddressSanitizer (a test may do less
# of what costs much CPU there and was done in full in the gcc stage).
VIGIL_ASAN=
if grep -qa __asan_init "$VIGILD" 2>/dev/null; then VIGIL_ASAN=1; fi

# VIGIL_TEST_SLOW: one factor for every wait's deadline (retry,
# wait_state, slow_s), so that a busy or instrumented machine slows the
# tests, not fails them (issue 43).  What the environment gives (default
# 1) is a floor, raised to 4 under VIGILD_WRAPPER (valgrind) and to 2
# when vigild is built with AddressSanitizer, then multiplied by the
# 1-minute load average over the core count (rounded up, at most 4) when
# the machine has more to run than cores; 12 at most.  Only deadlines
# scale: a job's own timeouts (stop_timeout, a probe's interval) are what
# a test tests, and stay as written unless the test says why.
slow_factor() {
	local f=${VIGIL_TEST_SLOW:-1} l
	case $f in '' | *[!0-9]* | 0) f=1 ;; esac
	if [ -n "$VIGILD_WRAPPER" ]; then
		[ "$f" -ge 4 ] || f=4
		SLOW_WHY=", vigild under ${VIGILD_WRAPPER%% *}"
	elif [ -n "$VIGIL_ASAN" ]; then
		[ "$f" -ge 2 ] || f=2
		SLOW_WHY=", vigild built with ASan"
	fi
	# The load over the cores, rounded up: 1 on a machine not overrun.
	l=$(awk -v c="$(nproc 2>/dev/null || echo 1)" '{
		r = $1 / c; n = int(r); if (n < r) n++
		print (n < 1) ? 1 : (n > 4) ? 4 : n }' /proc/loadavg 2>/dev/null) || l=1
	f=$((f * ${l:-1}))
	[ "$f" -le 12 ] || f=12
	echo "$f"
}
SLOW_WHY=
slow_factor >"$T/slow"
read -r VIGIL_TEST_SLOW <"$T/slow"
[ "$VIGIL_TEST_SLOW" -eq 1 ] ||
	printf '# VIGIL_TEST_SLOW=%s (load %s on %s cores%s): deadlines scaled\n' \
		"$VIGIL_TEST_SLOW" "$(cut -d' ' -f1 /proc/loadavg)" "$(nproc)" "$SLOW_WHY"

# slow_s SECONDS: SECONDS scaled by VIGIL_TEST_SLOW, for a deadline that
# is not a retry: `timeout "$(slow_s 20)" ...`, a poll loop's bound.
slow_s() { echo $(($1 * VIGIL_TEST_SLOW)); }

# The clock, from bash itself (no date process).
now_ms() {
	local t=${EPOCHREALTIME/./}
	echo $((t / 1000))
}

# retry SECONDS COMMAND...: run COMMAND until it succeeds or time is up
# (SECONDS times VIGIL_TEST_SLOW).  It polls every 20 ms for the first
# second, every 50 ms to 5 s, then every 100 ms: most waits end soon,
# and a long one should not cost a busy machine 50 processes a second
# (CI is CPU-bound, issue 43).  RETRY_POLL=SECONDS polls at that one
# pace instead, for a wait whose end is itself measured.  The pause is a
# read with a timeout on a pipe no one writes (bash's own clock, no sleep
# process); COMMAND runs without that pipe.
retry() {
	local t0 now deadline nap fd
	t0=${EPOCHREALTIME/./}
	deadline=$((t0 + $1 * 1000000 * VIGIL_TEST_SLOW))
	shift
	exec {fd}<> <(:)
	until "$@" {fd}<&-; do
		now=${EPOCHREALTIME/./}
		if [ "$now" -ge "$deadline" ]; then
			exec {fd}<&-
			return 1
		fi
		nap=0.1
		[ $((now - t0)) -ge 5000000 ] || nap=0.05
		[ $((now - t0)) -ge 1000000 ] || nap=0.02
		nap=${RETRY_POLL:-$nap}
		read -r -t "$nap" -u "$fd" _ || :
	done
	exec {fd}<&-
}

# free_port [NOT...]: a TCP port from 20000-31999, under the kernel's
# ephemeral range (32768-60999: a busy suite's client sockets take those,
# and a server's bind there can fail), that nothing on 127.0.0.1 listens
# on now and that is none of NOT.
free_port() {
	local p i
	for i in $(seq 1 100); do
		p=$((20000 + (RANDOM + i) % 12000))
		case " $* " in *" $p "*) continue ;; esac
		if ! (: <"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	fail "no free TCP port found"
}

# alive PID: the process exists and is not a zombie.
alive() {
	local st
	st=$(sed -n 's/^.*) \([A-Za-z]\).*$/\1/p' "/proc/$1/stat" 2>/dev/null) ||
		return 1
	[ -n "$st" ] && [ "$st" != Z ]
}

dead() { ! alive "$1"; }

# need_nobody: skip (exit 77) unless this runs as root with setpriv and a
# user nobody; then let nobody reach into the test root (mktemp's 0700).
need_nobody() {
	[ "$(id -u)" -eq 0 ] || skip "not root: the test runs commands as user nobody"
	need_cmd setpriv util-linux
	id nobody >/dev/null 2>&1 || skip "no user nobody"
	chmod 0755 "$T"
}

# as_nobody COMMAND...: run COMMAND as the unprivileged user nobody.
as_nobody() {
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"
}

# check WHAT COMMAND...: run COMMAND and report it; a failure is counted,
# not fatal, so that a run against an unfixed vigild shows each hole, not
# only the first.  checks_passed fails the test if any check failed.
CHECKS_FAILED=0
check() {
	local what=$1
	shift
	if "$@"; then
		log "ok: $what"
	else
		printf 'FAIL: %s\n' "$what" >&2
		CHECKS_FAILED=1
	fi
}
checks_passed() { [ "$CHECKS_FAILED" -eq 0 ] || fail "see the failures above"; }

# starttime PID: the process's start time (field 22 of /proc/PID/stat),
# which with the pid names it for good: pids are reused.
# (Read by the shell alone: tests track hundreds of processes.)
starttime() {
	local s
	read -r s 2>/dev/null <"/proc/$1/stat" || return 0
	# shellcheck disable=SC2086 # the fields after the name, as words
	set -- ${s##*) }
	echo "${20:-}"
}

# track PID...: end these processes at cleanup if they are still there:
# the same processes, not others that got their pids meanwhile.
declare -A TRACK_START=()
track() {
	local p
	for p in "$@"; do
		TRACK_START[$p]=$(starttime "$p")
		TRACKED="$TRACKED $p:${TRACK_START[$p]}"
	done
}

# tracked_alive PID: PID, which track was given, is alive and the same
# process: a child the shell has reaped may have left its pid to another
# process (pid_max can be 32768), which a test must never signal.
tracked_alive() {
	[ -n "${TRACK_START[$1]:-}" ] && alive "$1" &&
		[ "$(starttime "$1")" = "${TRACK_START[$1]}" ]
}

# end_tracked PID...: SIGTERM each that is still the process track was
# given, then reap each (the shell's own children).
end_tracked() {
	local p
	for p in "$@"; do
		if tracked_alive "$p"; then kill "$p" 2>/dev/null || true; fi
	done
	for p in "$@"; do wait "$p" 2>/dev/null || true; done
}

# job NAME LINES...: write jobs.d/NAME.conf, one option per argument.  An
# environment line marks the job's processes as this test's (procs_with),
# unless the test sets environment itself.
job() {
	local name=$1
	shift
	printf '%s\n' "$@" >"$JOBS/$name.conf"
	case "$*" in
	*environment*) ;;
	*) printf 'environment = {"VIGIL_TEST_ROOT=%s"}\n' "$T" >>"$JOBS/$name.conf" ;;
	esac
}

start_vigild() {
	# shellcheck disable=SC2086
	$VIGILD_WRAPPER "$VIGILD" -c "$T/vigil.conf" -j "$JOBS" \
		--runtime-dir "$RUN" --state-dir "$STATE" --log-dir "$LOGS" \
		"$@" >>"$VLOG" 2>&1 &
	VIGILD_PID=$!
	track "$VIGILD_PID"
	retry 20 ctl ping >/dev/null 2>&1 ||
		fail "vigild did not answer ping; log: $(tail -n 20 "$VLOG")"
}

# lsan_tracer_crash LOG: the log's end is LeakSanitizer's own tracer
# crashing at exit ("Tracer caught signal 11", then "LeakSanitizer has
# encountered a fatal error"): a known, intermittent fault of the tool
# under load (google/sanitizers#1353), after vigild's own exit path ran;
# the leak check did not run, and found nothing.  Any sanitizer report
# in the log is still a failure (cleanup greps for them).
lsan_tracer_crash() {
	tail -n 8 "$1" | grep -q '^Tracer caught signal' &&
		tail -n 8 "$1" | grep -q 'LeakSanitizer has encountered a fatal error' &&
		! grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$1"
}

# stop_vigild: SIGTERM, wait for exit; its status must be 0.
stop_vigild() {
	local rc=0
	[ -n "$VIGILD_PID" ] || return 0
	kill -TERM "$VIGILD_PID" 2>/dev/null || true
	wait "$VIGILD_PID" || rc=$?
	VIGILD_PID=
	if [ "$rc" -ne 0 ] && tail -n 8 "$VLOG" | grep -q 'all jobs stopped, exiting' &&
		lsan_tracer_crash "$VLOG"; then
		log "vigild's exit was clean; then LeakSanitizer's tracer crashed (google/sanitizers#1353): no leak check this time"
		rc=0
	fi
	[ "$rc" -eq 0 ] || fail "vigild exited with $rc; log: $(tail -n 20 "$VLOG")"
}

# state NAME: the STATE column of `vigilctl status NAME`.
# http_token: a random bearer token in $TOKEN and in $T/token (mode 0600),
# for vigil.conf's http_token_file.
http_token() {
	TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
	printf '%s\n' "$TOKEN" >"$T/token"
	chmod 600 "$T/token"
}

# http_port: in $PORT, the TCP port the last vigild started chose for
# http_listen = "127.0.0.1:0" (its log says where it listens).
http_port() {
	PORT=$(sed -n 's/.*http: listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$VLOG" | tail -n 1)
	[ -n "$PORT" ] || fail "no 'http: listening on' line in the log"
}

state() { ctl status "$1" 2>/dev/null | awk 'NR == 2 { print $2 }'; }

is_state() { [ "$(state "$1")" = "$2" ]; }

# wait_state NAME STATE [SECONDS]
wait_state() {
	retry "${3:-10}" is_state "$1" "$2" ||
		fail "$1 did not reach $2 (is $(state "$1")); log: $(tail -n 20 "$VLOG")"
}

job_pid() { ctl pid "$1"; }

# procs_with ENV=VALUE: pids of this test's live job processes whose
# environment has ENV=VALUE (tests run in parallel and reuse job names).
procs_with() {
	local f p
	# One grep over every environment, then one per candidate: fast even
	# with thousands of processes on the machine.
	while IFS= read -r f; do
		grep -qzxF -- "$1" "$f" 2>/dev/null || continue
		p=${f#/proc/}
		p=${p%/environ}
		if alive "$p"; then echo "$p"; fi
	done < <(grep -lzxF -- "VIGIL_TEST_ROOT=$T" /proc/[0-9]*/environ 2>/dev/null)
	return 0
}

# no_cgroups: vigild said it tracks jobs by process group (no writable
# cgroup v2 here); the line it logged goes to the test's log.
no_cgroups() {
	grep -q "cgroup: .*tracked by process group" "$VLOG" || return 1
	log "no cgroups: $(grep 'cgroup:' "$VLOG")"
}

# need_cgroups: after start_vigild, skip unless vigild tracks jobs by
# cgroup: a host without a writable, delegated cgroup v2 is no install's
# to fix.  The reason is vigild's own.
need_cgroups() {
	no_cgroups || return 0
	skip "no usable cgroup v2 here: vigild says $(grep -m 1 -o 'cgroup: .*' "$VLOG")"
}

# procs_marked VAR=VALUE: live pids whose environment has VAR=VALUE (for
# jobs that do not run with this test's VIGIL_TEST_ROOT: a container's).
procs_marked() {
	local f p
	while IFS= read -r f; do
		p=${f#/proc/}
		p=${p%/environ}
		if alive "$p"; then echo "$p"; fi
	done < <(grep -lzxF -- "$1" /proc/[0-9]*/environ 2>/dev/null)
	return 0
}

# at_cleanup FUNCTION: cleanup calls FUNCTION with the test's exit status
# before anything else, the last registered first: for what a library
# sourced after this one starts (pg-lib.sh's servers, cluster-lib.sh's
# nodes), which must end before the directory goes.
AT_CLEANUP=
at_cleanup() { AT_CLEANUP="$1 $AT_CLEANUP"; }

cleanup() {
	local rc=$? p f
	for f in $AT_CLEANUP; do "$f" "$rc" || true; done
	if [ -n "$VIGILD_PID" ] && alive "$VIGILD_PID"; then
		kill -TERM "$VIGILD_PID" 2>/dev/null || true
		for _ in $(seq 1 250); do
			alive "$VIGILD_PID" || break
			sleep 0.02
		done
	fi
	# (One may die between the look and the kill: under set -e a failed
	# kill would end this trap there, silently, with status 1.)
	for p in $TRACKED; do
		alive "${p%%:*}" && [ "$(starttime "${p%%:*}")" = "${p#*:}" ] &&
			{ kill -KILL "${p%%:*}" 2>/dev/null || true; }
	done
	# A test's own last step (e.g. unmount what it mounted), if defined.
	if declare -F cleanup_hook >/dev/null; then cleanup_hook || true; fi
	# A sanitizer's report anywhere, vigild's log or a job's (a child
	# between fork and exec is vigild's code), fails the test.
	if [ "$rc" -eq 0 ] && grep -rIlE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$T" >&2; then
		printf 'FAIL: a sanitizer reported an error (files above)\n' >&2
		rc=1
	fi
	# A skipped test (77) has nothing to keep.
	if [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ]; then
		rm -rf "$T"
	else
		printf '# kept %s\n# vigild log:\n' "$T" >&2
		tail -n 40 "$VLOG" >&2 2>/dev/null || true
	fi
	exit "$rc"
}
trap cleanup EXIT

# skip_fixable REASON: skip this test (77) for a reason that the run's
# install (contrib/install-deps.sh --test) could fix: a tool or server not
# installed, debootstrap failed or timed out, the container did not boot.
# In CI (CI=true, or VIGIL_CI_STRICT=1) that is a failure instead: a
# skipped test passes CI without testing anything.  A reason no install
# fixes (not root, under valgrind, a VIGIL_SKIP_* the runner set) is a
# plain skip.  Either way the reason is the log's "SKIP: " line, which
# tests/run-all.sh puts in its summary: no test skips without one.
skip_fixable() {
	case ${CI:-}:${VIGIL_CI_STRICT:-} in
	true:* | 1:* | *:1)
		printf 'FAIL: cannot run in CI: %s\n' "$*" >&2
		exit 1
		;;
	esac
	printf 'SKIP: %s\n' "$*"
	exit 77
}

# skip REASON: skip this test (77) for a reason no install fixes: not
# root, under valgrind, a VIGIL_SKIP_* set, a kernel or file system
# without the feature, a big-endian machine.
skip() {
	printf 'SKIP: %s\n' "$*"
	exit 77
}

# need_cmd CMD PACKAGE: skip_fixable unless CMD is on PATH (PACKAGE: the
# Debian package that has it, which contrib/install-deps.sh --test
# installs).
need_cmd() {
	command -v "$1" >/dev/null 2>&1 ||
		skip_fixable "$1 not installed (Debian package $2; contrib/install-deps.sh --test)"
}

# need_helper NAME: skip_fixable unless tests/helpers/NAME is built.
need_helper() {
	[ -x "$HELPERS/$1" ] ||
		skip_fixable "helper $1 not built in ${HELPERS:-(HELPERS unset)} (make check builds tests/helpers)"
}
