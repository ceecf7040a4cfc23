#!/bin/bash
# contrib/install-deps.sh installs the build dependencies alone, and the
# test tools too with --test; no service may start while it installs.
# It runs in a private mount namespace whose /usr/sbin is a scratch
# directory holding a host policy-rc.d that allows everything, with
# apt-get, dpkg-query, systemctl and update-rc.d replaced by stubs that
# write down what they are asked.  During each `apt-get install`, the
# policy-rc.d in place must refuse to start redis-server (exit 101);
# afterwards the host's must be back, and the redis-server, supervisor,
# postgresql and pgbouncer installed by the script disabled at boot.
# Skips without root or unshare(1).
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "not root: the test mounts over /usr/sbin in a mount namespace"
need_cmd unshare util-linux
unshare -m --propagation private true 2>/dev/null ||
	skip "cannot make a private mount namespace (unshare -m failed)"

SRC=${TOP_SRCDIR:-$(dirname "$0")/../..}
mkdir -p "$T/sbin" "$T/bin"
host_policy='#!/bin/sh
# the host: allow
exit 0'
printf '%s\n' "$host_policy" >"$T/sbin/policy-rc.d"
chmod 755 "$T/sbin/policy-rc.d"
stub() {
	printf '#!/bin/sh\n%s\n' "$2" >"$T/bin/$1"
	chmod 755 "$T/bin/$1"
}
stub apt-get "[ \"\$1\" != update ] || exit 0
echo \"\$*\" >>'$T/apt.args'
if [ -x /usr/sbin/policy-rc.d ]; then
	/usr/sbin/policy-rc.d redis-server start >/dev/null 2>&1
	echo \$? >>'$T/apt.policy'
else
	echo none >>'$T/apt.policy'
fi"
stub dpkg-query "exit 1"
stub systemctl "echo \"\$*\" >>'$T/systemctl.args'"
stub update-rc.d "echo \"\$*\" >>'$T/update-rc.d.args'"

# run ARGS...: contrib/install-deps.sh ARGS in the namespace.
run() {
	rm -f "$T"/*.args "$T/apt.policy"
	# shellcheck disable=SC2016 # expanded by that sh
	unshare -m --propagation private sh -c 'mount --bind "$1" /usr/sbin &&
		shift && exec env PATH="$0:/usr/bin:/bin" sh "$@"' \
		"$T/bin" "$T/sbin" "$SRC/contrib/install-deps.sh" "$@" >"$T/run.out" 2>&1 ||
		{ cat "$T/run.out"; fail "install-deps.sh $* failed"; }
	[ -s "$T/apt.args" ] || fail "install-deps.sh $*: no apt-get install"
	log "install-deps.sh $*: $(cat "$T/apt.args")"
	! grep -vx 101 "$T/apt.policy" ||
		fail "install-deps.sh $*: policy-rc.d lets services start during the install"
	[ "$(cat "$T/sbin/policy-rc.d")" = "$host_policy" ] ||
		fail "install-deps.sh $*: the host's policy-rc.d was not put back"
	[ "$(ls "$T/sbin")" = policy-rc.d ] ||
		fail "install-deps.sh $*: left in /usr/sbin: $(ls "$T/sbin")"
}
has() { tr ' ' '\n' <"$T/apt.args" | grep -qx "$1"; }

run
for p in gcc autoconf automake pkg-config libconfuse-dev libsqlite3-dev \
	libsystemd-dev libbsd-dev libpq-dev; do
	has "$p" || fail "build dependency $p not installed"
done
for p in redis-server supervisor valgrind clang-tidy systemd-container debootstrap \
	postgresql pgbouncer; do
	! has "$p" || fail "test tool $p installed without --test"
done
[ ! -e "$T/systemctl.args" ] || fail "systemctl called without --test"

run --test
for p in gcc libconfuse-dev redis-server supervisor valgrind clang clang-tidy cppcheck \
	shellcheck jq sqlite3 python3 python3-prometheus-client systemd e2fsprogs \
	systemd-container debootstrap postgresql pgbouncer python3-psycopg2; do
	has "$p" || fail "--test: $p not installed"
done
for p in redis-server supervisor postgresql pgbouncer; do
	grep -q "disable $p.service" "$T/systemctl.args" ||
		fail "--test: $p not disabled at boot"
done
log "ok"
