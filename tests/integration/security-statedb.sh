#!/bin/bash
# state.db holds queue payloads and the output tails of dead messages: no
# other user may read it.  The state directory is 0700 and state.db, -wal
# and -shm 0600 (0750 and 0640 with group socket_group); wider modes left
# by an older vigild (or an admin) are narrowed at start with one warning
# for each; a state.db made by `vigilctl enqueue --direct` gets the same
# mode whatever the umask.
. "$(dirname "$0")/lib.sh"

need_nobody

DB=$STATE/state.db
SECRET=password=hunter2-$$-$RANDOM

# mode_is PATH MODE [GROUP]
mode_is() {
	local got
	got=$(stat -c '%a %G' "$1") || return 1
	[ "$got" = "$2 ${3:-root}" ] || {
		printf '# %s: %s, want %s %s\n' "$1" "$got" "$2" "${3:-root}" >&2
		return 1
	}
}

# secret_safe: nobody can neither read the files nor query the queue
# (immutable=1: without the -shm file nobody may not write; what is still
# only in the -wal file shows in the cat of it).
secret_safe() {
	local f
	for f in "$DB" "$DB-wal" "$DB-shm"; do
		if as_nobody cat "$f" 2>/dev/null | grep -qa "$SECRET"; then
			printf '# nobody read the secret in %s\n' "$f" >&2
			return 1
		fi
	done
	if command -v sqlite3 >/dev/null &&
		as_nobody sqlite3 "file:$DB?immutable=1" 'select * from queue' \
			>"$T/sql" 2>&1; then
		printf '# nobody queried the queue: %s\n' "$(head -c 200 "$T/sql")" >&2
		return 1
	fi
	return 0
}

job q 'kind = "queue"' 'command = "cat"' 'autostart = false'
start_vigild
ctl enqueue --delay 1h q "$SECRET" >/dev/null || fail "enqueue"
check "state dir 0700" mode_is "$STATE" 700
check "state.db 0600" mode_is "$DB" 600
check "state.db-wal 0600" mode_is "$DB-wal" 600
check "state.db-shm 0600" mode_is "$DB-shm" 600
check "nobody cannot read the queue" secret_safe

# Wide modes left behind (kill -9 keeps -wal and -shm): fixed at start,
# one warning each.
kill -KILL "$VIGILD_PID"
wait "$VIGILD_PID" 2>/dev/null || true
VIGILD_PID=
[ -e "$DB-wal" ] && [ -e "$DB-shm" ] || fail "no -wal or -shm after kill -9"
chmod 0755 "$STATE"
chmod 0644 "$DB" "$DB-wal" "$DB-shm"
: >"$VLOG"
start_vigild
for f in "$STATE" "$DB" "$DB-wal" "$DB-shm"; do
	want=600
	[ "$f" = "$STATE" ] && want=700
	check "$f fixed" mode_is "$f" "$want"
	n=$(grep -c "^vigild: warning: $f: was open to more than it should be: mode 0[67][45][45], now 0$want" "$VLOG" || true)
	check "one warning for $f" [ "$n" -eq 1 ]
done
check "nobody cannot read the queue after the fix" secret_safe
stop_vigild

# enqueue --direct creates state.db 0600, whatever the umask.
rm -f "$DB" "$DB-wal" "$DB-shm"
(umask 000 && "$VIGILCTL" --state-dir "$STATE" enqueue --direct q "$SECRET") \
	>/dev/null || fail "enqueue --direct"
check "state.db of enqueue --direct 0600" mode_is "$DB" 600

# With socket_group: 0750 and 0640, group socket_group; still not others'.
if getent group adm >/dev/null; then
	printf 'socket_group = "adm"\n' >"$T/vigil.conf"
	rm -rf "$STATE"
	: >"$VLOG"
	start_vigild
	ctl enqueue --delay 1h q "$SECRET" >/dev/null || fail "enqueue"
	check "state dir 0750 adm" mode_is "$STATE" 750 adm
	check "state.db 0640 adm" mode_is "$DB" 640 adm
	check "state.db-wal 0640 adm" mode_is "$DB-wal" 640 adm
	check "nobody (not in adm) cannot read the queue" secret_safe
	no_warning() { ! grep -q 'was open to more' "$VLOG"; }
	check "no warning for a new state dir" no_warning
	stop_vigild
	# A state dir and state.db made without it (or by systemd's
	# StateDirectoryMode=0700) become the group's to read too (issue 38).
	chmod 0700 "$STATE"
	chmod 0600 "$DB" "$DB-wal" "$DB-shm" 2>/dev/null || true
	chgrp root "$STATE" "$DB"
	: >"$VLOG"
	start_vigild
	check "an old state dir 0750 adm" mode_is "$STATE" 750 adm
	check "an old state.db 0640 adm" mode_is "$DB" 640 adm
	said() { grep -q "$STATE/state.db: mode 0600 group 0, now 0640 group [0-9]* (socket_group)" "$VLOG"; }
	check "said in the log" said
	check "nobody (not in adm) still cannot read the queue" secret_safe
	stop_vigild
fi

checks_passed
log "ok"
