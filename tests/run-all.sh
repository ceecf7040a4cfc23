#!/bin/bash
# The whole test suite, as CI runs it:
#   1. gcc, -Werror: build and `make check`: the unit tests, and the
#      black-box tests stage 2 does not run (below)
#   2. clang, -Werror, ASan + UBSan: `make check`: every black-box test
#      but those
#   3. `make check-valgrind` on stage 1's gcc build: the unit tests,
#      and vigild under valgrind in 3 black-box tests (below)
#   4. `make distcheck`: in the background from the start of stage 2
#      (beside its build and tests, which leave CPU idle); stage 4 waits
#      for it
#   5. clang-format, shellcheck, `make check-headers`, clang-tidy, mandoc,
#      cppcheck, autogen.sh prints no warning, no two-way module edge: at
#      once, in the background from the end of stage 1's build (beside
#      its tests, which mostly wait); stage 5 waits for them
#   6. the request decoder and the supervisord reader under libFuzzer,
#      FUZZ_SECONDS (default 10) each
# Each black-box test runs once, in one of stages 1 and 2 (CI must end in
# 20 minutes on 2 cores, and it is CPU-bound: issue 43).  Stage 2, with
# the sanitizers, runs all of them but: the package test (deb.sh,
# VIGIL_SKIP_DEB); the browser, load, flood and container tests
# (dashboard.sh, http-load.sh, http-held.sh, hooks-flood.sh, storm.sh,
# systemd.sh: VIGIL_SKIP_TIMING; ASan adds nothing to what they measure,
# and other tests take its code paths); and the cluster tests
# (cluster-*.sh, three vigild and a PostgreSQL each) but three that reach
# the most of vigild's cluster code (VIGIL_CLUSTER_TESTS, below).  Stage
# 1 runs those with gcc, and the unit tests; state-lost.sh too (500
# enqueues; 100 under ASan); deb.sh in the background, from the end of
# stage 1's build to the end of stage 2 (it mostly waits).  The gcc build also runs under valgrind
# (stage 3) and in distcheck, the package and container tests.  With
# only one of stages 1 and 2, it runs every test.  The other stages set
# VIGIL_SKIP_SLOW (under valgrind those tests skip by themselves).
# make check runs twice as many tests at once as there are cores (the
# cores alone under --load; VIGIL_CHECK_JOBS).
# Stage 3 runs, of the black-box tests, one per part of vigild where a
# memory error would hide, error and teardown paths included: basic
# (lifecycle, job output), reload (jobs.d diff, the registry's swap and
# frees) and clients (the control socket: clients that vanish); state.db
# is there through the unit tests test-store and test-queue (queue.sh
# left for CI's time, issue 43).  ASan and
# UBSan run every test; valgrind, for what they miss (reads of memory
# never written), slows vigild many times over, and CI must end in 20
# minutes on 2 cores (issue 43).
# VIGIL_VALGRIND_TESTS="basic queue" names others, "all" runs every one.
# distcheck (VIGIL_DISTCHECK) builds the unit tests and runs a smoke test
# of the black-box harness (basic.sh, cli.sh, json.sh): the unit tests
# and the scenarios ran above (dist_start, below).
#
# --load (or VIGIL_TEST_LOAD=1): stress-ng, two CPU hogs per core, runs
# beside the whole run and is stopped (by its pid) at its end; the suite
# must pass under it.  VIGIL_TEST_SLOW, the factor of every test's
# deadlines (lib.sh raises it further with the load average), is set per
# stage unless the caller set it: 2 under ASan, 4 under valgrind, at
# least 3 under --load.
# In CI (CI=true, as .ci/run sets) a test that skips for a reason the
# install could fix (debootstrap, the container's boot, PostgreSQL,
# Chromium, debhelper missing) fails instead: lib.sh's skip_fixable.
#
# A failed test is shown by name with the end of its log.  The run ends
# with every skipped test and the reason it printed, per stage; the ten
# slowest tests (each test's time is at the end of its .log, "#
# duration-ms: N", written by tests/timed-driver around automake's test
# driver; lint checks and distcheck count as tests); the ten that used
# the most CPU ("# cpu-ms: N", likewise: CI is CPU-bound on 2 cores); the
# wall and CPU time of each stage; and last one line "N passed, N
# failed, N skipped" over every test of every stage.  Set STAGES="1 5" to run only
# some stages.
# The builds are out of tree, under build/ (the summary's lists in
# build/summary).  A source tree that was configured in place (the
# README's quick start: ./configure && make) cannot also be built out of
# tree, so then they build a clean copy of it in build/src and leave the
# in-tree build alone.
set -u
cd "$(dirname "$0")/.." || exit 1
top=$PWD
stages=${STAGES:-1 2 3 4 5 6}
jobs=$(nproc 2>/dev/null || echo 2)
passed=0 failed=0 skipped=0
gcc_built=
load=${VIGIL_TEST_LOAD:-}
[ "$load" != 0 ] || load=
for a; do
	case $a in
	--load) load=1 ;;
	*)
		echo "usage: $0 [--load]" >&2
		exit 2
		;;
	esac
done
# What the summary at the end lists: skips (STAGE, TEST, REASON), times
# (MS, STAGE, TEST) and stages (STAGE, SECONDS), tab-separated.
sum=$top/build/summary
rm -rf "$sum" && mkdir -p "$sum" && touch "$sum/skips" "$sum/fails" "$sum/times" "$sum/cpu" "$sum/stages" || exit 1
t_run=$(date +%s)

note() { printf '\n=== %s\n' "$*"; }

# cpu_now: CPU_S, the CPU seconds (user + system) of every process this
# shell has waited for so far: bash's `times`, second line, "XmY.ZZZs
# XmY.ZZZs".  Not in $(...): a subshell's children are not this shell's.
cpu_now() {
	times >"$sum/times.now"
	CPU_S=$(awk 'NR == 2 { s = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); sub("s", "", a[2]); s += a[1] * 60 + a[2] }
		printf "%d\n", s }' "$sum/times.now")
}

# The CPU hog of --load, stopped (by its pid) however the run ends.
hog=
stop_hog() {
	[ -n "$hog" ] || return 0
	kill -TERM "$hog" 2>/dev/null
	wait "$hog" 2>/dev/null
	hog=
}
trap stop_hog EXIT
trap 'exit 130' INT TERM

# slow N: VIGIL_TEST_SLOW for a stage N times slower than plain gcc (at
# least 3 under --load), unless the caller set it; lib.sh raises it
# further with the load average.
user_slow=${VIGIL_TEST_SLOW:-}

# Tests at once in stages 1 and 2: twice the cores, as the black-box
# tests mostly wait on vigild and their jobs (their deadlines scale with
# the load average, lib.sh); the cores alone under --load, whose hogs
# fill them.  VIGIL_CHECK_JOBS sets it.
check_jobs=${VIGIL_CHECK_JOBS:-$((2 * jobs))}
[ -z "$load" ] || check_jobs=${VIGIL_CHECK_JOBS:-$jobs}

# The cluster tests (cluster-*.sh: three vigilds and a PostgreSQL each)
# run once: under ASan, those that reach the most of the cluster code in
# vigild (leases, the queue, a hostile NOTIFY; cluster-dbdown's outages
# are windows of time, which ASan's slowness and a busy machine blur:
# gcc runs it); the rest
# with gcc, where they cost a third
# of the CPU (CI must end in 20 minutes on 2 cores, issue 43).  With
# only one of stages 1 and 2, it runs them all.
cluster_asan="cluster-basic cluster-queue cluster-security-notify"
cluster_gcc=
for f in tests/integration/cluster-*.sh; do
	f=${f##*/} f=${f%.sh}
	case " cluster-lib $cluster_asan " in *" $f "*) ;; *) cluster_gcc="$cluster_gcc $f" ;; esac
done
case " $stages " in *" 1 "*) st1=1 ;; *) st1= ;; esac
case " $stages " in *" 2 "*) st2=1 ;; *) st2= ;; esac
[ -n "$st2" ] || cluster_gcc="$cluster_gcc $cluster_asan"
[ -n "$st1" ] || cluster_asan="$cluster_asan $cluster_gcc"
# Stage 1's black-box tests when stage 2 runs too (see the header): make
# check's TESTS, the unit tests first (make expands $(UNIT_TESTS)).
# deb.sh (minutes of building the package and booting a container,
# mostly waiting) runs in the background from stage 1's build to the end
# of stage 2 when both run (deb_start); else in stage 1's make check.
deb_bg=
[ -z "$st1" ] || [ -z "$st2" ] || deb_bg=1
only="hooks-flood hooks-priority http-load http-held dashboard storm systemd state-lost $cluster_gcc"
[ -n "$deb_bg" ] || only="deb $only"
read -r -a gcc_only <<<"$only"
gcc_tests=()
if [ -n "$st2" ]; then
	# shellcheck disable=SC2016 # $(UNIT_TESTS) is make's
	gcc_tests=(TESTS='$(UNIT_TESTS)'"$(printf ' tests/integration/%s.sh' "${gcc_only[@]}")")
fi

# The black-box tests stage 3 runs under valgrind (VIGIL_VALGRIND_TESTS;
# "all" for every one): one per part of vigild where a memory error
# would hide, its error and teardown paths included (see the header).
vg_tests=(basic reload clients)
case ${VIGIL_VALGRIND_TESTS:-} in
'') ;;
all) vg_tests=() ;;
*) read -r -a vg_tests <<<"$VIGIL_VALGRIND_TESTS" ;;
esac
slow() {
	local f=$1
	if [ -n "$user_slow" ]; then
		export VIGIL_TEST_SLOW="$user_slow"
		return
	fi
	[ -z "$load" ] || [ "$f" -ge 3 ] || f=3
	if [ "$f" -gt 1 ]; then export VIGIL_TEST_SLOW=$f; else unset VIGIL_TEST_SLOW; fi
}

# count DIR: add the results of automake's .trs files under DIR.
count() {
	local p f s
	p=$(cat "$1"/tests/unit/*.trs "$1"/tests/integration/*.trs 2>/dev/null |
		grep -c '^:test-result: PASS' || true)
	f=$(cat "$1"/tests/unit/*.trs "$1"/tests/integration/*.trs 2>/dev/null |
		grep -c '^:test-result: \(FAIL\|ERROR\|XPASS\)' || true)
	s=$(cat "$1"/tests/unit/*.trs "$1"/tests/integration/*.trs 2>/dev/null |
		grep -c '^:test-result: SKIP' || true)
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	printf '%s: %d passed, %d failed, %d skipped\n' "$1" "$p" "$f" "$s"
}

# one NAME COMMAND...: a check that counts as one test.
one() {
	local name=$1 t0
	shift
	t0=$(date +%s%N)
	if "$@"; then
		passed=$((passed + 1))
		printf 'PASS: %s\n' "$name"
	else
		failed=$((failed + 1))
		printf 'FAIL: %s\n' "$name"
	fi
	printf '%d\t%s\t%s\n' $((($(date +%s%N) - t0) / 1000000)) "$label" "$name" >>"$sum/times"
}

# bg NAME COMMAND...: as one, in the background, its output kept in
# $sum/bg/NAME.out; bg_wait waits for them (by pid) and reports each, in
# the order they started.
bg_names='' bg_nice=''
bg() {
	local name=$1
	shift
	mkdir -p "$sum/bg"
	(
		# Behind the tests they run beside (lint_start's), if asked.
		[ -z "$bg_nice" ] || renice -n "$bg_nice" -p "$BASHPID" >/dev/null 2>&1
		t0=$(date +%s%N)
		"$@" >"$sum/bg/$name.out" 2>&1
		echo "$? $((($(date +%s%N) - t0) / 1000000))" >"$sum/bg/$name.rc"
	) &
	bg_names="$bg_names $name:$!"
}
# bg_unnice: the tests are over, so the background checks started behind
# them need not yield any more: they and every process under them go back
# to nice 0 (as root; else they stay as they are).  Under --load, lint at
# nice 10 beside stress-ng's hogs got a twentieth of a core and ran for
# hours.
bg_unnice() {
	local np tree pid ppid grown=1
	[ -n "$bg_names" ] || return 0
	tree=' '
	for np in $bg_names; do tree="$tree${np##*:} "; done
	# The tree grows by a level per pass: at most as many passes as
	# there are processes.
	while [ "$grown" = 1 ]; do
		grown=0
		while read -r pid ppid; do
			case $tree in
			*" $pid "*) ;;
			*" $ppid "*) tree="$tree$pid " grown=1 ;;
			esac
		done < <(ps -e -o pid=,ppid=)
	done
	# shellcheck disable=SC2086 # the pids, as words
	renice -n 0 -p $tree >/dev/null 2>&1 || true
}
bg_wait() {
	local np name rc ms
	for np in $bg_names; do
		name=${np%:*}
		wait "${np##*:}"
		read -r rc ms <"$sum/bg/$name.rc" || rc=1 ms=0
		cat "$sum/bg/$name.out"
		if [ "$rc" -eq 0 ]; then
			passed=$((passed + 1))
			printf 'PASS: %s\n' "$name"
		else
			failed=$((failed + 1))
			printf 'FAIL: %s\n' "$name"
		fi
		printf '%d\t%s\t%s\n' "$ms" "$label" "$name" >>"$sum/times"
	done
	bg_names=
}

# collect DIR: from DIR's .trs and .log files, each skipped test with the
# reason it printed (its first "SKIP: " line) into $sum/skips, each
# test's duration (tests/timed-driver's last line) into $sum/times.
collect() {
	local trs t why ms
	for trs in "$1"/tests/unit/*.trs "$1"/tests/integration/*.trs; do
		[ -f "$trs" ] || continue
		t=${trs%.trs}
		if grep -q '^:test-result: SKIP' "$trs"; then
			why=$(sed -n 's/^\(# \)\{0,1\}SKIP: //p' "$t.log" 2>/dev/null | head -n 1)
			printf '%s\t%s\t%s\n' "$label" "${t#"$1"/}" "${why:-(no reason printed)}" >>"$sum/skips"
		fi
		ms=$(sed -n 's/^# duration-ms: //p' "$t.log" 2>/dev/null | tail -n 1)
		[ -z "$ms" ] || printf '%s\t%s\t%s\n' "$ms" "$label" "${t#"$1"/}" >>"$sum/times"
		ms=$(sed -n 's/^# cpu-ms: //p' "$t.log" 2>/dev/null | tail -n 1)
		[ -z "$ms" ] || printf '%s\t%s\t%s\n' "$ms" "$label" "${t#"$1"/}" >>"$sum/cpu"
		grep -q '^:test-result: \(FAIL\|ERROR\|XPASS\)' "$trs" || continue
		why=$(grep -a -m 1 -e '^FAIL: ' -e 'assertion failed' -e 'ERROR: AddressSanitizer' \
			-e 'runtime error:' "$t.log" 2>/dev/null | cut -c 1-300)
		printf '%s\t%s\t%s\n' "$label" "${t#"$1"/}" "${why:-(see its log above)}" >>"$sum/fails"
	done
}

# summary: every skip with its reason, per stage; the ten slowest tests
# of every stage; each stage's wall time.
summary() {
	local st t why prev=
	note "skipped: $(wc -l <"$sum/skips") tests"
	while IFS=$'\t' read -r st t why; do
		[ "$st" = "$prev" ] || printf '%s:\n' "$st"
		prev=$st
		printf '  %s: %s\n' "$t" "$why"
	done <"$sum/skips"
	note "the ten slowest tests"
	sort -t "$(printf '\t')" -k1,1nr "$sum/times" | head -n 10 |
		awk -F '\t' '{ printf "  %7.1f s  %-9s %s\n", $1 / 1000, $2, $3 }'
	note "the ten hungriest tests (CPU time: the test and what it waited for)"
	sort -t "$(printf '\t')" -k1,1nr "$sum/cpu" | head -n 10 |
		awk -F '\t' '{ printf "  %7.1f s  %-9s %s\n", $1 / 1000, $2, $3 }'
	note "wall and CPU time per stage"
	awk -F '\t' '{ printf "  %-9s %4d min %02d s  cpu %5d s\n", $1, $2 / 60, $2 % 60, $3 }' "$sum/stages"
	t=$(($(date +%s) - t_run))
	cpu_now
	printf '  %-9s %4d min %02d s  cpu %5d s\n' all $((t / 60)) $((t % 60)) "$CPU_S"
	if [ -z "$hog" ]; then
		:
	elif kill -0 "$hog" 2>/dev/null; then
		printf '  under load: %s ran beside the whole run\n' "$hog_what"
	else
		printf 'FAIL: --load: %s ended early: %s\n' "$hog_what" "$(tail -n 3 "$sum/stress-ng.out")"
		failed=$((failed + 1))
	fi
	if [ -s "$sum/fails" ]; then
		note "failed: $(wc -l <"$sum/fails") tests (each with the first line that says why)"
		awk -F '\t' '{ printf "  %s %s: %s\n", $1, $2, $3 }' "$sum/fails"
	fi
}

# tidy_all: clang-tidy on lib/ (lib/import/ too) and supervisord/, $jobs
# processes at once,
# a few files each (alone, it is the longest lint).  Any finding fails it.
tidy_all() {
	local flags
	flags="-Ibuild/gcc -Ilib -Ilib/import $(pkg-config --cflags libbsd-overlay libconfuse libsystemd sqlite3 libpq)"
	flags="$flags -DSYSCONFDIR=\"/etc\" -DLOCALSTATEDIR=\"/var\" -DRUNSTATEDIR=\"/run\""
	# shellcheck disable=SC2016
	printf '%s\n' lib/*.c lib/import/*.c supervisord/*.c |
		TIDY_FLAGS=$flags xargs -n 6 -P "$jobs" sh -c \
			'clang-tidy --quiet "$@" -- $TIDY_FLAGS 2>/dev/null' tidy
}

# lint_start: start every lint check in the background (bg); stage 5
# waits for them.  When stage 5 is to run, stage 1 starts them right
# after its build, beside its tests, which mostly wait on vigild and
# their jobs (issue 43: CI must end in 20 minutes on 2 cores).
lint_start() {
	# At a lower priority than the tests: they get the cores first.
	bg_nice=10
	# The longest first: clang-tidy, cppcheck.
	bg clang-tidy tidy_all
	# The configuration the build has (its config.h), not every
	# combination of #ifdefs: a tenth of the time (issue 43).
	bg cppcheck sh -c "cppcheck --quiet --error-exitcode=1 --enable=warning,portability \
		--inline-suppr --std=c11 -I lib -I lib/import \
		--include=build/gcc/config.h --max-configs=1 --suppress=toomanyconfigs \
		--include=/usr/include/bsd/sys/queue.h \
		--include=/usr/include/bsd/sys/tree.h \
		lib supervisord tests/unit tests/helpers tests/fuzz"
	bg clang-format sh -c "git ls-files '*.[ch]' | xargs clang-format --dry-run -Werror"
	bg shellcheck sh -c "shellcheck -x -P tests/integration tests/integration/*.sh tests/run-all.sh tests/timed-driver contrib/*.sh .ci/run \
		tests/fuzz/run.sh contrib/completion/vigilctl"
	bg check-headers make -s -C build/gcc check-headers
	bg autogen-quiet autogen_quiet
	# No two supervisord/ files call each other (but through ops).
	bg modgraph python3 contrib/modgraph.py --check
	bg mandoc sh -c "mandoc -T lint -W warning supervisord/vigild.8 supervisord/vigilctl.8 supervisord/vigil.conf.5"
	bg_nice=
}

# deb_start: tests/integration/deb.sh in the background, as make check
# would run it from build/gcc (its environment, the timed driver), its
# log and result in build/deb; deb_wait counts it with stage 1's.
deb_pid=
deb_start() {
	rm -rf build/deb && mkdir -p build/deb/tests/integration || return 0
	(
		cd build/deb || exit 1
		# shellcheck disable=SC2086 # drv is words
		VIGILD=$top/build/gcc/supervisord/vigild \
			VIGILCTL=$top/build/gcc/supervisord/vigilctl \
			HELPERS=$top/build/gcc/tests/helpers TESTS_SRCDIR=$src/tests \
			TOP_SRCDIR=$src VIGILD_WRAPPER='' \
			$drv --test-name tests/integration/deb.sh \
			--log-file tests/integration/deb.log \
			--trs-file tests/integration/deb.trs --color-tests no \
			--enable-hard-errors yes --expect-failure no -- \
			/bin/bash "$src/tests/integration/deb.sh"
	) </dev/null >"$sum/deb.out" 2>&1 &
	deb_pid=$!
}
deb_wait() {
	local l=$label
	[ -n "$deb_pid" ] || return 0
	wait "$deb_pid" || :
	deb_pid=
	note "deb.sh, in the background since stage 1's build"
	label=gcc
	grep -q '^:test-result: \(FAIL\|ERROR\|XPASS\)' build/deb/tests/integration/deb.trs 2>/dev/null &&
		failures build/deb
	count build/deb
	collect build/deb
	label=$l
}

# dist_start: make distcheck in the background (DIST_PID), its output in
# $sum/distcheck.out, its milliseconds in $sum/distcheck.ms: the tarball
# builds (at -O0: it proves the tarball complete; stage 1 compiles at
# -O2), installs and runs a smoke test of the black-box harness; its
# unit tests are built (make check), and ran in stage 1.  Stage 2 starts
# it, at a lower priority, beside its tests, which leave a quarter of the
# CPU idle (issue 43: CI must end in 20 minutes on 2 cores); stage 4
# waits for it.
dist_pid=
dist_start() {
	local tests="tests/integration/basic.sh tests/integration/cli.sh tests/integration/json.sh"
	(
		renice -n 10 -p "$BASHPID" >/dev/null 2>&1
		t0=$(date +%s%N)
		rc=0
		{ rm -rf build/dist && mkdir -p build/dist && cd build/dist &&
			"$src/configure" >/dev/null 2>&1 &&
			VIGIL_DISTCHECK=1 VIGIL_SKIP_SLOW=1 VIGIL_SKIP_DEB=1 \
				VIGIL_TEST_SLOW="${user_slow:-2}" \
				make -j"$jobs" distcheck TESTS="$tests" \
				DISTCHECK_CONFIGURE_FLAGS="CFLAGS=-O0" >distcheck.out 2>&1; } || {
			rc=1
			tail -n 40 distcheck.out 2>/dev/null
		}
		echo $((($(date +%s%N) - t0) / 1000000)) >"$sum/distcheck.ms"
		exit "$rc"
	) </dev/null >"$sum/distcheck.out" 2>&1 &
	dist_pid=$!
}

# pristine DIR: a fresh copy of the source tree in DIR, without what
# autogen, configure or make made: in a git checkout its tracked and new
# (not ignored) files, else everything but build/ and .git, `make
# distclean`ed.
pristine() {
	rm -rf "$1" && mkdir -p "$1" || return 1
	if [ -e .git ]; then
		git ls-files -z --cached --others --exclude-standard |
			while IFS= read -r -d '' f; do
				[ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"
			done | tar --null -T - -cf - | tar -xf - -C "$1"
	else
		tar --exclude=./build --exclude=./.git -cf - . | tar -xf - -C "$1" &&
			(cd "$1" && { [ ! -f Makefile ] || make -s distclean >/dev/null; })
	fi
}

# autogen_quiet: autogen.sh, run on a clean copy, prints no warning.
autogen_quiet() {
	pristine build/autogen && (cd build/autogen && ./autogen.sh) >build/autogen.out 2>&1 ||
		{ cat build/autogen.out; return 1; }
	! grep -i 'warn' build/autogen.out
}

# build DIR CONFIGURE-ARGS...: configure and build in DIR.
build() {
	local dir=$1
	shift
	rm -rf "$dir" && mkdir -p "$dir" &&
		(cd "$dir" && "$src/configure" "$@" >configure.out 2>&1 &&
			make -j"$jobs" >make.out 2>&1 &&
			make -j"$jobs" check TESTS= >>make.out 2>&1) || {
		printf 'build in %s failed:\n' "$dir"
		tail -n 30 "$dir/configure.out" "$dir/make.out" 2>/dev/null
		return 1
	}
}

# failures DIR: each failed test of DIR by name, with the end of its log
# (the first eight; the rest by name only).
failures() {
	local trs n=0
	for trs in "$1"/tests/unit/*.trs "$1"/tests/integration/*.trs; do
		[ -f "$trs" ] && grep -q '^:test-result: \(FAIL\|ERROR\|XPASS\)' "$trs" || continue
		n=$((n + 1))
		printf -- '--- failed: %s\n' "${trs%.trs}"
		[ "$n" -gt 8 ] || tail -n 40 "${trs%.trs}.log"
	done
	[ "$n" -gt 0 ] || tail -n 40 "$1/check.out"
}

# check DIR [MAKE-ARGS...]: run the suite in DIR, show failures, count.
check() {
	local dir=$1
	shift
	(cd "$dir" && make -j"$check_jobs" "$@" \
		LOG_DRIVER="$drv" SH_LOG_DRIVER="$drv" >check.out 2>&1) || failures "$dir"
	count "$dir"
	collect "$dir"
}

src=$top
if [ -f config.status ]; then
	note "$top is configured in place: building a clean copy in build/src (your in-tree build is left as it is)"
	pristine build/src || { echo "copying the source tree to build/src failed"; exit 1; }
	src=$top/build/src
fi
[ -x "$src/configure" ] || (cd "$src" && ./autogen.sh >/dev/null 2>&1) ||
	{ echo "autogen failed"; exit 1; }

# Each test's wall time lands at the end of its .log (collect reads it).
drv="sh $src/tests/timed-driver sh $src/build-aux/test-driver"
if [ -n "$load" ]; then
	command -v stress-ng >/dev/null || {
		echo "--load: no stress-ng (contrib/install-deps.sh --test installs it)"
		printf '\n0 passed, 1 failed, 0 skipped\n'
		exit 1
	}
	# Two CPU hogs per core; bounded, should this shell be SIGKILLed.
	stress-ng --cpu $((2 * jobs)) --timeout 3h --quiet </dev/null >"$sum/stress-ng.out" 2>&1 &
	hog=$!
	hog_what="stress-ng --cpu $((2 * jobs)) (pid $hog)"
	note "load: $hog_what runs beside the whole run"
fi
# The container's cached rootfs (tests/systemd/nspawn.sh: debootstrap,
# minutes of download and unpacking on a new machine) is made in the
# background from here, while stage 1 builds: deb.sh and systemd.sh wait
# on its lock for it rather than make it in their own time.  Its output
# is shown at the end; should it fail, those tests try again themselves.
rootfs=
case " $stages " in
*" 1 "* | *" 2 "*)
	if [ "$(id -u)" -eq 0 ] && [ -z "${VIGIL_SKIP_SLOW:-}" ]; then
		(
			export VIGIL_TEST_SLOW=${user_slow:-2}
			# shellcheck source=tests/systemd/nspawn.sh
			. "$src/tests/systemd/nspawn.sh"
			nspawn_usable || { echo "not made: $NSPAWN_WHY"; exit 0; }
			nspawn_rootfs || echo "not made: $NSPAWN_WHY"
		) </dev/null >"$sum/rootfs.out" 2>&1 &
		rootfs=$!
	fi
	;;
esac
for st in $stages; do
	st0=$(date +%s)
	cpu_now
	cpu0=$CPU_S
	case $st in
	1)
		label=gcc
		slow 1
		note "gcc -Werror: make check"
		if build build/gcc CC=gcc --enable-werror; then
			gcc_built=1
			case " $stages " in *" 5 "*) lint_start ;; esac
			[ -z "$deb_bg" ] || deb_start
			VIGIL_CLUSTER_TESTS=$cluster_gcc check build/gcc check "${gcc_tests[@]}"
		else failed=$((failed + 1)); fi
		;;
	2)
		label=asan
		slow 2
		note "clang -Werror, ASan + UBSan: make check"
		case " $stages " in *" 4 "*) dist_start ;; esac
		if build build/san CC=clang --enable-werror --enable-sanitizers; then
			# deb.sh builds the package from the tree: as in stage 1.
			# The tests drive vigild with stage 1's vigilctl, but for
			# those about vigilctl (lib.sh: VIGIL_PLAIN_VIGILCTL).
			plain=
			[ -z "$gcc_built" ] || plain=$top/build/gcc/supervisord/vigilctl
			VIGIL_PLAIN_VIGILCTL=$plain \
				VIGIL_SKIP_DEB=1 VIGIL_SKIP_TIMING=1 VIGIL_SKIP_HEAVY=1 \
				VIGIL_CLUSTER_TESTS=$cluster_asan \
				ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
				UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
				check build/san check
		else failed=$((failed + 1)); fi
		deb_wait
		;;
	3)
		label=valgrind
		slow 4
		vg_args=()
		if [ ${#vg_tests[@]} -gt 0 ]; then
			note "valgrind: make check-valgrind, the unit tests and ${vg_tests[*]}"
			# shellcheck disable=SC2016 # $(UNIT_TESTS) is make's
			vg_args=(TESTS='$(UNIT_TESTS)'"$(printf ' tests/integration/%s.sh' "${vg_tests[@]}")")
		else
			note "valgrind: make check-valgrind"
		fi
		# valgrind runs stage 1's gcc build (the same code: -Werror
		# changes no byte of it), its results, counted there, cleared
		# first; without stage 1, a build of its own.  valgrind's start
		# of each vigild is work, not waiting: the cores alone.
		vgdir=build/vg
		if [ -n "$gcc_built" ]; then
			vgdir=build/gcc
			rm -f build/gcc/tests/*/*.trs build/gcc/tests/*/*.log build/gcc/test-suite*.log
		elif ! build build/vg CC=gcc; then
			vgdir=
		fi
		if [ -n "$vgdir" ]; then
			check_jobs=${VIGIL_CHECK_JOBS:-$jobs} check "$vgdir" check-valgrind "${vg_args[@]}"
		else failed=$((failed + 1)); fi
		;;
	4)
		label=distcheck
		note "make distcheck"
		# Started in the background with stage 2 (dist_start), else now.
		[ -n "$dist_pid" ] || dist_start
		rc=0
		wait "$dist_pid" || rc=$?
		dist_pid=
		cat "$sum/distcheck.out"
		if [ "$rc" -eq 0 ]; then
			passed=$((passed + 1))
			printf 'PASS: distcheck\n'
		else
			failed=$((failed + 1))
			printf 'FAIL: distcheck\n'
		fi
		read -r ms <"$sum/distcheck.ms" 2>/dev/null || ms=0
		printf '%d\t%s\t%s\n' "$ms" distcheck distcheck >>"$sum/times"
		;;
	5)
		label=lint
		note "lint (at once)"
		[ -n "$bg_names" ] || lint_start
		bg_unnice
		bg_wait
		;;
	6)
		label=fuzz
		note "fuzz: tests/fuzz/run.sh"
		rc=0
		"$src/tests/fuzz/run.sh" build/gcc "${FUZZ_SECONDS:-10}" >"$sum/fuzz.out" 2>&1 || rc=$?
		cat "$sum/fuzz.out"
		case $rc in
		0) passed=$((passed + 1)) ;;
		77)
			skipped=$((skipped + 1))
			printf 'fuzz\ttests/fuzz/run.sh\t%s\n' "$(tail -n 1 "$sum/fuzz.out")" >>"$sum/skips"
			;;
		*) failed=$((failed + 1)) ;;
		esac
		;;
	esac
	cpu_now
	printf '%s\t%d\t%d\n' "$label" $(($(date +%s) - st0)) $((CPU_S - cpu0)) >>"$sum/stages"
done

deb_wait
if [ -n "$rootfs" ]; then
	wait "$rootfs"
	note "the container's rootfs, made in the background"
	sed 's/^/  /' "$sum/rootfs.out"
	[ -s "$sum/rootfs.out" ] || echo "  (cached)"
fi
summary
stop_hog
printf '\n%d passed, %d failed, %d skipped\n' "$passed" "$failed" "$skipped"
[ "$failed" -eq 0 ]
