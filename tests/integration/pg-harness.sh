#!/bin/bash
# The cluster tests' harness on its own, without cluster mode: pg-lib.sh's
# private server (the roles n1, n2 and n3 share the schema vigil; a
# session cut, a refused login, a crash and a restart; a streaming standby
# promoted), tests/helpers/tcpproxy (forwards many connections and large
# rows; frozen, a query through it hangs without an error, and completes
# once thawed), tests/helpers/onecopy (counts copies, not forks) and
# pg-lib.sh's PgBouncer in transaction mode (if installed: it pools).
# Skips without root or PostgreSQL.
. "$(dirname "$0")/lib.sh"
# Its CPU is mostly a real server's, not vigild's: once, in the gcc
# stage (tests/run-all.sh sets VIGIL_SKIP_HEAVY under ASan; issue 43).
[ -z "${VIGIL_SKIP_HEAVY:-}" ] || skip "VIGIL_SKIP_HEAVY is set (most of its CPU is a real server's, not vigild's: the gcc stage runs it)"
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
pg_need

# kill_tree PID: end PID and its descendants, by pid, and reap PID.
kill_tree() {
	local c
	for c in $(pg_children "$1"); do kill_tree "$c"; done
	kill -KILL "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# --- The server and the roles.
pg_start
for r in n1 n2 n3; do
	[ "$(pg_sql "SELECT session_user || ' ' || current_user" -U "$r")" = "$r vigil" ] ||
		fail "$r does not log in, or its session is not the role vigil"
done
# n1 creates the schema; n2 and n3 write, migrate and read what n1 made.
pg_sql "CREATE SCHEMA IF NOT EXISTS vigil;
	CREATE TABLE vigil.t (id int PRIMARY KEY, node text NOT NULL);
	INSERT INTO vigil.t VALUES (1, session_user)" -U n1 ||
	fail "n1 cannot create the schema and a table"
pg_sql "CREATE SCHEMA IF NOT EXISTS vigil;
	ALTER TABLE vigil.t ADD COLUMN at timestamptz NOT NULL DEFAULT now();
	INSERT INTO vigil.t (id, node) VALUES (2, session_user)" -U n2 ||
	fail "n2 cannot change or write n1's table"
pg_sql "CREATE INDEX ON vigil.t (node); UPDATE vigil.t SET node = node || '.'
	WHERE id = 1; INSERT INTO vigil.t (id, node) VALUES (3, session_user)" -U n3 ||
	fail "n3 cannot use n1's table"
[ "$(pg_sql "SELECT string_agg(node, ',' ORDER BY id) FROM vigil.t" -U n1)" = "n1.,n2,n3" ] ||
	fail "the table is not shared: $(pg_sql "TABLE vigil.t")"
[ "$(pg_sql "SELECT tableowner FROM pg_tables WHERE tablename = 't'")" = vigil ] ||
	fail "vigil.t does not belong to the role vigil"
# The WAL timeline, as vigild's failover guard reads it, for a node role.
[ "$(pg_sql "SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int" -U n2)" = 1 ] ||
	fail "n2 cannot read the WAL timeline"
log "ok: n1, n2 and n3 share the schema vigil"

# --- Faults: a session cut, a login refused.
pg_psql -U n1 -c "SELECT pg_sleep(60)" >/dev/null 2>"$T/cut.err" &
cut=$!
retry 10 pg_has_backends n1 1 || fail "n1's session did not show"
[ "$(pg_terminate n1)" = 1 ] || fail "pg_terminate n1 ended no session"
retry 5 dead "$cut" || fail "n1's psql outlived its session"
rc=0
wait "$cut" || rc=$?
[ "$rc" -ne 0 ] && grep -q 'terminat' "$T/cut.err" ||
	fail "n1's psql was not cut off (status $rc): $(cat "$T/cut.err")"
[ "$(pg_backends n1)" = 0 ] || fail "n1 still has sessions"
pg_nologin n1
! pg_sql "SELECT 1" -U n1 2>"$T/nologin.err" || fail "n1 logs in after NOLOGIN"
grep -q 'not permitted to log in' "$T/nologin.err" ||
	fail "unexpected error: $(cat "$T/nologin.err")"
pg_login n1
[ "$(pg_sql "SELECT 1" -U n1)" = 1 ] || fail "n1 cannot log in again"
log "ok: pg_terminate, pg_nologin, pg_login"

# --- Crash, restart on the same port, and a restart of a running server.
old=$PGPID_T
t0=$(now_ms)
pg_crash
dead "$old" || fail "the postmaster survived pg_crash"
! pg_sql "SELECT 1" 2>/dev/null || fail "a query worked after pg_crash"
t1=$(now_ms)
pg_restart
t2=$(now_ms)
[ "$PGPID_T" != "$old" ] && alive "$PGPID_T" || fail "no new postmaster"
[ "$(pg_sql "SELECT count(*) FROM vigil.t" -U n3)" = 3 ] ||
	fail "rows lost in the crash"
old=$PGPID_T
pg_restart
[ "$PGPID_T" != "$old" ] && dead "$old" || fail "pg_restart did not restart"
log "ok: crash $((t1 - t0)) ms, start after it $((t2 - t1)) ms, restart $(($(now_ms) - t2)) ms"

# --- A standby: it follows the primary, then is promoted.
pg_standby_start
[ "$(PG_AT=standby pg_sql "SELECT pg_is_in_recovery()")" = t ] ||
	fail "the standby is not in recovery"
pg_sql "INSERT INTO vigil.t (id, node) VALUES (4, session_user)" -U n2
standby_has() { [ "$(PG_AT=standby pg_sql "SELECT count(*) FROM vigil.t" -U n1)" = "$1" ]; }
retry 10 standby_has 4 || fail "the standby does not follow the primary"
! PG_AT=standby pg_sql "INSERT INTO vigil.t (id, node) VALUES (5, 'x')" -U n1 2>/dev/null ||
	fail "the standby took a write"
pg_promote
[ "$(PG_AT=standby pg_sql "SELECT pg_is_in_recovery()")" = f ] ||
	fail "the standby is still in recovery after pg_promote"
PG_AT=standby pg_sql "INSERT INTO vigil.t (id, node) VALUES (5, session_user)" -U n3 ||
	fail "n3 cannot write on the promoted standby"
[ "$(PG_AT=standby pg_sql "SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int" -U n1)" = 2 ] ||
	fail "the promoted standby is not on timeline 2"
PG_AT=standby pg_stop
log "ok: standby followed, promoted to timeline 2, stopped"

# --- tcpproxy: forwards, many connections at once, and large rows.
proxy_start pg 127.0.0.1 "$PGPORT_T"
[ "$(pg_sql "SELECT inet_server_port() || ' ' || session_user" -U n1 -h 127.0.0.1 -p "$PROXY_PORT")" = "$PGPORT_T n1" ] ||
	fail "no query through the proxy"
[ "$(pg_sql "SELECT length(repeat('x', 4000000))" -U n2 -h 127.0.0.1 -p "$PROXY_PORT")" = 4000000 ] ||
	fail "a 4 MB query through the proxy failed"
[ "$(pg_sql "SELECT repeat('x', 4000000)" -U n2 -h 127.0.0.1 -p "$PROXY_PORT" | wc -c)" = 4000001 ] ||
	fail "a 4 MB row through the proxy came back wrong"
pids=
for i in $(seq 1 40); do
	pg_sql "SELECT pg_sleep(0.3), $i" -U "n$((i % 3 + 1))" -h 127.0.0.1 \
		-p "$PROXY_PORT" >"$T/many.$i" 2>&1 &
	pids="$pids $!"
done
for p in $pids; do
	retry 20 dead "$p" || fail "a query through the proxy did not end"
	wait "$p" || fail "a query through the proxy failed: $(cat "$T"/many.*)"
done
[ "$(cat "$T"/many.* | sort -u | wc -l)" = 40 ] || fail "40 queries gave: $(cat "$T"/many.*)"
log "ok: 40 connections at once through the proxy"

# --- tcpproxy frozen: a silent partition of an open session.
mkfifo "$T/q"
pg_psql -A -t -U n1 -h 127.0.0.1 -p "$PROXY_PORT" <"$T/q" >"$T/q.out" 2>"$T/q.err" &
qp=$!
exec 7>"$T/q"
echo "SELECT 'first';" >&7
retry 5 grep -qx first "$T/q.out" || fail "no answer through the proxy: $(cat "$T/q.err")"
proxy_freeze pg
t0=$(now_ms)
echo "SELECT 'second';" >&7
! retry 1 grep -qx second "$T/q.out" || fail "a query went through the frozen proxy"
alive "$qp" && [ ! -s "$T/q.err" ] || fail "psql saw an error: $(cat "$T/q.err")"
proxy_thaw pg
retry 5 grep -qx second "$T/q.out" || fail "no answer after the proxy was thawed"
log "ok: frozen proxy: no answer and no error for $(($(now_ms) - t0)) ms, then the answer"
exec 7>&-
retry 5 dead "$qp" || fail "psql did not end at end of input"
wait "$qp" || fail "psql failed: $(cat "$T/q.err")"
proxy_stop pg

# --- onecopy: two copies of A, one of B, one of C with a fork of it.
m=vigil-onecopy-$$
sampler_start "$m-A" "$m-B" "$m-C"
bash -c "exec -a $m-B sleep 60" &
b=$!
# A subshell is a fork of its shell, same arguments: not a second copy.
bash -c '(sleep 60; :); :' "$m-C" &
c=$!
has_fork() { [ -n "$(pg_children "$(pg_children "$c")")" ]; }
retry 5 has_fork || fail "C's fork did not show"
track "$b" "$c" "$(pg_children "$c")" "$(pg_children "$(pg_children "$c")")"
argv0_is() { [ "$(tr '\0' '\n' <"/proc/$1/cmdline" | head -n 1)" = "$2" ]; }
retry 5 argv0_is "$b" "$m-B" || fail "B did not show"
bash -c "exec -a $m-A sleep 60" &
a1=$!
bash -c "exec -a $m-A sleep 60" &
a2=$!
track "$a1" "$a2"
# B and C are settled: the scan that sees both A shows them too.
retry 5 grep -q "^over .* $m-A 2 " "$SAMPLER_OUT" || fail "onecopy saw no two A"
kill_tree "$a2"
_sampler_end || fail "onecopy did not end well: $(cat "$T/onecopy.err")"
[ "$(sampler_max "$m-A")" = 2 ] || fail "max A: $(sampler_max "$m-A") (2 expected)"
[ "$(sampler_max "$m-B")" = 1 ] || fail "max B: $(sampler_max "$m-B") (1 expected)"
[ "$(sampler_max "$m-C")" = 1 ] || fail "max C: $(sampler_max "$m-C") (1 expected)"
! grep -q "^over .* $m-[BC] " "$SAMPLER_OUT" || fail "onecopy counted B or C twice"
[ "$(sed -n 's/^samples //p' "$SAMPLER_OUT")" -gt 0 ] || fail "no samples count"
log "ok: onecopy: max 2, 1 and 1 in $(sed -n 's/^samples //p' "$SAMPLER_OUT") samples"
# sampler_stop fails on a marker seen twice: A now runs once, so not on a
# new sampler.
sampler_start "$m-A" "$m-B"
sampler_stop
for p in "$a1" "$b" "$c"; do kill_tree "$p"; done

# --- PgBouncer in transaction mode in front of the primary: the database
# vigil through it; one server session serves two clients in turn, a
# transaction keeps its own; SHOW POOLS says transaction.
if [ -x "$PGBOUNCER" ]; then
	t0=$(now_ms)
	pgb_start
	[ "$(stat -c %U "/proc/$PGBPID_T")" = postgres ] || fail "PgBouncer does not run as postgres"
	[ "$(pg_sql "SELECT current_database() || ' ' || session_user || ' ' ||
		current_user || ' ' || current_setting('port')" -U n1 -h 127.0.0.1 \
		-p "$PGBPORT_T")" = "vigil n1 vigil $PGPORT_T" ] ||
		fail "a query through PgBouncer does not see the database vigil as n1"
	[ "$("$PGBIN/psql" -X -A -t -d "$(pgb_conninfo 2)" -c "SELECT session_user ||
		' ' || (SELECT count(*) FROM vigil.t)")" = "n2 4" ] ||
		fail "pgb_conninfo 2 does not reach vigil.t as n2"
	# Two clients, a and b, as n1: one psql each, fed through a FIFO.
	pgbc=()
	for s in a b; do
		mkfifo "$T/pgb-$s"
		pg_psql -A -t -U n1 -h 127.0.0.1 -p "$PGBPORT_T" <"$T/pgb-$s" \
			>"$T/pgb-$s.out" 2>"$T/pgb-$s.err" &
		pgbc+=("$!")
	done
	exec 7>"$T/pgb-a" 8>"$T/pgb-b"
	# pgb_tx FD TAG: a transaction of two statements on client FD; once
	# it committed, "TAG PID1 PID2" (their backends) in its output.
	pgb_tx() {
		printf '%s\n' 'BEGIN;' 'SELECT pg_backend_pid() AS p1 \gset' \
			'SELECT pg_backend_pid() AS p2 \gset' 'COMMIT;' "\\echo $2 :p1 :p2" >&"$1"
	}
	for k in 1 2 3; do
		pgb_tx 7 "a$k"
		retry 5 grep -q "^a$k " "$T/pgb-a.out" || fail "client a: no a$k: $(cat "$T/pgb-a.err")"
		pgb_tx 8 "b$k"
		retry 5 grep -q "^b$k " "$T/pgb-b.out" || fail "client b: no b$k: $(cat "$T/pgb-b.err")"
	done
	! awk '$2 != $3' "$T/pgb-a.out" "$T/pgb-b.out" | grep -q . ||
		fail "a transaction moved between server sessions: $(cat "$T"/pgb-?.out)"
	[ "$(awk '{ print $2 }' "$T/pgb-a.out" "$T/pgb-b.out" | sort -u | wc -l)" = 1 ] ||
		fail "two clients in turn did not share one server session: $(cat "$T"/pgb-?.out)"
	[ "$(pg_backends n1)" = 1 ] || fail "n1 has $(pg_backends n1) sessions, 1 expected"
	one=$(awk 'NR == 1 { print $2 }' "$T/pgb-a.out")
	# a holds its server session in a transaction: b gets another.
	printf '%s\n' 'BEGIN;' 'SELECT pg_backend_pid() AS h \gset' '\echo held :h' >&7
	retry 5 grep -q "^held $one$" "$T/pgb-a.out" || fail "client a: $(cat "$T/pgb-a.out" "$T/pgb-a.err")"
	pgb_tx 8 b4
	retry 5 grep -q "^b4 " "$T/pgb-b.out" || fail "client b: no b4: $(cat "$T/pgb-b.err")"
	! grep -q "^b4 $one " "$T/pgb-b.out" ||
		fail "b got the server session of a's open transaction"
	echo 'COMMIT;' >&7
	[ "$(pg_backends n1)" = 2 ] || fail "n1 has $(pg_backends n1) sessions, 2 expected"
	pools=$(pg_psql -A -P footer=off -U postgres -d pgbouncer -h 127.0.0.1 \
		-p "$PGBPORT_T" -c "SHOW POOLS")
	mode=$(printf '%s\n' "$pools" | awk -F'|' 'NR == 1 { for (i = 1; i <= NF; i++)
		if ($i == "pool_mode") c = i; next } c && $1 == "vigil" && $2 == "n1" { print $c }')
	[ "$mode" = transaction ] || fail "SHOW POOLS: pool_mode of vigil/n1 is '$mode': $pools"
	exec 7>&- 8>&-
	for p in "${pgbc[@]}"; do
		retry 5 dead "$p" || fail "psql through PgBouncer did not end at end of input"
		wait "$p" || fail "psql through PgBouncer failed: $(cat "$T"/pgb-?.err)"
	done
	pgb=$PGBPID_T
	pgb_stop
	dead "$pgb" || fail "PgBouncer survived pgb_stop"
	retry 5 pg_has_backends n1 0 || fail "n1's sessions outlived PgBouncer"
	log "ok: pgbouncer: one server session for two clients in turn, two for an open transaction, pool_mode transaction; $(($(now_ms) - t0)) ms"
else
	log "no PgBouncer ($PGBOUNCER): its checks skipped"
fi

pg_stop
dead "$PGPID_T" || fail "the postmaster survived pg_stop"
log "ok"
