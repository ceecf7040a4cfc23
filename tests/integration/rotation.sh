#!/bin/bash
# Rotation: while a job writes 50 MB, the log files together stay within
# (log_keep + 1) x log_max_size and no line is split across files or cut;
# `vigilctl tail -f` follows a job's output across many rotations.
. "$(dirname "$0")/lib.sh"

MAX=$((1024 * 1024))
KEEP=3
# 50 MiB of 100-byte numbered lines: "L00000001 xxx...x".
LINES=$((50 * 1024 * 1024 / 100))
job writer "command = {\"sh\", \"-c\", \"while [ ! -e $T/go ]; do sleep 0.02; done; seq -f 'L%08g' 1 $LINES | sed 's/\$/ $(printf '%*s' 90 '' | tr ' ' x)/'; exec sleep 1000\"}" \
	'log_max_size = "1M"' "log_keep = $KEEP"
start_vigild
wait_state writer RUNNING

touch "$T/go"

total() {
	local sum=0 f s
	for f in "$LOGS"/writer.log*; do
		s=$(stat -c %s "$f" 2>/dev/null) || continue
		sum=$((sum + s))
	done
	echo "$sum"
}
last_line="$(printf 'L%08d' "$LINES")"
done_writing() { tail -c 200 "$LOGS/writer.log" 2>/dev/null | grep -q "^$last_line "; }

# Sample the total size while the job writes; it never passes the bound.
bound=$(((KEEP + 1) * MAX))
deadline=$(($(now_ms) + $(slow_s 240) * 1000))
max_seen=0
samples=0
until done_writing; do
	[ "$(now_ms)" -lt "$deadline" ] || fail "the writer did not finish in time"
	t=$(total)
	[ "$t" -le "$bound" ] || fail "log files total $t bytes > $bound"
	[ "$t" -gt "$max_seen" ] && max_seen=$t
	samples=$((samples + 1))
	sleep 0.05
done
log "$samples samples, at most $max_seen bytes in all"
t=$(total)
[ "$t" -le "$bound" ] || fail "log files total $t bytes > $bound at the end"
[ -e "$LOGS/writer.log.$KEEP" ] || fail "no rotation happened: $(ls "$LOGS")"
[ ! -e "$LOGS/writer.log.$((KEEP + 1))" ] || fail "more than log_keep rotated files"

# Every file holds whole lines only, and together they are the last lines
# written, in order, without a gap.
for f in "$LOGS/writer.log.3" "$LOGS/writer.log.2" "$LOGS/writer.log.1" "$LOGS/writer.log"; do
	s=$(stat -c %s "$f")
	[ "$s" -le "$MAX" ] || fail "$f has $s bytes > $MAX"
	[ "$(tail -c 1 "$f" | od -An -c | tr -d ' ')" = '\n' ] || fail "$f does not end with a newline"
done
cat "$LOGS/writer.log.3" "$LOGS/writer.log.2" "$LOGS/writer.log.1" "$LOGS/writer.log" |
	grep -v ' vigil: ' >"$T/all"
pad=$(printf '%*s' 90 '' | tr ' ' x)
bad=$(grep -cvx "L[0-9]\{8\} $pad" "$T/all" || true)
[ "$bad" -eq 0 ] || fail "$bad malformed lines, e.g. $(grep -vx "L[0-9]\{8\} $pad" "$T/all" | head -n 2)"
first=$(head -n 1 "$T/all" | cut -c2-9)
n=$(wc -l <"$T/all")
[ $((10#$first + n - 1)) -eq "$LINES" ] || fail "lines are not consecutive: from $first, $n lines, last should be $LINES"
cut -c2-9 "$T/all" | awk -v f="$((10#$first))" '$1 + 0 != f + NR - 1 { print "gap at " NR; exit 1 }' ||
	fail "a gap in the kept lines"

# tail -f across rotations: a job that rotates its 4K file about 75 times
# while two followers read; each sees every line, in order.
rm -f "$T/go"
# shellcheck disable=SC2016 # $i is for the job's shell
job ticker 'command = {"sh", "-c", "while [ ! -e '"$T"'/go2 ]; do sleep 0.02; done; i=1; while [ $i -le 3000 ]; do echo \"T$i of the ticker, padded to make rotations come often enough.....\"; i=$((i + 1)); done; exec sleep 1000"}' \
	'log_max_size = "4K"' 'log_keep = 2'
ctl reload >/dev/null
wait_state ticker RUNNING
"$VIGILCTL" -s "$SOCK" tail -f -n 1 ticker >"$T/follow" 2>"$T/follow.err" &
follower=$!
track "$follower"
"$VIGILCTL" -s "$SOCK" tail -f -n 1 ticker >"$T/follow2" 2>&1 &
follower2=$!
track "$follower2"
# The last line (the start marker) comes once a follower is registered.
retry 10 grep -q 'vigil: started' "$T/follow" || fail "tail -f printed nothing"
retry 10 grep -q 'vigil: started' "$T/follow2" || fail "second tail -f printed nothing"
touch "$T/go2"
retry 60 grep -q '^T3000 ' "$T/follow" || fail "tail -f missed the last line: $(tail -n 2 "$T/follow")"
retry 60 grep -q '^T3000 ' "$T/follow2" || fail "second tail -f missed the last line"
[ -e "$LOGS/ticker.log.2" ] || fail "the ticker's log did not rotate"
grep -q '^T1 ' "$LOGS/ticker.log.2" "$LOGS/ticker.log.1" "$LOGS/ticker.log" &&
	fail "the first lines should have rotated away"
for f in "$T/follow" "$T/follow2"; do
	n=$(grep -c '^T' "$f")
	[ "$n" -eq 3000 ] || fail "$f: tail -f saw $n lines of 3000"
	grep '^T' "$f" | cut -d' ' -f1 | tr -d T | awk '$1 + 0 != NR { print "gap at " NR; exit 1 }' ||
		fail "$f: tail -f output has a gap"
done
cmp -s "$T/follow" "$T/follow2" || fail "the two followers saw different output"
alive "$follower" || fail "tail -f ended on its own: $(cat "$T/follow.err")"

# (background jobs of a script ignore SIGINT: TERM it.)
kill -TERM "$follower"
retry 10 dead "$follower" || fail "tail -f did not end on SIGTERM"
# The other follower is still served.
rm "$T/go2"
ctl restart ticker >/dev/null
last_started() { tail -n 1 "$T/follow2" | grep -q 'vigil: started'; }
retry 10 last_started ||
	fail "the second follower stopped getting lines when the first left"

stop_vigild
log "ok"
