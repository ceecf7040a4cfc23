#!/bin/bash
# Build the libFuzzer target for vigild's input decoding (fuzz-proto.c,
# with ASan and UBSan) in a temporary directory and run it on the seed
# corpus for a bounded time.  Prints "PASS: fuzz-proto" or
# "FAIL: fuzz-proto"; exits 0, 1, or 77 when clang cannot build a fuzzer.
#   usage: tests/fuzz/run.sh BUILDDIR [SECONDS]
# BUILDDIR is a configured build tree (for config.h); SECONDS defaults
# to 30.  A crash reproducer is kept in the printed directory.
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
	printf 'SKIP: fuzz-proto (%s)\n' "$*"
	exit 77
}

command -v "$CC" >/dev/null 2>&1 || skip "$CC not found"
bsd=$(pkg-config --cflags --libs libbsd-overlay 2>/dev/null) ||
	skip "pkg-config libbsd-overlay not found"

T=$(mktemp -d "${TMPDIR:-/tmp}/vigil-fuzz.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT

# Can this clang link a libFuzzer program at all?
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
	'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
	'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)' \
	'{ (void)d; (void)n; return 0; }' >"$T/probe.c"
"$CC" -fsanitize=fuzzer -o "$T/probe" "$T/probe.c" >/dev/null 2>&1 ||
	skip "$CC -fsanitize=fuzzer does not link"

# shellcheck disable=SC2086
if ! "$CC" -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -I "$src/lib" -I "$builddir" \
	"$src/lib/proto.c" "$src/lib/xmalloc.c" "$src/lib/log.c" \
	"$src/tests/fuzz/fuzz-proto.c" $bsd -o "$T/fuzz-proto" \
	>"$T/build.log" 2>&1; then
	cat "$T/build.log" >&2
	echo "FAIL: fuzz-proto (build)"
	exit 1
fi

# libFuzzer adds new inputs to the first corpus directory: work on a copy.
mkdir -p "$T/corpus" "$T/artifacts"
cp "$src"/tests/fuzz/corpus/* "$T/corpus/" 2>/dev/null || true
rc=0
(cd "$T" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	./fuzz-proto -max_total_time="$secs" -max_len=8192 \
	-rss_limit_mb=2048 -artifact_prefix="$T/artifacts/" \
	-print_final_stats=1 corpus >fuzz.log 2>&1) || rc=$?
# Progress as comments: the last status line and the final statistics.
grep -E '^#[0-9]+.*cov:' "$T/fuzz.log" | tail -n 1 | sed 's/^/# /'
grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' \
	"$T/fuzz.log" | sed 's/^/# /'
if [ "$rc" -ne 0 ]; then
	trap - EXIT
	tail -n 60 "$T/fuzz.log" >&2
	printf '# kept %s (reproduce: %s/fuzz-proto %s/artifacts/crash-*)\n' \
		"$T" "$T" "$T" >&2
	echo "FAIL: fuzz-proto"
	exit 1
fi
echo "PASS: fuzz-proto"
exit 0
