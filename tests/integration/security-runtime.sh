#!/bin/bash
# Without XDG_RUNTIME_DIR a user's vigild uses /tmp/vigil-UID, a name any
# user can take first.  vigild must not run there unless the directory is
# its own user's, a real directory (not a link) that no one else may write
# to; it makes it 0700 (narrowing a wider mode of its own, with a
# warning).  vigilctl must not connect to a socket in such a directory of
# someone else's either.  The user is a uid with no passwd entry and no
# /tmp/vigil-UID yet (claimed with an atomic mkdir), so runs never collide;
# what the test made there is removed at the end.
. "$(dirname "$0")/lib.sh"

need_nobody

RDIR=
cleanup_hook() { if [ -n "$RDIR" ]; then rm -rf "$RDIR"; fi; }

# The attacker, nobody, takes /tmp/vigil-U first for a uid U not in use.
U=
for _ in $(seq 1 50); do
	u=$((40000 + RANDOM % 20000))
	getent passwd "$u" >/dev/null && continue
	[ -z "$(ps -o pid= -u "$u" 2>/dev/null)" ] || continue
	if as_nobody mkdir -m 0777 "/tmp/vigil-$u" 2>/dev/null; then
		U=$u
		RDIR=/tmp/vigil-$u
		break
	fi
done
[ -n "$U" ] || fail "no free uid found"
log "uid $U, runtime directory $RDIR"

# The user's environment: everything in $T, XDG_RUNTIME_DIR unset.
H=$T/home
mkdir -p "$H/.config/vigil/jobs.d" "$T/theirs"
chown -R "$U:$U" "$H"
chown nobody "$T/theirs"
chmod 0777 "$T/theirs"
# An array, not a function: "${AS_USER[@]}" CMD & gives CMD's own pid.
AS_USER=(setpriv --reuid="$U" --regid="$U" --clear-groups
	env -u XDG_RUNTIME_DIR -u VIGIL_SOCKET HOME="$H"
	XDG_CONFIG_HOME="$H/.config" XDG_STATE_HOME="$H/.local/state")
as_user() { "${AS_USER[@]}" "$@"; }

# refused WHAT: vigild as U exits 1 at once, naming RDIR and WHAT.
refused() {
	local rc=0
	as_user timeout "$(slow_s 5)" "$VIGILD" >"$T/out" 2>&1 || rc=$?
	[ "$rc" -eq 1 ] && grep -q "^vigild: error: $RDIR: $1: refusing to use it" "$T/out" || {
		printf '# exit %s: %s\n' "$rc" "$(head -c 600 "$T/out")" >&2
		return 1
	}
}

check "nobody's 0777 $RDIR is refused" \
	refused "owner nobody (uid 65534), mode 0777: not owned by uid $U"
# vigilctl does not connect to a socket there.
distrusted() {
	local rc=0
	as_user "$VIGILCTL" ping >"$T/out" 2>&1 || rc=$?
	[ "$rc" -eq 69 ] && grep -q "not trusting a socket there" "$T/out" || {
		printf '# exit %s: %s\n' "$rc" "$(cat "$T/out")" >&2
		return 1
	}
}
check "vigilctl does not trust a socket in nobody's $RDIR" distrusted

rm -rf "$RDIR"
as_nobody ln -s "$T/theirs" "$RDIR"
check "a link $RDIR is refused" refused "a symbolic link"
rm -f "$RDIR"

mkdir -m 0777 "$RDIR"
chown "$U:$U" "$RDIR"
chmod 0777 "$RDIR"
check "its own 0777 $RDIR is refused" \
	refused "owner uid $U, mode 0777: its group or others may write in it"

# start_user: vigild as U in the background, answering ping.
UPID=
start_user() {
	"${AS_USER[@]}" "$VIGILD" >"$T/user.log" 2>&1 &
	UPID=$!
	track "$UPID"
	retry 10 as_user "$VIGILCTL" ping >/dev/null 2>&1 ||
		fail "vigild as $U did not answer; log: $(cat "$T/user.log")"
}
stop_user() {
	kill -TERM "$UPID"
	wait "$UPID" || fail "vigild as $U exited $?"
}

# Its own, only readable by others: narrowed to 0700, with a warning.
chmod 0755 "$RDIR"
start_user
check "its own 0755 $RDIR narrowed to 0700" [ "$(stat -c %a "$RDIR")" = 700 ]
check "the narrowing is logged" \
	grep -q "$RDIR: was open to more than it should be: mode 0755, now 0700" "$T/user.log"
stop_user

# Missing: made 0700.
rm -rf "$RDIR"
start_user
check "a new $RDIR is 0700 and the user's" \
	[ "$(stat -c '%a %u' "$RDIR")" = "700 $U" ]
stop_user

checks_passed
log "ok"
