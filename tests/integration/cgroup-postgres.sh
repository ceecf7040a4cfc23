#!/bin/bash
# A real PostgreSQL under vigil (issue 19): its backends leave the
# postmaster's process group, so a stop by process group never reached
# them; with cgroups a stop leaves no postgres process at all.  A private
# cluster (initdb as user postgres in a temp dir, its own socket dir and
# port).  Needs root, PostgreSQL's binaries and the postgres user.
. "$(dirname "$0")/lib.sh"
# Its CPU is mostly a real server's, not vigild's: once, in the gcc
# stage (tests/run-all.sh sets VIGIL_SKIP_HEAVY under ASan; issue 43).
[ -z "${VIGIL_SKIP_HEAVY:-}" ] || skip "VIGIL_SKIP_HEAVY is set (most of its CPU is a real server's, not vigild's: the gcc stage runs it)"
PGBIN=$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin 2>/dev/null |
	sort -V | tail -1)
[ "$(id -u)" -eq 0 ] || skip "not root: initdb and the server run as user postgres"
[ -n "$PGBIN" ] && [ -x "$PGBIN/postgres" ] || skip_fixable "no PostgreSQL server"
id postgres >/dev/null 2>&1 || skip_fixable "no user postgres"

pg="$T/pg"
mkdir -p "$pg/data" "$pg/sock"
chown -R postgres "$pg"
chmod 755 "$T"
setpriv --reuid=postgres --regid="$(id -g postgres)" --init-groups \
	"$PGBIN/initdb" -D "$pg/data" -A trust -U postgres >"$T/initdb.log" 2>&1 ||
	fail "initdb failed: $(cat "$T/initdb.log")"
port=$((20000 + RANDOM % 20000))
job pg "command = {\"$PGBIN/postgres\", \"-D\", \"$pg/data\", \"-p\", \"$port\", \"-k\", \"$pg/sock\", \"-c\", \"listen_addresses=\"}" \
	'user = "postgres"' 'stop_signal = "INT"' 'stop_timeout = "20s"'

start_vigild
need_cgroups

# postgres_procs: the pids of this cluster's processes.
postgres_procs() {
	local d
	for d in /proc/[0-9]*; do
		[ "$(stat -c %U "$d" 2>/dev/null)" = postgres ] || continue
		if grep -qs -- "$pg" "$d/cmdline" ||
			grep -qs "/pg@0\$" "$d/cgroup"; then
			alive "${d#/proc/}" && echo "${d#/proc/}"
		fi
	done
	return 0
}
ready() { "$PGBIN/pg_isready" -q -h "$pg/sock" -p "$port"; }
several() { [ "$(postgres_procs | wc -l)" -ge 3 ]; }
none() { [ -z "$(postgres_procs)" ]; }

wait_state pg RUNNING
retry 30 ready || fail "postgres did not come up: $(tail -5 "$LOGS/pg.log")"
retry 10 several || fail "no postgres backends: $(postgres_procs)"
# Its children are not in the postmaster's process group.
pm=$(job_pid pg)
for p in $(postgres_procs); do
	grep -q "/pg@0\$" "/proc/$p/cgroup" ||
		fail "postgres $p is not in the job's cgroup"
done
log "postgres processes: $(postgres_procs | wc -l), postmaster $pm"

ctl stop pg >/dev/null || fail "stop pg failed"
none || fail "postgres processes outlived the stop: $(postgres_procs)"
stop_vigild
none || fail "postgres processes outlived vigild: $(postgres_procs)"
