#!/bin/sh
# Install what vigil needs to build and test on Debian 12 (bookworm).
# Runs apt-get through sudo when not root.
set -e
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
	autoconf automake make gcc clang libc6-dev pkg-config \
	libconfuse-dev libsqlite3-dev libsystemd-dev libbsd-dev \
	valgrind clang-format clang-tidy cppcheck mandoc shellcheck jq \
	procps util-linux systemd redis-server \
	systemd-container debootstrap debian-archive-keyring \
	ca-certificates tzdata sqlite3 python3 >/dev/null
