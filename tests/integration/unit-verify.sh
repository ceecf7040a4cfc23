#!/bin/bash
# contrib/vigild.service, made from its .in as make does, passes
# `systemd-analyze verify` without a word about it: ExecStart= points at a
# copy of the built vigild.  Skips without systemd-analyze.
. "$(dirname "$0")/lib.sh"
command -v systemd-analyze >/dev/null || exit 77

SRC=${TOP_SRCDIR:-$(dirname "$0")/../..}
mkdir -p "$T/sbin" "$T/unit"
cp "$VIGILD" "$T/sbin/vigild"
unit=$T/unit/vigild.service
sed -e "s|@sbindir@|$T/sbin|g" "$SRC/contrib/vigild.service.in" >"$unit"
! grep -n '@[a-z_]*@' "$unit" || fail "unsubstituted @var@ left in the unit"
grep -qx "ExecStart=$T/sbin/vigild" "$unit" || fail "no ExecStart= line"

# --man=no: the manuals are not installed here.  The units the file pulls
# in (network.target, ...) are the host's; only lines about ours count.
opts=(--man=no)
v=$(systemd-analyze --version | awk 'NR == 1 { print $2 }')
[ "${v:-0}" -ge 250 ] 2>/dev/null && opts+=(--recursive-errors=no)
rc=0
systemd-analyze verify "${opts[@]}" "$unit" >"$T/verify.out" 2>&1 || rc=$?
cat "$T/verify.out"
[ "$rc" -eq 0 ] || fail "systemd-analyze verify exited $rc"
! grep -e vigild -e "$unit" "$T/verify.out" ||
	fail "systemd-analyze verify warned about the unit"
log "ok (systemd $v)"
