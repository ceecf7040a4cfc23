#!/bin/bash
# Root vigild must never write through a link planted in its log
# directory: a symbolic link NAME.log -> a victim file (a stand-in for
# /etc/passwd) is neither appended to nor truncated by a rotation; the
# refusal is logged.  No other user may write in the log, runtime, locks
# or state directory; one that an admin opened to others (0777, 1777) makes
# vigild refuse to start, naming it, its owner and mode; and a running
# vigild whose log directory is opened up writes nothing more there, so
# nobody's link planted after a logrotate is not followed either.
. "$(dirname "$0")/lib.sh"

need_nobody

VICTIM='root:x:0:0:root:/root:/bin/bash'
for v in victim0 victim2 victim3; do
	printf '%s\n' "$VICTIM" >"$T/$v"
	chmod 0644 "$T/$v"
done
unchanged() { [ "$(cat "$T/$1")" = "$VICTIM" ]; }

# (b) root planted the links before the start (keep 0 empties the file at
# each rotation, keep 2 renames it).
mkdir -m 0755 "$LOGS"
ln -s "$T/victim0" "$LOGS/keep0.log"
ln -s "$T/victim2" "$LOGS/keep2.log"
# 200 lines of 60 bytes: a dozen rotations at 1K.
cat >"$T/lines.sh" <<'EOF'
i=0
while [ $i -lt 200 ]; do
	echo "line $i padding padding padding padding padding padding"
	i=$((i + 1))
done
exec sleep 1000
EOF
job keep0 "command = {\"sh\", \"$T/lines.sh\"}" \
	'log_max_size = "1K"' 'log_keep = 0'
job keep2 "command = {\"sh\", \"$T/lines.sh\"}" \
	'log_max_size = "1K"' 'log_keep = 2'
# shellcheck disable=SC2016 # expanded by the job's shell
job live 'command = {"sh", "-c", "i=0; while :; do echo tick $i; i=$((i + 1)); sleep 0.02; done"}'
start_vigild
wait_state keep0 RUNNING
wait_state keep2 RUNNING
# A stop drains the run's pipe: every line went to the log (or was refused).
ctl stop keep0 keep2 >/dev/null || fail "stop keep0 keep2"
check "keep0.log -> victim0: not written, not truncated" unchanged victim0
check "keep2.log -> victim2: not written, not truncated" unchanged victim2
check "the refusal of keep0.log is logged" \
	grep -q "keep0.log: a symbolic link: not following it" "$VLOG"

# (a) The directories are vigild's and no one else may write there.
check "log dir 0755 root" [ "$(stat -c '%a %U' "$LOGS")" = "755 root" ]
check "state dir 0700 root" [ "$(stat -c '%a %U' "$STATE")" = "700 root" ]
cannot_plant() { ! as_nobody ln -s "$T/victim3" "$1/planted" 2>/dev/null; }
for d in "$LOGS" "$RUN" "$RUN/locks" "$STATE"; do
	check "nobody cannot plant a link in $d" cannot_plant "$d"
done

# A running vigild whose log directory an admin opened to everyone: nobody
# replaces live.log with a link, then a logrotate reopens the file.  A
# follower sees every block vigild reads, written or not.
retry 5 test -s "$LOGS/live.log" || fail "no live.log"
ctl tail -f -n 0 live >"$T/follow" 2>&1 &
track $!
retry 5 test -s "$T/follow" || fail "tail -f live shows nothing"
chmod 0777 "$LOGS"
as_nobody sh -c "rm -f '$LOGS/live.log' && ln -s '$T/victim3' '$LOGS/live.log'" ||
	fail "nobody could not plant the link in a 0777 directory"
ctl logrotate >/dev/null || fail "logrotate"
# 20 more ticks read by vigild after the reopen.
mark=$(wc -l <"$T/follow")
more_ticks() { [ "$(wc -l <"$T/follow")" -ge $((mark + 20)) ]; }
retry 10 more_ticks || fail "the follower got no more ticks"
check "live.log -> victim3: not written after logrotate" unchanged victim3
check "the unsafe log directory is logged" \
	grep -q 'live.log: its directory: owner root (uid 0), mode 0777' "$VLOG"
stop_vigild
rm -f "$LOGS/live.log"

# A directory others may write to: vigild refuses to start, and says why.
refuses() {
	local dir=$1 mode=$2 rc=0
	chmod "$mode" "$dir"
	timeout "$(slow_s 5)" "$VIGILD" -c "$T/vigil.conf" -j "$JOBS" --runtime-dir "$RUN" \
		--state-dir "$STATE" --log-dir "$LOGS" >"$T/refused" 2>&1 || rc=$?
	chmod 0700 "$dir"
	[ "$rc" -eq 1 ] &&
		grep -q "$dir: owner root (uid 0), mode $mode: its group or others may write in it: refusing" "$T/refused" ||
		{
			printf '# exit %s: %s\n' "$rc" "$(cat "$T/refused")" >&2
			return 1
		}
}
check "a 1777 log dir is refused" refuses "$LOGS" 1777
check "a 0777 log dir is refused" refuses "$LOGS" 0777
check "a 0775 runtime dir is refused" refuses "$RUN" 0775
check "a 0777 locks dir is refused" refuses "$RUN/locks" 0777
check "a 0777 state dir is refused" refuses "$STATE" 0777
chmod 0755 "$LOGS" "$RUN" "$RUN/locks"

checks_passed
log "ok"
