#!/bin/bash
# Build the libFuzzer targets, with ASan and UBSan, in a temporary
# directory and run each on its seed corpus for a bounded time:
# fuzz-proto (vigild's decoding of client input, corpus/) and fuzz-ini
# (vigilctl import's reading of supervisord files, corpus-ini/).  Prints
# "PASS: NAME" or "FAIL: NAME" for each; exits 0, 1 when one failed, or
# 77 when clang cannot build a fuzzer.
#   usage: tests/fuzz/run.sh BUILDDIR [SECONDS]
# BUILDDIR is a configured build tree (for config.h); SECONDS defaults
# to 30, for each target.  A crash reproducer is kept in the printed
# directory.
set -u

usage() {
	echo "usage: $0 BUILDDIR [SECONDS]" >&2
	exit 2
}

[ $# -ge 1 ] && [ $# -le 2 ] || usage
builddir=$1
secs=${2:-30}
case $secs in
'' | *[!0-9]*) usage ;;
esac
src=$(cd "$(dirname "$0")/../.." && pwd) || exit 1
[ -f "$builddir/config.h" ] || {
	echo "$0: no config.h in $builddir" >&2
	exit 2
}
CC=${CC:-clang}

skip() {
	printf 'SKIP: fuzz-proto fuzz-ini (%s)\n' "$*"
	exit 77
}

command -v "$CC" >/dev/null 2>&1 || skip "$CC not found"
bsd=$(pkg-config --cflags --libs libbsd-overlay 2>/dev/null) ||
	skip "pkg-config libbsd-overlay not found"
confuse=$(pkg-config --cflags --libs libconfuse 2>/dev/null) ||
	skip "pkg-config libconfuse not found"

T=$(mktemp -d "${TMPDIR:-/tmp}/vigil-fuzz.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT

# Can this clang link a libFuzzer program at all?
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
	'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
	'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)' \
	'{ (void)d; (void)n; return 0; }' >"$T/probe.c"
"$CC" -fsanitize=fuzzer -o "$T/probe" "$T/probe.c" >/dev/null 2>&1 ||
	skip "$CC -fsanitize=fuzzer does not link"

# fuzz NAME MAXLEN CORPUS SOURCE...: build the target NAME from the
# sources (relative to $src) and run it for $secs seconds on a copy of
# CORPUS (libFuzzer adds new inputs to the first corpus directory).
fuzz() {
	name=$1 maxlen=$2 corpus=$3
	shift 3
	srcs=
	for f in "$@"; do
		srcs="$srcs $src/$f"
	done
	# shellcheck disable=SC2086
	if ! "$CC" -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined -I "$src/lib" -I "$src/lib/import" \
		-I "$builddir" \
		$srcs $libs -o "$T/$name" >"$T/$name.build.log" 2>&1; then
		cat "$T/$name.build.log" >&2
		echo "FAIL: $name (build)"
		return 1
	fi
	mkdir -p "$T/$name.corpus" "$T/$name.artifacts"
	cp "$src/$corpus"/* "$T/$name.corpus/" 2>/dev/null || true
	frc=0
	(cd "$T" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		"./$name" -max_total_time="$secs" -max_len="$maxlen" \
		-rss_limit_mb=2048 -artifact_prefix="$T/$name.artifacts/" \
		-print_final_stats=1 "$name.corpus" >"$name.log" 2>&1) || frc=$?
	# Progress as comments: the last status line and the final statistics.
	grep -E '^#[0-9]+.*cov:' "$T/$name.log" | tail -n 1 | sed 's/^/# /'
	grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' \
		"$T/$name.log" | sed 's/^/# /'
	if [ "$frc" -ne 0 ]; then
		keep=1
		tail -n 60 "$T/$name.log" >&2
		printf '# kept %s (reproduce: %s/%s %s/%s.artifacts/crash-*)\n' \
			"$T" "$T" "$name" "$T" "$name" >&2
		echo "FAIL: $name"
		return 1
	fi
	echo "PASS: $name"
}

keep=0
rc=0
libs=$bsd
fuzz fuzz-proto 8192 tests/fuzz/corpus lib/proto.c lib/xmalloc.c \
	lib/log.c tests/fuzz/fuzz-proto.c || rc=1
# The importer: the reader, the translation, and what the translation
# calls (vigil's own job-file loader among them).
libs="$bsd $confuse"
fuzz fuzz-ini 65536 tests/fuzz/corpus-ini lib/import/ini.c \
	lib/import/ini-text.c lib/import/ini-expand.c lib/import/pyshlex.c \
	lib/import/svimport.c lib/import/svimport-prog.c \
	lib/import/svimport-proc.c \
	lib/signame.c lib/words.c lib/conf.c lib/conf-ctx.c \
	lib/conf-field.c lib/conf-jobs.c lib/conf-proc.c lib/conf-run.c \
	lib/duration.c \
	lib/listenaddr.c \
	lib/job-spec.c lib/probe.c lib/schedule.c lib/xmalloc.c lib/log.c \
	tests/fuzz/fuzz-ini.c || rc=1
[ "$keep" -eq 0 ] || trap - EXIT
exit "$rc"
