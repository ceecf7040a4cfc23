#!/bin/sh
# On a "hybrid" host (cgroup v1 hierarchies beside cgroup2 at
# /sys/fs/cgroup/unified), hand to cgroup v2 every controller whose v1
# hierarchy holds no cgroup but its root: unmount that hierarchy, and
# the kernel offers the controller in cgroup2's cgroup.controllers.  The
# limits tests (tests/integration/cgroup-limits.sh) then check
# tasks_max, cpu_weight, cpu_max and io_weight on real controllers
# instead of skipping them.  A controller with cgroups of its own in v1
# (memory, on a host whose init uses it) stays where it is.
#
# This changes the machine until it reboots (or until the hierarchy is
# mounted again, once cgroup2 no longer uses the controller): CI runs it
# on its throwaway machine; run it by hand elsewhere.  Needs root.
# Prints what it handed over; exits 0 when there was nothing to do.
set -u
v2=/sys/fs/cgroup/unified
[ "$(id -u)" -eq 0 ] || { echo "cgroup-controllers: not root, nothing done"; exit 0; }
[ -f "$v2/cgroup.controllers" ] || {
	echo "cgroup-controllers: no hybrid hierarchy ($v2), nothing done"
	exit 0
}
moved=
for dir in pids cpu blkio; do
	d=/sys/fs/cgroup/$dir
	mountpoint -q "$d" || continue
	[ "$(stat -fc %T "$d")" = cgroupfs ] || continue
	# Only a hierarchy without child cgroups can go.
	[ -z "$(find "$d" -mindepth 1 -type d -print -quit)" ] || continue
	umount "$d" && moved="$moved $dir"
done
# The kernel frees a hierarchy after its last mount is gone: wait for the
# controllers to show up in cgroup2 (bounded: 5 s).
i=0
while [ $i -lt 50 ]; do
	case " $(cat "$v2/cgroup.controllers") " in
	*" pids "* | *" cpu "*) break ;;
	esac
	[ -n "$moved" ] || break
	sleep 0.1
	i=$((i + 1))
done
echo "cgroup-controllers: unmounted v1:${moved:- none}; cgroup2 offers: $(cat "$v2/cgroup.controllers")"
