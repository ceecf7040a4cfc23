#!/bin/bash
# The Debian package under a real systemd (issue 24): `make deb` on this
# host, then in a Debian 12 container booted with systemd-nspawn
# (tests/systemd/nspawn.sh) `apt-get install ./vigil_*.deb`: vigild is
# active; root and a member of the group vigil control it, another user
# only reads; a job dropped into /etc/vigil/jobs.d runs after `systemctl
# reload vigild`; `systemctl stop vigild` leaves no job process; an
# upgrade to a higher version restarts vigild and its jobs; `apt-get
# purge` removes the unit, the configuration it installed, the state and
# the logs (a job file the administrator added stays).  The container has no
# network: the libraries the package needs that Debian's minbase lacks
# are fetched on this host with apt-get download and installed with it.
# Skips (77) without root or overlayfs, under VIGILD_WRAPPER (the
# package is built without it) or VIGIL_SKIP_DEB; and without
# systemd-nspawn, debootstrap, dpkg-buildpackage or debhelper, when
# debootstrap fails, a dependency cannot be fetched or the container does
# not boot, all of which fail it in CI instead (lib.sh's skip_fixable).
# shellcheck disable=SC2016 # dpkg-query's ${Field} formats
HERE=$(cd "$(dirname "$0")" && pwd)
: "${NSPAWN_UNIFIED:=1}"
# shellcheck source=tests/systemd/nspawn.sh
. "$HERE/../systemd/nspawn.sh"

# skip REASON: lib.sh's, before lib.sh is sourced (no temp dir needed).
skip() {
	printf 'SKIP: %s\n' "$*"
	exit 77
}

[ -z "${VIGILD_WRAPPER:-}" ] || skip "the package is built without the wrapper"
# The package is built from the tree, not from the build under test: the
# same in every stage of tests/run-all.sh, which tests it in stage 1 only.
[ -z "${VIGIL_SKIP_DEB:-}" ] || skip "VIGIL_SKIP_DEB is set"

. "$HERE/lib.sh"

command -v dpkg-buildpackage >/dev/null || skip_fixable "no dpkg-buildpackage (dpkg-dev)"
command -v dh >/dev/null || skip_fixable "no debhelper"
nspawn_usable || nspawn_skip

MARK=VIGIL_DEB_TEST=$$.$RANDOM
FAILS=0
bad() {
	printf 'FAIL: %s\n' "$*" >&2
	FAILS=$((FAILS + 1))
}
deb_exit() {
	local rc=$?
	set +e
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && [ -n "$NSPAWN_LEADER" ]; then
		echo "# journal of vigild.service:" >&2
		nspawn_run journalctl --no-pager -o cat -u vigild.service |
			tail -n 40 >&2
	fi
	nspawn_teardown
	(exit "$rc")
	cleanup
}
trap deb_exit EXIT

sc() { nspawn_run systemctl "$@"; }
active() { [ "$(sc is-active vigild.service 2>/dev/null)" = active ]; }
vctl() { nspawn_run vigilctl "$@"; }
cstate() { vctl status "$1" 2>/dev/null | awk 'NR == 2 { print $2 }'; }
is_cstate() { [ "$(cstate "$1")" = "$2" ]; }
# The job processes of this test (host pids), found by their environment.
jobprocs() { procs_marked "$MARK"; }

# ---------------------------------------------------------------- build
B=${TOP_BUILDDIR:-$(dirname "$VIGILD")/..}
[ -f "$B/Makefile" ] || skip "no Makefile in $B"
t=$(now_ms)
# The package as Debian builds it, but not optimised: this test is about
# what the package installs and how it runs under systemd, and the
# compile is the fourth of the CI run (issue 43).  Still stripped, with
# its debug-symbols package (checked below).  A caller's
# DEB_BUILD_OPTIONS win.
DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS:-noopt parallel=2} \
	env -u MAKEFLAGS -u MFLAGS make -s -C "$B" deb >"$T/deb.out" 2>&1 ||
	fail "make deb failed: $(tail -n 30 "$T/deb.out")"
DEB=$(find "$B" -maxdepth 1 -name 'vigil_*.deb' | head -n 1)
[ -f "$DEB" ] || fail "make deb made no vigil_*.deb: $(ls "$B")"
ls "$B"/vigil-dbgsym_*.deb >/dev/null 2>&1 || bad "no vigil-dbgsym package"
log "built $(basename "$DEB") in $(($(now_ms) - t)) ms"
# lintian: no error and no warning (infos are listed in the log).
if command -v lintian >/dev/null; then
	lintian -I --fail-on error,warning "$DEB" >"$T/lintian.out" 2>&1 ||
		bad "lintian: $(grep -v 'root privileges' "$T/lintian.out")"
	log "lintian: $(grep -v 'root privileges' "$T/lintian.out" | tr '\n' ' ')"
fi
# A higher version of the same build, for the upgrade.
VER=$(dpkg-deb -f "$DEB" Version)
mkdir -p "$T/up"
dpkg-deb -R "$DEB" "$T/up/pkg" &&
	sed -i "s/^Version: .*/Version: $VER+up1/" "$T/up/pkg/DEBIAN/control" &&
	dpkg-deb -b "$T/up/pkg" "$T/up/vigil_${VER}+up1.deb" >/dev/null ||
	fail "could not make the upgrade package"

# ---------------------------------------------------------------- container
nspawn_rootfs || nspawn_skip
nspawn_prepare || nspawn_skip
R=$NSPAWN_ROOT
mkdir -p "$R/root/debs"
cp "$DEB" "$R/root/debs/"
cp "$T/up/vigil_${VER}+up1.deb" "$R/root/"
# What the package depends on that the container lacks, from this host's
# mirror: the dependencies and recommends of the package (apt installs
# both), and their dependencies, not yet installed in the container's root.
need=$({ dpkg-deb -f "$DEB" Depends; echo ,; dpkg-deb -f "$DEB" Recommends; } |
	tr ',' '\n' | sed 's/(.*//; s/|.*//; s/ //g')
want=
seen=
while [ -n "$need" ]; do
	next=
	for p in $need; do
		case " $seen " in *" $p "*) continue ;; esac
		seen="$seen $p"
		dpkg-query --admindir="$R/var/lib/dpkg" -W -f '${Status}' "$p" 2>/dev/null |
			grep -q 'install ok installed' && continue
		want="$want $p"
		next="$next $(apt-cache depends --no-recommends --no-suggests \
			--no-conflicts --no-breaks --no-replaces --no-enhances "$p" 2>/dev/null |
			sed -n 's/^ *Depends: //p' | tr -d '<>' | sort -u | tr '\n' ' ')"
	done
	need=$next
done
if [ -n "$want" ]; then
	# shellcheck disable=SC2086 # a list of package names
	(cd "$R/root/debs" && timeout 120 apt-get download $want) >"$T/download.out" 2>&1 ||
		skip_fixable "cannot fetch$want: $(tail -n 3 "$T/download.out")"
fi
log "fetched for the container:${want:- nothing}"

nspawn_boot || nspawn_skip

# ---------------------------------------------------------------- install
t=$(now_ms)
# (30 s on an idle machine: load 20 ran past it, VIGIL_TEST_SLOW scales it.)
NSPAWN_TIMEOUT=$(slow_s 30) nspawn_run sh -c 'cd /root/debs && apt-get install -y ./*.deb' \
	>"$T/install.out" 2>&1 || fail "apt-get install failed: $(tail -n 20 "$T/install.out")"
log "apt-get install in $(($(now_ms) - t)) ms"
retry 10 active || fail "vigild is $(sc is-active vigild.service) after install"
[ "$(sc is-enabled vigild.service)" = enabled ] || bad "vigild.service is not enabled"
nspawn_run test -f /etc/vigil/vigil.conf || bad "no /etc/vigil/vigil.conf"
nspawn_run test -f /etc/vigil/jobs.d/example.conf.disabled || bad "no disabled example"
nspawn_run getent group vigil >/dev/null || bad "no group vigil"
nspawn_run dpkg-query -W -f '${Conffiles}' vigil | grep -q /etc/vigil/vigil.conf ||
	bad "/etc/vigil/vigil.conf is not a conffile"

# ---------------------------------------------------------------- rights
nspawn_run useradd -m -G vigil alice || fail "useradd alice"
nspawn_run useradd -m bob || fail "useradd bob"
vctl status >/dev/null || bad "root: vigilctl status failed"
nspawn_run runuser -u alice -- vigilctl status >/dev/null ||
	bad "alice (group vigil): vigilctl status failed"
nspawn_run runuser -u alice -- vigilctl reload >/dev/null ||
	bad "alice (group vigil) may not reload"
rc=0
nspawn_run runuser -u bob -- vigilctl reload >"$T/bob.out" 2>&1 || rc=$?
[ "$rc" -ne 0 ] || bad "bob (not in group vigil) could reload"
log "bob: exit $rc: $(head -n 1 "$T/bob.out")"

# ---------------------------------------------------------------- a job
printf 'command = "sleep 100000"\nenvironment = {"%s"}\n' "$MARK" \
	>"$R/etc/vigil/jobs.d/job.conf"
sc reload vigild.service || bad "systemctl reload failed"
retry 10 is_cstate job RUNNING || fail "the dropped-in job is '$(cstate job)'"
retry 5 test -n "$(jobprocs)" || fail "no job process"
old=$(jobprocs)
pid0=$(sc show -p MainPID --value vigild.service)

# ---------------------------------------------------------------- upgrade
nspawn_run apt-get install -y "/root/vigil_${VER}+up1.deb" \
	>"$T/upgrade.out" 2>&1 || fail "upgrade failed: $(tail -n 20 "$T/upgrade.out")"
[ "$(nspawn_run dpkg-query -W -f '${Version}' vigil)" = "$VER+up1" ] ||
	bad "the version after the upgrade is $(nspawn_run dpkg-query -W -f '${Version}' vigil)"
retry 10 active || fail "vigild not active after the upgrade"
pid1=$(sc show -p MainPID --value vigild.service)
[ "$pid1" != "$pid0" ] || bad "the upgrade did not restart vigild (MainPID $pid0)"
retry 10 is_cstate job RUNNING || bad "the job is '$(cstate job)' after the upgrade"
for p in $old; do
	retry 5 dead "$p" || bad "job process $p survived the restart of vigild"
done
log "upgrade: vigild $pid0 -> $pid1, the job restarted with it"

# ---------------------------------------------------------------- stop
sc stop vigild.service || bad "systemctl stop failed"
retry 5 test -z "$(jobprocs)" || bad "job processes left after stop: $(jobprocs)"
sc start vigild.service || bad "systemctl start failed"
retry 10 is_cstate job RUNNING || bad "the job is '$(cstate job)' after start"

# ---------------------------------------------------------------- purge
nspawn_run apt-get purge -y vigil >"$T/purge.out" 2>&1 ||
	fail "purge failed: $(tail -n 20 "$T/purge.out")"
retry 5 test -z "$(jobprocs)" || bad "job processes left after purge: $(jobprocs)"
for d in /var/lib/vigil /var/log/vigil /etc/vigil/vigil.conf \
	/etc/vigil/jobs.d/example.conf.disabled /lib/systemd/system/vigild.service \
	/usr/sbin/vigild; do
	nspawn_run test -e "$d" && bad "$d is still there after purge"
done
# What the administrator put there is theirs: it stays.
nspawn_run test -f /etc/vigil/jobs.d/job.conf || bad "purge removed a job file it did not install"
[ "$(sc is-active vigild.service 2>/dev/null)" != active ] || bad "vigild still active after purge"

[ "$FAILS" -eq 0 ] || fail "$FAILS checks failed"
log "ok"
