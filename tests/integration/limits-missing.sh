#!/bin/bash
# shellcheck disable=SC2317 # predicates called through retry
# Limits are enforced or loudly not (issue 38): a cgroup limit whose
# controller is not there is a warning of vigild -t per job and option, a
# line of `status JOB` ("limits not enforced: ..."), a field of status
# --json and a metric; with limits = "require" (a job's, or vigil.conf's
# default) the job does not run unbounded: it is BROKEN with the reason,
# vigild -t fails, and a reload that brings one in changes nothing.
# First without cgroups (cgroup = "off"), then, where this host lets the
# test make cgroups, in a delegated cgroup that has no controllers at all:
# a host whose cgroup2 lacks them.
. "$(dirname "$0")/lib.sh"

# A job that would fork 9 processes under tasks_max = 5, marking each.
cat >"$T/fork9.sh" <<'EOF'
for i in 1 2 3 4 5 6 7 8 9; do sleep 100000 & done
wait
EOF
jobs_write() {
	job big "command = {\"bash\", \"$T/fork9.sh\"}" 'tasks_max = 5' 'cpu_max = "10%"'
	job strict 'command = "sleep 100000"' 'tasks_max = 5' 'limits = "require"'
	job plain 'command = "sleep 100000"'
}
jobs_write
printf 'cgroup = "off"\n' >"$T/vigil.conf"

# --- vigild -t: a warning per job and option, an error for "require".
rc=0
"$VIGILD" -t -c "$T/vigil.conf" -j "$JOBS" >"$T/check.out" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "vigild -t accepted a required limit it cannot enforce: rc $rc: $(cat "$T/check.out")"
grep -q "big.conf: warning: tasks_max: not enforced here (cgroup = \"off\": no cgroups)" "$T/check.out" &&
	grep -q "big.conf: warning: cpu_max: not enforced here" "$T/check.out" ||
	fail "vigild -t: no warning per option: $(cat "$T/check.out")"
grep -q "strict.conf: limits = \"require\": tasks_max cannot be enforced" "$T/check.out" ||
	fail "vigild -t: no error for strict: $(cat "$T/check.out")"
grep -q "1 error, 2 warnings" "$T/check.out" || fail "vigild -t's count: $(cat "$T/check.out")"

# --- vigild: big runs and says so everywhere; strict never runs.
start_vigild
wait_state big RUNNING
wait_state plain RUNNING
[ "$(state strict)" = BROKEN ] || fail "strict is $(state strict), not BROKEN"
ctl status strict | grep -q 'limits = "require": tasks_max cannot be enforced (cgroup = "off": no cgroups)' ||
	fail "status strict does not say why: $(ctl status strict)"
[ -z "$(procs_with VIGIL_JOB=strict)" ] || fail "strict runs: $(procs_with VIGIL_JOB=strict)"
ctl status big | grep -q '^  limits not enforced: tasks_max, cpu_max (cgroup = "off": no cgroups)$' ||
	fail "status big: $(ctl status big)"
! ctl status plain | grep -q 'limits not enforced' || fail "status plain: $(ctl status plain)"
[ "$(ctl --json status big | jq -c '.jobs[0].limits_not_enforced')" = '["tasks_max","cpu_max"]' ] ||
	fail "status --json: $(ctl --json status big | jq -c '.jobs[0]')"
[ "$(ctl --json status plain | jq -c '.jobs[0].limits_not_enforced')" = '[]' ] ||
	fail "status --json plain: $(ctl --json status plain | jq -c '.jobs[0]')"
ctl metrics >"$T/metrics"
grep -qx 'vigil_job_limit_enforced{job="big",limit="tasks_max"} 0' "$T/metrics" &&
	grep -qx 'vigil_job_limit_enforced{job="big",limit="cpu_max"} 0' "$T/metrics" ||
	fail "metrics: $(grep limit_enforced "$T/metrics")"
grep -q 'big: tasks_max not enforced (cgroup = "off": no cgroups)' "$VLOG" || fail "not in the log: $(cat "$VLOG")"
# What the warning is about: 9 processes under tasks_max = 5.
nine() { [ "$(procs_with VIGIL_JOB=big | wc -l)" -ge 10 ]; }
retry 10 nine || fail "big did not fork 9: $(procs_with VIGIL_JOB=big | wc -l)"

# A reload that brings in a required limit changes nothing.
job strict2 'command = "sleep 100000"' 'memory_max = "64M"' 'limits = "require"'
rc=0
ctl reload >"$T/reload.out" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "the reload was accepted: $(cat "$T/reload.out")"
grep -q 'strict2.conf: limits = "require": memory_max cannot be enforced' "$T/reload.out" ||
	fail "reload: $(cat "$T/reload.out")"
! ctl status strict2 >/dev/null 2>&1 || [ "$(state strict2)" = BROKEN ] || fail "strict2 is $(state strict2)"
[ -z "$(procs_with VIGIL_JOB=strict2)" ] || fail "strict2 runs"
rm "$JOBS/strict2.conf"
stop_vigild

# --- vigil.conf's limits = "require" is the default a job may override.
printf 'cgroup = "off"\nlimits = "require"\n' >"$T/vigil.conf"
job big 'command = "sleep 100000"' 'tasks_max = 5'
job loose 'command = "sleep 100000"' 'tasks_max = 5' 'limits = "best-effort"'
start_vigild
wait_state loose RUNNING
[ "$(state big)" = BROKEN ] || fail "with vigil.conf's require, big is $(state big)"
stop_vigild
log "cgroup = off: warned by vigild -t, status, --json, metrics; require refused"

# --- A delegated cgroup without controllers, as on a host whose cgroup2
# lacks them: the reason names the controller and the cgroup.
mnt=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
if [ "$(id -u)" != 0 ] || [ -z "$mnt" ] || ! mkdir "$mnt/vigil-limits-$$" 2>/dev/null; then
	log "no writable cgroup2 here (${mnt:-not mounted}): the part in a cgroup without controllers is not run"
	exit 0
fi
P=$mnt/vigil-limits-$$
C=$P/d
cleanup_hook() {
	local d
	# Children first: vigild's supervisor cgroup and the instances'.
	for d in "$C"/*/; do [ -d "$d" ] && rmdir "$d" 2>/dev/null; done
	rmdir "$C" "$P" 2>/dev/null || true
}
mkdir "$C"
python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.delegate", b"1")' "$C" ||
	fail "cannot mark $C delegated"
[ -z "$(cat "$C/cgroup.controllers")" ] || fail "$C has controllers: $(cat "$C/cgroup.controllers")"
cat >"$T/incg.sh" <<EOF
#!/bin/sh
echo \$\$ >"$C/cgroup.procs" || exit 1
exec "\$@"
EOF
chmod +x "$T/incg.sh"
printf '' >"$T/vigil.conf"
rm -f "$JOBS"/*.conf
jobs_write
rc=0
"$T/incg.sh" "$VIGILD" -t -c "$T/vigil.conf" -j "$JOBS" >"$T/check.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "big.conf: warning: tasks_max: not enforced here (no pids or cpu controller in $C)" "$T/check.out" ||
	fail "vigild -t in $C: rc $rc: $(cat "$T/check.out")"
VIGILD_WRAPPER="$T/incg.sh $VIGILD_WRAPPER"
start_vigild
grep -q "each instance runs in its own cgroup under $C" "$VLOG" || fail "vigild did not take $C: $(cat "$VLOG")"
wait_state big RUNNING
[ "$(state strict)" = BROKEN ] || fail "in $C, strict is $(state strict)"
ctl status big | grep -q "^  limits not enforced: tasks_max, cpu_max (no pids or cpu controller in $C)$" ||
	fail "status big in $C: $(ctl status big)"
stop_vigild
log "in a cgroup without controllers: the same, naming them"
