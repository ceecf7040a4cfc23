#!/bin/sh
# Install what vigil needs on Debian 12 (bookworm):
#   contrib/install-deps.sh          to build vigil and run it
#   contrib/install-deps.sh --test   that and the tools tests/run-all.sh
#                                    uses (compilers, valgrind, linters,
#                                    redis-server, supervisord,
#                                    PostgreSQL, systemd-nspawn, ...)
# Runs apt-get through sudo when not root.
#
# No service starts while it runs.  Some test tools come in packages
# whose scripts start a service on a host booted with systemd (the tests
# run redis-server's and supervisord's binaries themselves, never their
# services: redis would listen on port 6379, supervisord run the host's
# /etc/supervisor).  So a policy-rc.d that refuses every start (exit
# 101; both invoke-rc.d and deb-systemd-invoke obey it) stands in for the
# host's own during the install, which is put back afterwards, and
# redis-server, supervisor, postgresql (Debian's main cluster, port 5432:
# the tests run private servers) and pgbouncer, when installed here, are
# disabled so that they do not start at the next boot either.
set -e
test=
case ${1-} in
'') ;;
--test) test=1 ;;
*)
	echo "usage: $0 [--test]" >&2
	exit 2
	;;
esac
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive

# To build vigil (configure.ac; libpq for cluster mode) and to run it
# (cron schedules in local time need the zone files).
pkgs="autoconf automake make gcc libc6-dev pkg-config libconfuse-dev
	libsqlite3-dev libsystemd-dev libbsd-dev libmicrohttpd-dev libpq-dev
	tzdata"
# tests/run-all.sh: clang, ASan and libFuzzer; valgrind; the lint stage;
# the black-box tests (jq, sqlite3 and python3 read state.db, procps,
# setpriv and flock from util-linux, chattr and lsattr from e2fsprogs,
# systemd-analyze, redis-server, supervisord for the round trip of
# vigilctl import supervisord, prometheus_client's parser for vigilctl
# metrics, curl for the HTTP API, Chromium and its WebDriver for the
# dashboard; PostgreSQL's server, pgbouncer and psycopg2 for the cluster
# tests); the systemd tests in a container booted by systemd-nspawn from
# a debootstrapped tree; the Debian package (make deb, lintian);
# stress-ng for tests/run-all.sh --load.
[ -z "$test" ] || pkgs="$pkgs clang valgrind clang-format clang-tidy
	cppcheck mandoc shellcheck git jq procps util-linux e2fsprogs
	sqlite3 python3 systemd redis-server supervisor
	python3-prometheus-client curl
	chromium chromium-driver postgresql pgbouncer python3-psycopg2
	systemd-container debootstrap
	debian-archive-keyring ca-certificates dpkg-dev debhelper lintian
	stress-ng"

policy=/usr/sbin/policy-rc.d
saved=$policy.vigil-saved
restore_policy() {
	$SUDO rm -f "$policy"
	if [ -e "$saved" ] || [ -L "$saved" ]; then
		$SUDO mv "$saved" "$policy"
	fi
}
# A $saved left by a run that was killed is the host's own: keep it.
if { [ -e "$policy" ] || [ -L "$policy" ]; } &&
	! { [ -e "$saved" ] || [ -L "$saved" ]; }; then
	$SUDO mv "$policy" "$saved"
fi
trap restore_policy EXIT
trap 'exit 1' HUP INT TERM
printf '#!/bin/sh\n# contrib/install-deps.sh is running: no service starts.\nexit 101\n' |
	$SUDO tee "$policy" >/dev/null
$SUDO chmod 755 "$policy"

# The services of test tools that this run installs: disabled at boot.
had=
for p in redis-server supervisor postgresql pgbouncer; do
	[ "$(dpkg-query -W -f='${Status}' $p 2>/dev/null || true)" != \
		"install ok installed" ] || had="$had $p"
done
$SUDO apt-get update -qq
# shellcheck disable=SC2086 # one word per package
$SUDO apt-get install -y -qq --no-install-recommends $pkgs >/dev/null
[ -n "$test" ] || exit 0
for p in redis-server supervisor postgresql pgbouncer; do
	case " $had " in *" $p "*) continue ;; esac
	{ ! command -v systemctl >/dev/null ||
		$SUDO systemctl --quiet disable $p.service; } &&
		{ ! command -v update-rc.d >/dev/null ||
			$SUDO update-rc.d $p disable >/dev/null; } ||
		echo "$0: could not disable $p at boot" >&2
done
