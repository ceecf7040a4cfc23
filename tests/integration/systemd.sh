#!/bin/bash
# vigild as a Type=notify service of a real systemd (252, Debian 12) as
# PID 1, in a container booted with systemd-nspawn (tests/systemd/
# nspawn.sh), installed with the unit made from contrib/vigild.service.in:
# `systemctl start` returns once vigild sent READY=1 (jobs launched),
# StatusText has the counts, `systemctl reload` starts a new job (and,
# with a job file's error, fails, with the error in `systemctl status`,
# and changes nothing),
# `systemctl stop` ends every job with result success, the watchdog is
# fed (WatchdogSec=2s) and fires when vigild hangs (Restart=on-failure
# brings it back), and no job inherits NOTIFY_SOCKET or WATCHDOG_*; after
# kill -9 of vigild its jobs get SIGTERM and time to clean up, and vigild
# comes back.
# Skips (77) without root or overlayfs, when the built binaries cannot
# run in Debian 12, under VIGILD_WRAPPER (no valgrind in there) and
# VIGIL_SKIP_SLOW; and without systemd-nspawn or debootstrap, when the
# first debootstrap (tried twice) or the boot fails, all of which fail it
# in CI instead (lib.sh's skip_fixable).
# The rootfs is cached in /var/tmp/vigil-nspawn: the first run takes
# ~45 s more.
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=${TOP_SRCDIR:-$HERE/../..}
# The container runs systemd on a pure cgroup2 hierarchy (as a Debian 12
# host does), with what controllers cgroup2 offers on this host.
: "${NSPAWN_UNIFIED:=1}"
# shellcheck source=tests/systemd/nspawn.sh
. "$HERE/../systemd/nspawn.sh"

# skip REASON: lib.sh's, before lib.sh is sourced (no temp dir needed).
skip() {
	printf 'SKIP: %s\n' "$*"
	exit 77
}

[ -z "${VIGILD_WRAPPER:-}" ] || skip "vigild runs unwrapped in the container"
[ -z "${VIGIL_SKIP_SLOW:-}" ] || skip "VIGIL_SKIP_SLOW is set (stage 1 runs it)"
[ -z "${VIGIL_SKIP_TIMING:-}" ] || skip "VIGIL_SKIP_TIMING is set (a timing, load or container test: the gcc stage runs it)"

. "$HERE/lib.sh"

nspawn_usable || nspawn_skip

UNIT=vigild.service
MARK=VIGIL_SD_TEST=$$.$RANDOM
FAILS=0
T0=$(now_ms)

# bad MESSAGE: a failed check after which the others still make sense.
bad() {
	printf 'FAIL: %s\n' "$*" >&2
	FAILS=$((FAILS + 1))
}

sd_exit() {
	local rc=$? t
	set +e
	if [ "$rc" -eq 77 ]; then
		nspawn_teardown
		rm -rf "$T"
		exit 77
	fi
	if [ "$rc" -ne 0 ] && [ -n "$NSPAWN_LEADER" ]; then
		printf '# journal of %s:\n' "$UNIT" >&2
		nspawn_run journalctl --no-pager -o short-monotonic -u "$UNIT" |
			tail -n 60 >&2
	fi
	t=$(now_ms)
	nspawn_teardown
	log "teardown $(($(now_ms) - t)) ms, whole test $(($(now_ms) - T0)) ms"
	(exit "$rc")
	cleanup
}
trap sd_exit EXIT

sc() { nspawn_run systemctl "$@"; }
prop() { nspawn_run systemctl show -p "$1" --value "$UNIT"; }
vctl() { nspawn_run vigilctl -s /run/vigil/vigild.sock "$@"; }
cstate() { vctl status "$1" 2>/dev/null | awk 'NR == 2 { print $2 }'; }
is_cstate() { [ "$(cstate "$1")" = "$2" ]; }
is_active() { [ "$(prop ActiveState)" = active ]; }
running_in_status() { prop StatusText | grep -Eq "(^|[^0-9])$1 running"; }
# journal: systemd's and vigild's lines about the unit since $SINCE.
SINCE=$(date +%s)
journal() {
	nspawn_run journalctl --sync
	nspawn_run journalctl --no-pager -o cat -u "$UNIT" --since "@$SINCE"
}
journal_has() { journal | grep -q -- "$1"; }

# The job processes of this test (host pids), found by their environment.
jobprocs() { procs_marked "$MARK"; }

# env_of PID: the environment of a host pid, one variable a line.
env_of() { tr '\0' '\n' 2>/dev/null <"/proc/$1/environ"; }

# check_job_env: no job inherits systemd's variables, which vigild has;
# the ready = "notify" job n has vigild's own notify.sock.
check_job_env() {
	local p ppid='' e
	for p in $(jobprocs); do
		e=$(env_of "$p" | grep -E '^(NOTIFY_SOCKET|WATCHDOG_USEC|WATCHDOG_PID)=' |
			tr '\n' ' ')
		if env_of "$p" | grep -qx VIGIL_SD_JOB=n; then
			[ "$e" = "NOTIFY_SOCKET=/run/vigil/notify.sock " ] ||
				bad "notify job process $p has: ${e:-no NOTIFY_SOCKET}"
		else
			[ -z "$e" ] || bad "job process $p has $e"
		fi
		env_of "$p" | grep -qx VIGIL_SD_JOB=a &&
			ppid=$(awk '{ print $4 }' "/proc/$p/stat" 2>/dev/null)
	done
	[ -n "$ppid" ] && env_of "$ppid" | grep -qx NOTIFY_SOCKET=/run/systemd/notify ||
		bad "vigild (host pid ${ppid:-?}) has not systemd's NOTIFY_SOCKET: the check proves nothing"
}

# sdjob NAME [LINE...]: a job file; sleep 1000 unless a LINE says otherwise.
sdjob() {
	local name=$1
	shift
	[ $# -gt 0 ] || set -- 'command = "sleep 1000"'
	printf '%s\n' "$@" "environment = {\"$MARK\", \"VIGIL_SD_JOB=$name\"}" \
		>"$NSPAWN_ROOT/etc/vigil/jobs.d/$name.conf"
}
njobs() { [ "$(jobprocs | wc -l)" -eq "$1" ]; }

# copy_libs BINARY...: the shared libraries the binaries need that Debian's
# minbase lacks (libconfuse, libsqlite3, libbsd; libasan for a gcc
# sanitizer build), copied from this host to the same paths.
copy_libs() {
	local l d
	for l in $(ldd "$@" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 }
		$1 ~ /^\// && $2 ~ /^\(0x/ { print $1 }' | sort -u); do
		[ -e "$NSPAWN_ROOT$l" ] && continue
		d=$(realpath -m "$NSPAWN_ROOT$(dirname "$l")")
		case $d in
		"$NSPAWN_ROOT"/*) ;;
		*) fail "$l resolves outside the container" ;;
		esac
		mkdir -p "$d" && cp -L "$l" "$d/"
	done
}

# ---------------------------------------------------------------- set up
nspawn_rootfs || nspawn_skip
nspawn_prepare || nspawn_skip
R=$NSPAWN_ROOT
install -D -m 0755 "$VIGILD" "$R/usr/local/sbin/vigild"
install -D -m 0755 "$VIGILCTL_BIN" "$R/usr/local/bin/vigilctl"
copy_libs "$VIGILD" "$VIGILCTL_BIN"
# The unit runs vigild and vigilctl (its ExecReload=) with an explicit
# -c: their built-in default follows the configure prefix of this build
# (distcheck installs under _inst/).
sed -e 's|@sbindir@|/usr/local/sbin|g' -e 's|@bindir@|/usr/local/bin|g' \
	-e 's|^ExecStart=\(.*\)$|ExecStart=\1 -c /etc/vigil/vigil.conf|' \
	-e 's|^ExecReload=\(.*/vigilctl\) \(.*\)$|ExecReload=\1 -c /etc/vigil/vigil.conf \2|' \
	-e 's|^ExecStop=\(.*/vigilctl\) \(.*\)$|ExecStop=\1 -c /etc/vigil/vigil.conf \2|' \
	"$SRC/contrib/vigild.service.in" >"$R/etc/systemd/system/$UNIT"
grep -q '^ExecStart=.* -c /etc/vigil/vigil.conf$' "$R/etc/systemd/system/$UNIT" &&
	grep -q '^ExecReload=/usr/local/bin/vigilctl -c /etc/vigil/vigil.conf reload$' \
		"$R/etc/systemd/system/$UNIT" ||
	fail "could not point the unit at /etc/vigil/vigil.conf: $(grep '^Exec' "$R/etc/systemd/system/$UNIT")"
# Point vigild's directories where the unit's RuntimeDirectory=,
# StateDirectory= and LogsDirectory= are.
conf=/etc/vigil/vigil.conf
mkdir -p "$R/etc/vigil/jobs.d"
cat >"$R$conf" <<EOF
jobs_dir = "/etc/vigil/jobs.d"
runtime_dir = "/run/vigil"
state_dir = "/var/lib/vigil"
log_dir = "/var/log/vigil"
EOF
sdjob a
# b's child leaves its session: only the unit's cgroup, delegated to
# vigild (Delegate=yes), lets a stop reach it (else systemd kills it).
sdjob b 'command = {"sh", "-c", "setsid sleep 1000 & exec sleep 1000"}'
# Its READY=1 goes to vigild (the unit's NotifyAccess=main would drop it).
sdjob n 'command = {"sh", "-c", "systemd-notify --ready --status=job-n; exec sleep 1000"}' \
	'ready = "notify"'

nspawn_boot || nspawn_skip
if ! out=$(nspawn_run vigild --version 2>&1) ||
	! out=$(nspawn_run vigilctl --version 2>&1); then
	case $out in
	*"error while loading shared libraries"* | *"version \`GLIBC"*)
		skip "the built binaries do not run in Debian 12: $out" ;;
	esac
	fail "vigild --version in the container: $out"
fi

# ---------------------------------------------------------------- start
t=$(now_ms)
sc start "$UNIT" || fail "systemctl start failed: $(sc status "$UNIT")"
start_ms=$(($(now_ms) - t))
st=$(prop ActiveState)
[ "$st" = active ] || fail "ActiveState is $st right after systemctl start"
for j in a b n; do
	s=$(cstate "$j")
	case $s in
	RUNNING | STARTING) ;;
	*) bad "job $j is '$s' right after systemctl start returned" ;;
	esac
done
ready_us=$(($(prop ActiveEnterTimestampMonotonic) - \
	$(prop InactiveExitTimestampMonotonic)))
log "start ${start_ms} ms, READY=1 $((ready_us / 1000)) ms after exec"
retry 10 is_cstate a RUNNING && retry 10 is_cstate b RUNNING &&
	retry 10 is_cstate n RUNNING || fail "jobs not RUNNING: $(vctl status 2>&1)"
nspawn_run test -S /run/vigil/vigild.sock ||
	bad "no control socket in RuntimeDirectory=/run/vigil"
retry 5 running_in_status 3 ||
	bad "StatusText is '$(prop StatusText)', not 3 running"
log "StatusText: $(prop StatusText)"
retry 5 njobs 4 || bad "job processes: $(jobprocs)"
check_job_env

# ---------------------------------------------------------------- cgroups
# Delegate=yes: vigild moves itself into the unit's supervisor/ leaf and
# runs each instance in a cgroup beside it (host paths: this shell sees
# the host's cgroup namespace).
cg_of() { sed -n 's/^0:://p' "/proc/$1/cgroup" 2>/dev/null; }
vpid=''
for p in $(jobprocs); do
	env_of "$p" | grep -qx VIGIL_SD_JOB=a &&
		vpid=$(awk '{ print $4 }' "/proc/$p/stat" 2>/dev/null)
done
vcg=$(cg_of "$vpid")
case $vcg in
*/$UNIT/supervisor) ;;
*) bad "vigild (host pid $vpid) is in '$vcg', not $UNIT/supervisor" ;;
esac
journal_has "cgroup: each instance runs in its own cgroup under /.*$UNIT" ||
	bad "no 'each instance runs in its own cgroup' line: $(journal | grep cgroup:)"
for p in $(jobprocs); do
	j=$(env_of "$p" | sed -n 's/^VIGIL_SD_JOB=//p')
	c=$(cg_of "$p")
	[ "$c" = "${vcg%/supervisor}/$j@0" ] ||
		bad "job $j process $p is in '$c', not ${vcg%/supervisor}/$j@0"
done
ucg=/sys/fs/cgroup/unified${vcg%/supervisor}
[ -f "$ucg/cgroup.procs" ] || ucg=/sys/fs/cgroup${vcg%/supervisor}
log "unit cgroup offers controllers: '$(cat "$ucg/cgroup.controllers" 2>/dev/null)'"

# ---------------------------------------------------------------- reload
sdjob c 'command = "sleep 1000"' 'tasks_max = 7' 'cpu_weight = 30' \
	'cpu_max = "50%"' 'io_weight = 40'
t=$(now_ms)
sc reload "$UNIT" || bad "systemctl reload failed"
reload_ms=$(($(now_ms) - t))
s=$(cstate c)
log "reload ${reload_ms} ms; job c right after it: '${s:-unknown}'"
retry 10 is_cstate c RUNNING || bad "job c is '$(cstate c)' after reload"
retry 10 is_active || bad "ActiveState is $(prop ActiveState) after reload"
[ "$(prop ReloadResult)" = success ] ||
	bad "ReloadResult is $(prop ReloadResult)"
retry 5 running_in_status 4 ||
	bad "StatusText is '$(prop StatusText)' after reload, not 4 running"

# A reload that a job file's error rejects fails `systemctl reload`
# (ExecReload= is vigilctl reload, which waits for vigild's answer; a
# SIGHUP could not fail): nothing changes, vigild stays active and the
# error, with its file and line, is in `systemctl status` (issue 38).
cpid=$(vctl status c | awk 'NR == 2 { print $3 }')
printf 'command = "sleep 1000"\nno_such_option = 1\n' \
	>"$R/etc/vigil/jobs.d/broken.conf"
rc=0
sc reload "$UNIT" >"$T/reload.out" 2>&1 || rc=$?
log "systemctl reload with a broken job file: exit $rc: $(head -n 1 "$T/reload.out")"
[ "$rc" -ne 0 ] || bad "systemctl reload with a broken job file exited 0"
[ "$(prop ReloadResult)" != success ] ||
	bad "ReloadResult is success after a rejected reload"
is_active || bad "ActiveState is $(prop ActiveState) after a rejected reload"
nspawn_run systemctl status --no-pager -n 20 "$UNIT" >"$T/sdstatus.out" 2>&1 || true
grep -q 'broken.conf:2:.*no_such_option' "$T/sdstatus.out" ||
	bad "systemctl status does not show the error: $(tail -n 5 "$T/sdstatus.out")"
grep -q 'reload: 1 error, nothing changed' "$T/sdstatus.out" ||
	bad "systemctl status does not say nothing changed: $(tail -n 5 "$T/sdstatus.out")"
[ -n "$cpid" ] && [ "$(vctl status c | awk 'NR == 2 { print $2, $3 }')" = "RUNNING $cpid" ] ||
	bad "job c is not RUNNING as pid '$cpid' after a rejected reload: $(vctl status c | tail -n 1)"
vctl status broken >/dev/null 2>&1 && bad "the broken job was added"
rm -f "$R/etc/vigil/jobs.d/broken.conf"
sc reload "$UNIT" || bad "systemctl reload failed once the file was gone"
[ "$(prop ReloadResult)" = success ] ||
	bad "ReloadResult is $(prop ReloadResult) after the file was gone"
# c's limits, in its cgroup below the unit's, for each controller the
# unit's cgroup offers (Delegate=yes hands vigild all it has).
# check_cg FILE WANT CONTROLLER
limits=0
check_cg() {
	case " $(cat "$ucg/cgroup.controllers" 2>/dev/null) " in
	*" $3 "*) ;;
	*)
		journal_has "c: .* ignored: the $3 controller is not available" ||
			bad "no warning for c's $3 limit without the controller"
		return 0
		;;
	esac
	[ "$(cat "$ucg/c@0/$1" 2>/dev/null)" = "$2" ] ||
		bad "$ucg/c@0/$1 is '$(cat "$ucg/c@0/$1" 2>/dev/null)', not '$2'"
	limits=$((limits + 1))
}
check_cg pids.max 7 pids
check_cg cpu.weight 30 cpu
check_cg cpu.max "50000 100000" cpu
check_cg io.weight "default 40" io
log "limits of job c checked in the delegated cgroup: $limits of 4"

# ---------------------------------------------------------------- stop
# The unit is unloaded once inactive, so its Result= and ExecMain*= are
# gone: systemd's journal lines tell how it ended.
SINCE=$(date +%s.%6N)
t=$(now_ms)
sc stop "$UNIT" || bad "systemctl stop failed"
log "stop $(($(now_ms) - t)) ms"
[ "$(prop ActiveState)" = inactive ] ||
	bad "ActiveState is $(prop ActiveState) after stop"
retry 5 journal_has "Deactivated successfully" ||
	bad "no 'Deactivated successfully' after stop: $(journal | tail -n 3)"
ended=$(journal | grep -E "Main process exited|Failed with result" || true)
[ -z "$ended" ] || bad "vigild did not exit 0 when stopped: $ended"
left=$(jobprocs)
[ -z "$left" ] || bad "job processes left after stop: $left"
killed=$(journal | grep -E 'Killing process [0-9]+ .* with signal' || true)
[ -z "$killed" ] || bad "systemd killed what vigild left: $killed"

# ---------------------------------------------------------------- watchdog
mkdir -p "$R/etc/systemd/system/$UNIT.d"
printf '[Service]\nWatchdogSec=2s\n' >"$R/etc/systemd/system/$UNIT.d/watchdog.conf"
sc daemon-reload
sc start "$UNIT" || fail "systemctl start with WatchdogSec=2s failed"
[ "$(prop WatchdogUSec)" = 2s ] || bad "WatchdogUSec is $(prop WatchdogUSec)"
pid0=$(prop MainPID)
retry 10 is_cstate a RUNNING && retry 10 is_cstate n RUNNING &&
	retry 5 njobs 5 || bad "jobs not all up (watchdog run): $(vctl status 2>&1)"
wd0=$(prop WatchdogTimestampMonotonic)
# Active with the same main pid for 7 s, more than 3 x WatchdogSec.
t=$(now_ms)
while [ "$(now_ms)" -lt $((t + 7000)) ]; do
	s=$(nspawn_run systemctl show -p ActiveState,MainPID,NRestarts "$UNIT" | sort |
		tr '\n' ' ')
	[ "$s" = "ActiveState=active MainPID=$pid0 NRestarts=0 " ] ||
		fail "watchdog not fed? after $(($(now_ms) - t)) ms: $s"
	sleep 0.5
done
wd1=$(prop WatchdogTimestampMonotonic)
[ "$wd1" -gt "$wd0" ] || bad "no WATCHDOG=1 in 7 s (timestamp $wd0 -> $wd1)"
check_job_env
old=$(jobprocs)
SINCE=$(date +%s.%6N)
nspawn_run kill -STOP "$pid0"
t=$(now_ms)
retry 15 journal_has "Failed with result 'watchdog'" ||
	fail "SIGSTOPped vigild was not killed for the watchdog: $(prop Result)"
log "watchdog fired $(($(now_ms) - t)) ms after SIGSTOP"
journal_has "Watchdog timeout (limit 2s)" || bad "no 'Watchdog timeout' line"
# Restart=on-failure: back, with a new main pid and its jobs.
restarted() {
	is_active && [ "$(prop NRestarts)" -ge 1 ] &&
		[ "$(prop MainPID)" != "$pid0" ] && is_cstate a RUNNING
}
retry 15 restarted ||
	bad "not restarted after the watchdog: $(sc status "$UNIT" 2>&1 | head -n 5)"
for p in $old; do
	retry 10 dead "$p" || bad "job process $p outlived the killed vigild"
done

# ---------------------------------------------------------------- journal
# stdout/stderr = "journal": the job's lines go straight to journald with
# its name as identifier, stderr at warning, "<N>" prefixes honoured; none
# of it passes through the log file.  vigild's own lines keep priorities.
sdjob j 'command = {"sh", "-c", "echo jout-line; echo jerr-line >&2; echo \"<3>jlevel-line\"; exec sleep 1000"}' \
	'stdout = "journal"' 'stderr = "journal"'
sc reload "$UNIT" || bad "systemctl reload failed (journal job)"
retry 10 is_cstate j RUNNING || bad "job j is '$(cstate j)'"
jprio() {
	nspawn_run journalctl --sync
	nspawn_run journalctl --no-pager -o json -t j |
		jq -r --arg m "$1" 'select(.MESSAGE == $m) | .PRIORITY' | tail -n 1
}
# jprio_is LINE N: asked again at each try (the line may come late).
jprio_is() { test "$(jprio "$1")" = "$2"; }
retry 10 jprio_is jout-line 6 || bad "stdout line: priority '$(jprio jout-line)', want 6"
retry 10 jprio_is jerr-line 4 || bad "stderr line: priority '$(jprio jerr-line)', want 4"
retry 10 jprio_is jlevel-line 3 || bad "<3> line: priority '$(jprio jlevel-line)', want 3"
if nspawn_run grep -q 'jout-line' /var/log/vigil/j.log 2>/dev/null; then
	bad "journal output also went through the log file"
fi
vprio() {
	nspawn_run journalctl --no-pager -o json -u "$UNIT" |
		jq -r 'select(.MESSAGE | test("^vigild .* started: ")) | .PRIORITY' | tail -n 1
}
[ "$(vprio)" = 6 ] || bad "vigild's start line: priority '$(vprio)', want 6"
nspawn_run journalctl --no-pager -o cat -u "$UNIT" | grep -q '^<[0-9]>' &&
	bad "vigild's lines carry a raw <N> prefix in the journal"

# ---------------------------------------------------------------- crash
# vigild killed (-9): its jobs get their parent_death_signal and systemd's
# SIGTERM, and time to finish (ExecStop= finds no vigild; KillMode=
# control-group, TimeoutStopSec), not an instant SIGKILL; then vigild is
# started again, with its jobs (issue 38).
# (Its output has no reader once vigild is gone: it ignores SIGPIPE, as
# vigild.8 says a job must that writes to its output as it cleans up.)
cat >"$R/usr/local/bin/tjob" <<'EOF'
#!/bin/sh
trap '' PIPE
trap 'echo term >>/var/lib/vigil/t.marks; sleep 1; echo cleaned >>/var/lib/vigil/t.marks; exit 0' TERM
echo up >>/var/lib/vigil/t.marks
while :; do echo tick; sleep 0.1; done
EOF
chmod 0755 "$R/usr/local/bin/tjob"
sdjob t 'command = "/usr/local/bin/tjob"' 
sc reload "$UNIT" || bad "systemctl reload failed (crash job)"
retry 10 is_cstate t RUNNING || bad "job t is '$(cstate t)'"
pid1=$(prop MainPID)
SINCE=$(date +%s.%6N)
nspawn_run kill -KILL "$pid1"
marks() { nspawn_run cat /var/lib/vigil/t.marks 2>/dev/null | tr '\n' ' '; }
cleaned() { case $(marks) in *"term cleaned"*) return 0 ;; esac; return 1; }
retry 15 cleaned || bad "the job of a killed vigild had no time to clean up: marks '$(marks)'; $(journal | grep -v "jout-line\|jerr-line\|jlevel-line" | tail -n 40)"
back() { is_active && [ "$(prop MainPID)" != "$pid1" ] && is_cstate t RUNNING; }
retry 20 back || bad "vigild not back after kill -9: $(sc status "$UNIT" 2>&1 | head -n 5)"
log "kill -9 of vigild: the job got '$(marks)'"

SINCE=$(date +%s.%6N)
sc stop "$UNIT" || bad "systemctl stop failed (after restart)"
retry 5 journal_has "Deactivated successfully" ||
	bad "no 'Deactivated successfully' after the last stop: $(journal | tail -n 3)"
left=$(jobprocs)
[ -z "$left" ] || bad "job processes left after the last stop: $left"
killed=$(journal | grep -E 'Killing process [0-9]+ .* with signal' || true)
[ -z "$killed" ] || bad "systemd killed what vigild left (last stop): $killed"

[ "$FAILS" -eq 0 ] || fail "$FAILS checks failed"
log "ok"
