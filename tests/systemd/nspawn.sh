# shellcheck shell=bash disable=SC2034
# A minimal harness for tests that need a real systemd as PID 1: a Debian
# 12 container booted with systemd-nspawn from a cached debootstrap tree.
# Sourced by tests/integration/systemd.sh; needs root, systemd-nspawn,
# debootstrap, nsenter, flock and overlayfs.
#
#   nspawn_usable            0, or 1 with the reason in NSPAWN_WHY
#   nspawn_rootfs            the cached rootfs (debootstrap once, ~45 s;
#                            deadline 400 s scaled by VIGIL_TEST_SLOW,
#                            tried twice)
#   nspawn_prepare           a fresh overlay at $NSPAWN_ROOT to fill
#   nspawn_boot              boot it; wait until the system is running
#   nspawn_run CMD...        run CMD inside, clean env, bounded in time
#   nspawn_teardown          power off, unmount, remove what we created
#   nspawn_skip              skip the test for NSPAWN_WHY (see below)
#
# nspawn_rootfs, nspawn_prepare and nspawn_boot return 1 with NSPAWN_WHY
# set when the environment is at fault (no network, no overlayfs, nspawn
# cannot boot here): the caller skips with nspawn_skip, after sourcing
# lib.sh.  A reason the run's install could fix (a tool missing,
# debootstrap failed or timed out, the container did not boot) sets
# NSPAWN_FIXABLE=1, and then nspawn_skip fails the test in CI (lib.sh's
# skip_fixable); not root, no overlayfs are plain skips.  The cached tree
# is read-only for the tests (it is the overlay's lower layer), so runs
# can share it; each run has its own directory, machine name and host
# cgroups.  Every wait
# has a deadline; teardown ends only the processes that boot started.
# (SC2034: NSPAWN_WHY and NSPAWN_ROOT are read by the caller.)

: "${NSPAWN_CACHE:=/var/tmp/vigil-nspawn}"
: "${NSPAWN_SUITE:=bookworm}"
: "${NSPAWN_MIRROR:=}"
: "${NSPAWN_DEBOOTSTRAP_TIMEOUT:=400}"
: "${NSPAWN_BOOT_TIMEOUT:=60}"
# Both scaled by VIGIL_TEST_SLOW (its whole part), as the tests' waits
# are: a loaded machine unpacks and boots slower (issue 43).
_nspawn_slow=${VIGIL_TEST_SLOW:-1}
_nspawn_slow=${_nspawn_slow%%.*}
case $_nspawn_slow in '' | *[!0-9]* | 0) _nspawn_slow=1 ;; esac
NSPAWN_DEBOOTSTRAP_TIMEOUT=$((NSPAWN_DEBOOTSTRAP_TIMEOUT * _nspawn_slow))
NSPAWN_BOOT_TIMEOUT=$((NSPAWN_BOOT_TIMEOUT * _nspawn_slow))
: "${NSPAWN_TIMEOUT:=30}"
# 1: the container gets a pure cgroup2 hierarchy (its systemd runs
# "unified", as on a Debian 12 host) even on a hybrid host, with the
# controllers cgroup2 offers here enabled down to it.
: "${NSPAWN_UNIFIED:=0}"

# Bump when the provisioning below changes: a new tree is made.
NSPAWN_PKGS=systemd,systemd-sysv,dbus,procps
NSPAWN_TAG=$NSPAWN_SUITE-1
NSPAWN_LOWER=$NSPAWN_CACHE/rootfs-$NSPAWN_TAG
NSPAWN_MACHINE=vigil-t$$
NSPAWN_DIR=
NSPAWN_ROOT=
NSPAWN_PID=
NSPAWN_LEADER=
NSPAWN_BOOTED=0
NSPAWN_CGROUPS=
NSPAWN_WHY=
# 1 when NSPAWN_WHY is something the run's install could fix (a tool
# missing, debootstrap failed, the container did not boot): nspawn_skip
# then fails the test in CI (lib.sh's skip_fixable).
NSPAWN_FIXABLE=0

nspawn_ms() { echo $(($(date +%s%N) / 1000000)); }

nspawn_usable() {
	local t
	if [ "$(id -u)" -ne 0 ]; then
		NSPAWN_WHY="not root"
		return 1
	fi
	for t in systemd-nspawn debootstrap nsenter flock setsid mountpoint; do
		if ! command -v "$t" >/dev/null 2>&1; then
			NSPAWN_WHY="$t not installed"
			NSPAWN_FIXABLE=1
			return 1
		fi
	done
	if ! grep -qw overlay /proc/filesystems &&
		! modprobe overlay 2>/dev/null; then
		NSPAWN_WHY="no overlayfs"
		return 1
	fi
	return 0
}

# The Debian mirror apt uses on this machine, or deb.debian.org.
nspawn_mirror() {
	local m
	m=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' \
		/etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security |
		head -n 1)
	[ -n "$m" ] || m=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++)
		if ($i ~ /:\/\//) { print $i; exit } }' /etc/apt/sources.list \
		2>/dev/null)
	echo "${m:-http://deb.debian.org/debian}"
}

# Provision a debootstrapped tree: empty machine-id (a new one per boot),
# volatile journal without rate limit, no getty and no periodic jobs.
nspawn_provision() {
	local r=$1 u
	echo vigil-test >"$r/etc/hostname"
	: >"$r/etc/machine-id"
	rm -rf "$r"/var/log/journal/*
	mkdir -p "$r/etc/systemd/journald.conf.d"
	printf '[Journal]\nStorage=volatile\nRateLimitBurst=0\n' \
		>"$r/etc/systemd/journald.conf.d/50-vigil-test.conf"
	for u in console-getty.service getty@.service apt-daily.timer \
		apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer \
		e2scrub_reap.service man-db.timer systemd-tmpfiles-clean.timer \
		fstrim.timer; do
		ln -sf /dev/null "$r/etc/systemd/system/$u"
	done
}

# Make the cached tree unless it is there; one maker at a time.
nspawn_rootfs() {
	local tmp log rc=0 t0 try
	mkdir -p "$NSPAWN_CACHE"
	[ -f "$NSPAWN_LOWER.ok" ] && return 0
	exec 9>"$NSPAWN_CACHE/lock"
	# Another test may be making it: two attempts and a margin.
	if ! flock -w $((2 * NSPAWN_DEBOOTSTRAP_TIMEOUT + 60)) 9; then
		exec 9>&-
		NSPAWN_WHY="timed out waiting for $NSPAWN_CACHE/lock"
		NSPAWN_FIXABLE=1
		return 1
	fi
	if [ ! -f "$NSPAWN_LOWER.ok" ]; then
		[ -n "$NSPAWN_MIRROR" ] || NSPAWN_MIRROR=$(nspawn_mirror)
		tmp=$NSPAWN_LOWER.tmp
		log=$NSPAWN_CACHE/debootstrap.log
		rm -rf "$tmp" "$NSPAWN_LOWER"
		t0=$(nspawn_ms)
		# Once more if it fails or times out (a mirror's hiccup).
		for try in 1 2; do
			rc=0
			echo "# debootstrap $NSPAWN_SUITE from $NSPAWN_MIRROR into $NSPAWN_LOWER (try $try, at most ${NSPAWN_DEBOOTSTRAP_TIMEOUT}s)"
			timeout -k 10 "$NSPAWN_DEBOOTSTRAP_TIMEOUT" debootstrap \
				--variant=minbase --include="$NSPAWN_PKGS" \
				"$NSPAWN_SUITE" "$tmp" "$NSPAWN_MIRROR" >"$log" 2>&1 || rc=$?
			[ "$rc" -eq 0 ] && break
			tail -n 5 "$log" | sed 's/^/# /'
			rm -rf "$tmp"
		done
		if [ "$rc" -ne 0 ]; then
			NSPAWN_WHY="debootstrap failed twice ($rc; 124: timed out after ${NSPAWN_DEBOOTSTRAP_TIMEOUT}s), see $log"
			NSPAWN_FIXABLE=1
		else
			nspawn_provision "$tmp"
			mv "$tmp" "$NSPAWN_LOWER"
			touch "$NSPAWN_LOWER.ok"
			echo "# rootfs made in $(($(nspawn_ms) - t0)) ms"
		fi
	fi
	flock -u 9
	exec 9>&-
	[ "$rc" -eq 0 ]
}

# A per-run directory with a fresh overlay mounted at $NSPAWN_ROOT.
nspawn_prepare() {
	NSPAWN_DIR=$(mktemp -d "$NSPAWN_CACHE/run.XXXXXX")
	mkdir "$NSPAWN_DIR/upper" "$NSPAWN_DIR/work" "$NSPAWN_DIR/root"
	if ! mount -t overlay overlay -o "lowerdir=$NSPAWN_LOWER,upperdir=$NSPAWN_DIR/upper,workdir=$NSPAWN_DIR/work" \
		"$NSPAWN_DIR/root" 2>"$NSPAWN_DIR/mount.err"; then
		NSPAWN_WHY="cannot mount overlayfs: $(cat "$NSPAWN_DIR/mount.err")"
		return 1
	fi
	NSPAWN_ROOT=$NSPAWN_DIR/root
}

# This shell's cgroup in the hierarchy at /sys/fs/cgroup/$1 (systemd or
# unified), from /proc/self/cgroup.
nspawn_cg_self() {
	local want=
	[ "$1" = systemd ] && want=name=systemd
	awk -F: -v w="$want" '{ n = split($2, c, ",")
		if (w == "" && $2 == "") { print $3; exit }
		for (i = 1; i <= n; i++) if (c[i] == w) { print $3; exit } }' \
		/proc/self/cgroup
}

# Without systemd on the host there is no machined and no bus: nspawn
# must not register and must stay in its cgroup, which it then splits.
# Give it a cgroup of its own below ours in each named hierarchy.
nspawn_cgroups() {
	local hs hk h d
	if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
		hs=/sys/fs/cgroup:unified
	elif [ "$NSPAWN_UNIFIED" = 1 ]; then
		hs=/sys/fs/cgroup/unified:unified
	else
		hs="/sys/fs/cgroup/systemd:systemd /sys/fs/cgroup/unified:unified"
	fi
	for hk in $hs; do
		h=${hk%%:*}
		[ -f "$h/cgroup.procs" ] || continue
		d=$h$(nspawn_cg_self "${hk#*:}")/$NSPAWN_MACHINE
		d=${d//\/\//\/}
		mkdir -p "$d" || return 1
		NSPAWN_CGROUPS="$NSPAWN_CGROUPS $d"
		[ "$NSPAWN_UNIFIED" = 1 ] && [ "${hk#*:}" = unified ] &&
			nspawn_controllers "$d"
	done
}

# nspawn_controllers DIR: enable in DIR's parent every controller it
# offers (nspawn passes them on to the container from there).  Only the
# parent: the "no internal processes" rule keeps them off a cgroup with
# processes, which the top one never is.
nspawn_controllers() {
	local p c cs=()
	p=$(dirname "$1")
	read -r -a cs <"$p/cgroup.controllers" 2>/dev/null || true
	for c in "${cs[@]}"; do
		echo "+$c" >"$p/cgroup.subtree_control" 2>/dev/null || true
	done
	return 0
}

# With NSPAWN_UNIFIED=1: the controllers reach the container's root (its
# payload/ cgroup) only once systemd-nspawn has moved itself into its
# supervisor/ leaf, so they are enabled after the boot, and the
# container's systemd, which reads what its root offers when it starts,
# is re-executed to see them.
nspawn_pass_controllers() {
	local d st='' i
	for d in $NSPAWN_CGROUPS; do
		[ -d "$d/payload" ] && nspawn_controllers "$d/payload"
	done
	nspawn_run systemctl daemon-reexec || return 0
	for i in $(seq 50); do
		st=$(NSPAWN_TIMEOUT=5 nspawn_run systemctl is-system-running 2>/dev/null) || true
		case $st in
		running | degraded) return 0 ;;
		esac
		sleep 0.1
	done
	echo "# the container is '$st' after daemon-reexec"
}

# The container's PID 1 (host pid), a child of systemd-nspawn.
nspawn_leader() {
	local c kids
	[ -n "$NSPAWN_PID" ] || return 0
	kids=$(cat /proc/"$NSPAWN_PID"/task/*/children 2>/dev/null)
	for c in $kids; do
		if [ "$(cat /proc/"$c"/comm 2>/dev/null)" = systemd ]; then
			echo "$c"
			return 0
		fi
	done
}

nspawn_alive() { [ -n "$1" ] && [ -d "/proc/$1" ]; }

nspawn_boot() {
	local args deadline st='' t0
	args=(-D "$NSPAWN_ROOT" -M "$NSPAWN_MACHINE" -b --console=read-only
		--private-network --link-journal=no)
	if [ ! -d /run/systemd/system ]; then
		args+=(--register=no --keep-unit)
		nspawn_cgroups || {
			NSPAWN_WHY="cannot make host cgroups"
			return 1
		}
	fi
	t0=$(nspawn_ms)
	# In a session of its own (a ^C reaches the test, whose trap powers
	# the container off), in its cgroups before it starts.
	local unified=
	[ "$NSPAWN_UNIFIED" = 1 ] && unified=SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1
	# shellcheck disable=SC2016
	env $unified CG="$NSPAWN_CGROUPS" PF="$NSPAWN_DIR/nspawn.pid" setsid bash -c '
		for d in $CG; do echo $$ >"$d/cgroup.procs" || exit 125; done
		echo $$ >"$PF"
		exec systemd-nspawn "$@"' nspawn "${args[@]}" \
		</dev/null >"$NSPAWN_DIR/boot.log" 2>&1 &
	deadline=$(($(nspawn_ms) + 5000))
	until [ -s "$NSPAWN_DIR/nspawn.pid" ]; do
		if [ "$(nspawn_ms)" -ge "$deadline" ]; then
			NSPAWN_WHY="systemd-nspawn did not start: $(tail -n 5 "$NSPAWN_DIR/boot.log")"
			NSPAWN_FIXABLE=1
			return 1
		fi
		sleep 0.02
	done
	NSPAWN_PID=$(cat "$NSPAWN_DIR/nspawn.pid")
	deadline=$(($(nspawn_ms) + NSPAWN_BOOT_TIMEOUT * 1000))
	while [ "$(nspawn_ms)" -lt "$deadline" ]; do
		if ! nspawn_alive "$NSPAWN_PID"; then
			NSPAWN_WHY="systemd-nspawn exited during boot: $(tail -n 5 "$NSPAWN_DIR/boot.log")"
			NSPAWN_FIXABLE=1
			return 1
		fi
		NSPAWN_LEADER=$(nspawn_leader)
		if [ -n "$NSPAWN_LEADER" ]; then
			st=$(NSPAWN_TIMEOUT=5 nspawn_run systemctl is-system-running \
				2>/dev/null) || true
			case $st in
			running | degraded) break ;;
			esac
		fi
		sleep 0.1
	done
	case $st in
	running | degraded) ;;
	*)
		NSPAWN_WHY="container not running after ${NSPAWN_BOOT_TIMEOUT}s (state '$st'): $(tail -n 5 "$NSPAWN_DIR/boot.log")"
		NSPAWN_FIXABLE=1
		return 1
		;;
	esac
	NSPAWN_BOOTED=1
	[ "$NSPAWN_UNIFIED" = 1 ] && nspawn_pass_controllers
	echo "# booted $NSPAWN_MACHINE in $(($(nspawn_ms) - t0)) ms ($st)"
	[ "$st" = running ] || nspawn_run systemctl --failed --no-legend | sed 's/^/# /'
	return 0
}

# nspawn_skip: skip the test for NSPAWN_WHY: with lib.sh's skip_fixable
# when NSPAWN_FIXABLE is 1 (a failure in CI), else plainly (77).
nspawn_skip() {
	[ "$NSPAWN_FIXABLE" = 1 ] && skip_fixable "$NSPAWN_WHY"
	skip "$NSPAWN_WHY"
}

# nspawn_run CMD...: run CMD in all namespaces of the container's PID 1
# with a clean environment, for at most NSPAWN_TIMEOUT seconds.
nspawn_run() {
	[ -n "$NSPAWN_LEADER" ] || {
		echo "nspawn_run: container not running" >&2
		return 1
	}
	timeout -k 5 "$NSPAWN_TIMEOUT" nsenter -t "$NSPAWN_LEADER" -a -- \
		/usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 SYSTEMD_PAGER= SYSTEMD_COLORS=0 "$@"
}

# Power off (SIGTERM to nspawn), at most 30 s (3 s if the boot did not
# finish), then SIGKILL to the two processes boot started; unmount and
# remove the run directory, the host cgroups and what nspawn leaves under
# /run when /run is not a tmpfs.
nspawn_teardown() {
	local deadline d p wait_ms=3000
	[ "$NSPAWN_BOOTED" = 1 ] && wait_ms=30000
	[ -n "$NSPAWN_LEADER" ] || NSPAWN_LEADER=$(nspawn_leader)
	if nspawn_alive "$NSPAWN_PID"; then
		kill -TERM "$NSPAWN_PID" 2>/dev/null
		deadline=$(($(nspawn_ms) + wait_ms))
		while nspawn_alive "$NSPAWN_PID" &&
			[ "$(nspawn_ms)" -lt "$deadline" ]; do
			sleep 0.1
		done
		if nspawn_alive "$NSPAWN_PID"; then
			echo "# container still up after $wait_ms ms: SIGKILL" >&2
			nspawn_alive "$NSPAWN_LEADER" && kill -KILL "$NSPAWN_LEADER"
			kill -KILL "$NSPAWN_PID" 2>/dev/null
		fi
		wait "$NSPAWN_PID" 2>/dev/null
	fi
	NSPAWN_PID='' NSPAWN_LEADER='' NSPAWN_BOOTED=0
	if [ -n "$NSPAWN_ROOT" ] && mountpoint -q "$NSPAWN_ROOT"; then
		for _ in 1 2 3 4 5; do
			umount "$NSPAWN_ROOT" 2>/dev/null && break
			sleep 0.2
		done
		mountpoint -q "$NSPAWN_ROOT" && umount -l "$NSPAWN_ROOT"
	fi
	if [ -n "$NSPAWN_DIR" ] && ! mountpoint -q "$NSPAWN_ROOT"; then
		rm -rf "$NSPAWN_DIR"
	fi
	NSPAWN_DIR='' NSPAWN_ROOT=''
	# Whatever is left in our cgroups was started by nspawn_boot (say, a
	# container whose PID 1 boot did not see yet): kill it.  The killed
	# take a moment to leave.
	for d in $NSPAWN_CGROUPS; do
		[ -d "$d" ] || continue
		find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null |
			while read -r p; do kill -KILL "$p" 2>/dev/null; done
	done
	deadline=$(($(nspawn_ms) + 5000))
	for d in $NSPAWN_CGROUPS; do
		while [ -d "$d" ]; do
			find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
			[ -d "$d" ] && [ "$(nspawn_ms)" -lt "$deadline" ] || break
			sleep 0.1
		done
		[ -d "$d" ] && echo "# could not remove cgroup $d" >&2
	done
	NSPAWN_CGROUPS=''
	rm -rf "/run/systemd/nspawn/propagate/$NSPAWN_MACHINE" \
		"/run/systemd/nspawn/unix-export/$NSPAWN_MACHINE"
	return 0
}
