#!/bin/bash
# The vigild.service that `make install DESTDIR=...` puts in place passes
# `systemd-analyze verify` without a word about it: no @var@ left,
# ExecStart= names the installed vigild and ExecReload= the installed
# vigilctl's reload.  The build directory is the one
# of $VIGILD (or $TOP_BUILDDIR).  Skips without systemd-analyze or make.
. "$(dirname "$0")/lib.sh"
need_cmd systemd-analyze systemd
need_cmd make make

B=${TOP_BUILDDIR:-$(dirname "$VIGILD")/..}
[ -f "$B/Makefile" ] || skip "no Makefile in $B (not run from a build directory)"
D=$T/dest
# Not the make flags of the `make check` that runs this test.
env -u MAKEFLAGS -u MFLAGS make -s -C "$B" install DESTDIR="$D" \
	>"$T/install.out" 2>&1 || { cat "$T/install.out"; fail "make install failed"; }
inst=$(find "$D" -path '*/lib/systemd/system/vigild.service')
[ -n "$inst" ] && [ -f "$inst" ] || fail "make install put no vigild.service under $D"
log "installed: ${inst#"$D"}"
! grep -n '@[a-z_]*@' "$inst" || fail "unsubstituted @var@ in the installed unit"
exec_start=$(sed -n 's/^ExecStart=//p' "$inst")
case $exec_start in
/*/vigild) ;;
*) fail "ExecStart=$exec_start is not an absolute path to vigild" ;;
esac
[ -x "$D$exec_start" ] || fail "ExecStart=$exec_start: not installed at that path"
# ExecReload= is the installed vigilctl's reload (which can fail, issue 38).
exec_reload=$(sed -n 's/^ExecReload=//p' "$inst")
case $exec_reload in
/*/vigilctl\ reload) ;;
*) fail "ExecReload=$exec_reload is not the installed vigilctl's reload" ;;
esac
[ -x "$D${exec_reload% reload}" ] || fail "ExecReload=$exec_reload: not installed at that path"
# ExecStop= is the installed vigilctl's shutdown, with the default
# KillMode=control-group: a stop is vigild's own, and jobs of a vigild
# that died get SIGTERM and TimeoutStopSec, not an instant SIGKILL
# (issue 38).
exec_stop=$(sed -n 's/^ExecStop=//p' "$inst")
case $exec_stop in
/*/vigilctl\ shutdown) ;;
*) fail "ExecStop=$exec_stop is not the installed vigilctl's shutdown" ;;
esac
[ -x "$D${exec_stop% shutdown}" ] || fail "ExecStop=$exec_stop: not installed at that path"
grep -qx 'KillMode=control-group' "$inst" || fail "KillMode is not control-group: $(grep KillMode "$inst")"

# The unit as installed, but with ExecStart= pointing into DESTDIR: verify
# checks that the command exists.  --man=no: the manuals are not installed
# on the host.  The units the file pulls in (network.target, ...) are the
# host's; only lines about ours count.
mkdir -p "$T/unit"
unit=$T/unit/vigild.service
sed -e "s|^ExecStart=/|ExecStart=$D/|" -e "s|^ExecReload=/|ExecReload=$D/|" \
	-e "s|^ExecStop=/|ExecStop=$D/|" "$inst" >"$unit"
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
