# shellcheck shell=bash
# A private PostgreSQL server for the cluster tests, sourced after lib.sh.
# It is initdb'd as the user postgres under $T/pg, listens on 127.0.0.1 on
# a port of its own (never 5432) and on a unix socket in $T/pg/sock, and
# is stopped at cleanup whatever happens (lib.sh's at_cleanup); a streaming
# standby, if started, lives in $T/pgs.  The system's own clusters are
# never used.  Needs root (initdb runs through runuser) and the server
# binaries: pg_need skips the test (77) otherwise.
#
# Roles: the database vigil belongs to the NOLOGIN role vigil; n1, n2 and
# n3 are LOGIN members of vigil whose sessions start as vigil (ALTER ROLE
# nX SET role = 'vigil').  So whichever node connects first creates the
# schema vigil, everything in it belongs to vigil, and the three can read,
# write and migrate the same tables (ALTER TABLE needs the owner) with no
# superuser and no GRANT; RESET ROLE and DISCARD ALL go back to vigil.
# pg_stat_activity.usename is still nX (the session user), so a fault can
# target one node.  Every role logs in without a password (initdb -A
# trust, for the socket and for 127.0.0.1).
#
# Functions that talk to a server use the primary, or the standby when
# PG_AT=standby (e.g. `PG_AT=standby pg_sql "SELECT 1"`).  The primary is
# PGPORT_T, PGSOCK_T (the socket directory), PGDATA_T and PGPID_T (the
# postmaster), the standby PGPORT_S, PGSOCK_S, PGDATA_S and PGPID_S; PGBIN
# is the newest /usr/lib/postgresql/*/bin unless set.
#
# PgBouncer (PGBOUNCER, /usr/sbin/pgbouncer unless set) in front of the
# primary: `pgb_start [MODE]` (pool_mode MODE: transaction, the default,
# session or statement; call it in the test's shell, not in $(...)) runs
# one as the user postgres under $T/pgb (pgbouncer.ini, userlist.txt,
# pgbouncer.log, pgbouncer.pid; its unix socket in $T/pgb/sock), on
# 127.0.0.1 and a port of its own, and returns once psql gets through it
# to the database vigil; PGBPORT_T and PGBPID_T (pgbouncer itself) are
# exported.  Its one database, vigil, is the primary's at pgb_start
# (socket and port); n1, n2, n3 and postgres log in through it (they,
# and vigil, are in its auth_file; auth_type trust), postgres also to its
# admin console (-d pgbouncer: SHOW POOLS); it ignores the
# startup parameters extra_float_digits and options (PGOPTIONS) and
# retries a failed server login after 1 s (server_login_retry), not 15.
# PGB_USERS (words) are more roles it lets in.
# `pgb_conninfo I` prints node I's conninfo through it (the role nI, as
# cluster-lib.sh's node_conninfo), `pgb_stop` ends it (by pid; cleanup
# does too), and a pgb_start after it runs it again on the same port.
# pgb_need skips the test (77) without pg_need's needs or PgBouncer.

: "${PGBIN:=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n 1)}"
PGPORT_T='' PGSOCK_T='' PGDATA_T='' PGPID_T=''
PGPORT_S='' PGSOCK_S='' PGDATA_S='' PGPID_S=''
: "${PGBOUNCER:=/usr/sbin/pgbouncer}"
PGBPORT_T='' PGBPID_T='' _PGB_START='' _PGB_RUNUSER=''
: "${PG_MAX_CONNECTIONS:=200}"
# What the environment may hold must not redirect psql or the nodes.
unset PGHOST PGHOSTADDR PGPORT PGUSER PGDATABASE PGSERVICE PGSERVICEFILE \
	PGOPTIONS PGTARGETSESSIONATTRS

# pg_need: skip (exit 77) unless this runs as root with runuser, a user
# postgres and PostgreSQL's server binaries (all installed by
# contrib/install-deps.sh --test: in CI their absence fails the test,
# lib.sh's skip_fixable).
pg_need() {
	local b
	[ "$(id -u)" -eq 0 ] || skip "not root: the PostgreSQL tests run as root"
	need_cmd runuser util-linux
	id postgres >/dev/null 2>&1 || skip_fixable "no user postgres (package postgresql)"
	for b in initdb pg_ctl postgres psql pg_basebackup; do
		[ -n "$PGBIN" ] && [ -x "$PGBIN/$b" ] ||
			skip_fixable "no PostgreSQL server (${PGBIN:-/usr/lib/postgresql/*/bin}/$b)"
	done
}

# pg_as COMMAND...: run COMMAND as the user postgres.
pg_as() { runuser -u postgres -- "$@"; }

# _pg_which: the server PG_AT names (primary, the default, or standby)
# in the caller's _data, _sock, _port and _log.
_pg_which() {
	case ${PG_AT:-primary} in
	primary) _data=$PGDATA_T _sock=$PGSOCK_T _port=$PGPORT_T ;;
	standby) _data=$PGDATA_S _sock=$PGSOCK_S _port=$PGPORT_S ;;
	*) fail "PG_AT=$PG_AT: primary or standby" ;;
	esac
	[ -n "$_data" ] || fail "no ${PG_AT:-primary} PostgreSQL server in this test"
	_log=${_data%/data}/postgres.log
}

# _pg_postmaster DATA: the pid of the postmaster running on DATA, if any
# (its postmaster.pid names it, and its working directory is DATA: not a
# process that got the pid of one that died).
_pg_postmaster() {
	local pid
	pid=$(head -n 1 "$1/postmaster.pid" 2>/dev/null) || return 1
	[ -n "$pid" ] && alive "$pid" &&
		[ "$(readlink "/proc/$pid/cwd" 2>/dev/null)" = "$1" ] || return 1
	echo "$pid"
}

# _pg_port: a TCP port from 20000-31999 (under the ephemeral range) that
# nothing on 127.0.0.1 listens on now and that none of this test's
# servers nor its PgBouncer has (even stopped: it comes back there).
_pg_port() {
	local p i
	for i in $(seq 1 100); do
		p=$((20000 + (RANDOM + i) % 12000))
		[ "$p" != "$PGPORT_T" ] && [ "$p" != "$PGPORT_S" ] &&
			[ "$p" != "$PGBPORT_T" ] || continue
		if ! (: <"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	fail "no free TCP port found"
}

# _pg_conf DATA SOCKDIR PORT: the test's settings, in DATA/vigil-test.conf
# (included by postgresql.conf; pg_basebackup copies both).
_pg_conf() {
	cat >"$1/vigil-test.conf" <<EOF
port = $3
unix_socket_directories = '$2'
listen_addresses = '127.0.0.1'
fsync = off
shared_buffers = 32MB
max_connections = $PG_MAX_CONNECTIONS
wal_level = replica
max_wal_senders = 5
hot_standby = on
log_line_prefix = '%m [%p] %u '
log_connections = on
log_disconnections = on
EOF
	chown postgres: "$1/vigil-test.conf"
	grep -qx "include 'vigil-test.conf'" "$1/postgresql.conf" ||
		echo "include 'vigil-test.conf'" >>"$1/postgresql.conf"
}

# _pg_launch DATA SOCKDIR LOG: start the server on a free port (another
# one if that one was taken meanwhile); the port on stdout.
_pg_launch() {
	local port try
	for try in 1 2 3 4 5; do
		port=$(_pg_port)
		_pg_conf "$1" "$2" "$port"
		if pg_as "$PGBIN/pg_ctl" -D "$1" -l "$3" -w -t 30 start \
			</dev/null >>"$3.ctl" 2>&1; then
			echo "$port"
			return 0
		fi
		grep -q 'could not bind\|Address already in use' "$3" ||
			fail "PostgreSQL did not start (try $try); log: $(tail -n 20 "$3")"
	done
	fail "PostgreSQL found no free port in 5 tries; log: $(tail -n 20 "$3")"
}

# _pg_reach DIR: make DIR (a root-owned 0700 mktemp -d) traversable by
# postgres, and check that every directory above it is.
_pg_reach() {
	chmod o+x "$1"
	pg_as test -x "$1" ||
		fail "the user postgres cannot reach $1 (TMPDIR=${TMPDIR:-}): a directory above it is closed"
}

# pg_start: the private server (primary): initdb, start, the database
# vigil and the roles vigil, n1, n2, n3.  Sets and exports PGDATA_T,
# PGSOCK_T, PGPORT_T and PGPID_T; the log is $T/pg/postgres.log.
pg_start() {
	local t0 t1 t2 r
	pg_need
	_pg_reach "$T"
	mkdir -p "$T/pg/sock"
	chown -R postgres: "$T/pg"
	PGDATA_T=$T/pg/data PGSOCK_T=$T/pg/sock
	t0=$(now_ms)
	pg_as "$PGBIN/initdb" -D "$PGDATA_T" --no-sync -A trust -U postgres \
		-E UTF8 --locale=C >"$T/pg/initdb.log" 2>&1 ||
		fail "initdb failed: $(tail -n 20 "$T/pg/initdb.log")"
	t1=$(now_ms)
	PGPORT_T=$(_pg_launch "$PGDATA_T" "$PGSOCK_T" "$T/pg/postgres.log")
	PGPID_T=$(_pg_postmaster "$PGDATA_T") || fail "no postmaster.pid in $PGDATA_T"
	t2=$(now_ms)
	export PGDATA_T PGSOCK_T PGPORT_T PGPID_T
	pg_psql -d postgres -c "CREATE ROLE vigil NOLOGIN" \
		-c "CREATE DATABASE vigil OWNER vigil" >/dev/null ||
		fail "could not create the database vigil"
	for r in n1 n2 n3; do
		pg_psql -c "CREATE ROLE $r LOGIN IN ROLE vigil" \
			-c "ALTER ROLE $r SET role = 'vigil'" >/dev/null ||
			fail "could not create the role $r"
	done
	log "postgres: initdb $((t1 - t0)) ms, start $((t2 - t1)) ms, roles $(($(now_ms) - t2)) ms; port $PGPORT_T, pid $PGPID_T"
}

# pg_psql [ARGS...]: psql as the role postgres on the server PG_AT names,
# database vigil; later ARGS win (-U n1, -d postgres, -h, -p).
pg_psql() {
	local _data _sock _port _log
	_pg_which
	PGOPTIONS='-c client_min_messages=warning' "$PGBIN/psql" -X -q \
		-v ON_ERROR_STOP=1 -h "$_sock" -p "$_port" -U postgres -d vigil "$@"
}

# pg_sql SQL [ARGS...]: run SQL, print the rows unaligned, tuples only.
pg_sql() {
	local sql=$1
	shift
	pg_psql -A -t "$@" -c "$sql"
}

# pg_sql_as ROLE SQL: SQL as the login role ROLE, unaligned, tuples only;
# its errors go to $T/err.
pg_sql_as() { pg_psql -U "$1" -A -t -c "$2" 2>"$T/err"; }

# pg_children PID: the pids of PID's live children.
pg_children() {
	# Field 1 is the pid; after the last ") ", the state then the parent.
	cat /proc/[0-9]*/stat 2>/dev/null |
		awk -v pp="$1" '{ p = $1; sub(/^.*\) /, ""); if ($2 == pp && $1 != "Z") print p }'
}

# _pg_cont PID: SIGCONT the postmaster PID and its children (a test may
# have stopped its walreceiver), so that a stop is not held up.
_pg_cont() {
	local p
	for p in "$1" $(pg_children "$1"); do
		kill -CONT "$p" 2>/dev/null || true
	done
}

# _pg_stop_data DATA: fast shutdown of the server on DATA if it runs;
# then SIGQUIT (immediate), then SIGKILL, each waited for with a deadline.
_pg_stop_data() {
	local pid
	pid=$(_pg_postmaster "$1") || return 0
	_pg_cont "$pid"
	pg_as "$PGBIN/pg_ctl" -D "$1" -m fast -w -t 20 stop >/dev/null 2>&1 &&
		retry 5 dead "$pid" && return 0
	kill -QUIT "$pid" 2>/dev/null || true
	retry 5 dead "$pid" && return 0
	kill -KILL "$pid" 2>/dev/null || true
	retry 5 dead "$pid"
}

# pg_stop: stop the server PG_AT names (fast, then by pid); at cleanup
# anyway.
pg_stop() {
	local _data _sock _port _log
	_pg_which
	_pg_stop_data "$_data" || fail "PostgreSQL on $_data did not stop"
}

# pg_stopped_us: when the server PG_AT names last took a shutdown
# request, in microseconds since the epoch, from its log (%m): the
# moment it stopped answering.  A test's clock read before pg_stop is
# earlier by pg_ctl's start (runuser, a fork): a renew sent in between
# is still answered.
pg_stopped_us() {
	local _data _sock _port _log l d tm tz
	_pg_which
	l=$(grep -E '^[0-9-]+ [0-9:.]+ [A-Z]+ .*received (fast|smart|immediate) shutdown request' "$_log" | tail -n 1)
	[ -n "$l" ] || fail "no shutdown request in $_log"
	read -r d tm tz _ <<<"$l"
	date -d "$d $tm $tz" +%s%6N
}

# pg_crash: stop the server PG_AT names as a crash would (-m immediate:
# no checkpoint, clients cut off).
pg_crash() {
	local _data _sock _port _log pid
	_pg_which
	pid=$(_pg_postmaster "$_data") || fail "PostgreSQL on $_data is not running"
	pg_as "$PGBIN/pg_ctl" -D "$_data" -m immediate -w -t 20 stop >/dev/null ||
		fail "pg_ctl stop -m immediate failed"
	retry 5 dead "$pid" || fail "the postmaster $pid outlived pg_ctl stop -m immediate"
}

# pg_restart: restart the server PG_AT names (fast), or start it again
# after pg_stop or pg_crash, on the same port.
pg_restart() {
	local _data _sock _port _log pid
	_pg_which
	if pid=$(_pg_postmaster "$_data"); then
		_pg_cont "$pid"
		pg_as "$PGBIN/pg_ctl" -D "$_data" -l "$_log" -m fast -w -t 30 \
			restart </dev/null >>"$_log.ctl" 2>&1 ||
			fail "pg_ctl restart failed; log: $(tail -n 20 "$_log")"
	else
		pg_as "$PGBIN/pg_ctl" -D "$_data" -l "$_log" -w -t 30 start \
			</dev/null >>"$_log.ctl" 2>&1 ||
			fail "PostgreSQL did not start again; log: $(tail -n 20 "$_log")"
	fi
	pid=$(_pg_postmaster "$_data") || fail "no postmaster after the restart"
	case ${PG_AT:-primary} in
	primary) PGPID_T=$pid ;;
	standby) PGPID_S=$pid ;;
	esac
}

# pg_standby_start: a streaming standby of the primary in $T/pgs
# (pg_basebackup -R -X stream), with the same max_connections (it
# refuses to start with fewer), its own port and socket directory.  Sets
# and exports PGDATA_S, PGSOCK_S, PGPORT_S, PGPID_S.
pg_standby_start() {
	local t0 t1
	[ -n "$PGDATA_T" ] || fail "pg_standby_start: pg_start first"
	mkdir -p "$T/pgs/sock"
	chown -R postgres: "$T/pgs"
	PGDATA_S=$T/pgs/data PGSOCK_S=$T/pgs/sock
	t0=$(now_ms)
	pg_as "$PGBIN/pg_basebackup" -h "$PGSOCK_T" -p "$PGPORT_T" -U postgres \
		-D "$PGDATA_S" -R -X stream -c fast -N >"$T/pgs/basebackup.log" 2>&1 ||
		fail "pg_basebackup failed: $(tail -n 20 "$T/pgs/basebackup.log")"
	t1=$(now_ms)
	PGPORT_S=$(_pg_launch "$PGDATA_S" "$PGSOCK_S" "$T/pgs/postgres.log")
	PGPID_S=$(_pg_postmaster "$PGDATA_S") || fail "no postmaster.pid in $PGDATA_S"
	export PGDATA_S PGSOCK_S PGPORT_S PGPID_S
	log "postgres standby: pg_basebackup $((t1 - t0)) ms, start $(($(now_ms) - t1)) ms; port $PGPORT_S, pid $PGPID_S"
}

# pg_promote: promote the standby (pg_ctl promote, which waits).
pg_promote() {
	local t0
	[ -n "$PGDATA_S" ] || fail "pg_promote: no standby"
	t0=$(now_ms)
	pg_as "$PGBIN/pg_ctl" -D "$PGDATA_S" -w -t 30 promote >/dev/null ||
		fail "pg_ctl promote failed; log: $(tail -n 20 "${PGDATA_S%/data}/postgres.log")"
	log "postgres standby promoted in $(($(now_ms) - t0)) ms"
}

# pg_rejoin: after pg_promote, the old primary (stopped: pg_crash) comes
# back as a streaming standby of the promoted server, on its own port and
# socket directory (which the nodes' conninfo names): its data directory
# made again by pg_basebackup.  Then the two swap names: PG*_T are the
# promoted server, PG*_S the old primary, so that the primary and the
# standby (PG_AT, pg_crash, pg_promote) are what they say again.
pg_rejoin() {
	local data=$PGDATA_T sock=$PGSOCK_T port=$PGPORT_T t0
	[ -n "$PGDATA_S" ] || fail "pg_rejoin: no standby"
	! _pg_postmaster "$data" >/dev/null || fail "pg_rejoin: the primary on $data runs"
	[ "$(PG_AT=standby pg_sql "SELECT pg_is_in_recovery()")" = f ] ||
		fail "pg_rejoin: the standby is not promoted"
	t0=$(now_ms)
	rm -rf "$data"
	pg_as "$PGBIN/pg_basebackup" -h "$PGSOCK_S" -p "$PGPORT_S" -U postgres \
		-D "$data" -R -X stream -c fast -N >"${data%/data}/basebackup.log" 2>&1 ||
		fail "pg_basebackup failed: $(tail -n 20 "${data%/data}/basebackup.log")"
	_pg_conf "$data" "$sock" "$port"
	pg_as "$PGBIN/pg_ctl" -D "$data" -l "${data%/data}/postgres.log" -w -t 30 \
		start </dev/null >>"${data%/data}/postgres.log.ctl" 2>&1 ||
		fail "the rejoined standby did not start; log: $(tail -n 20 "${data%/data}/postgres.log")"
	PGDATA_T=$PGDATA_S PGSOCK_T=$PGSOCK_S PGPORT_T=$PGPORT_S PGPID_T=$PGPID_S
	PGDATA_S=$data PGSOCK_S=$sock PGPORT_S=$port
	PGPID_S=$(_pg_postmaster "$data") || fail "no postmaster.pid in $data"
	export PGDATA_T PGSOCK_T PGPORT_T PGPID_T PGDATA_S PGSOCK_S PGPORT_S PGPID_S
	log "postgres: the old primary rejoined as a standby in $(($(now_ms) - t0)) ms; port $PGPORT_S, pid $PGPID_S"
}

_pg_role() {
	case $1 in
	[a-z_]*[!a-z0-9_]*) fail "bad role name: $1" ;;
	[a-z_]*) ;;
	*) fail "bad role name: $1" ;;
	esac
}

# pg_terminate ROLE: pg_terminate_backend of every session of ROLE (its
# session user), each waited for up to 5 s; prints how many ended.
pg_terminate() {
	_pg_role "$1"
	pg_sql "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 5000))
		FROM pg_stat_activity WHERE usename = '$1'"
}

# pg_backends ROLE: how many sessions ROLE has.
pg_backends() {
	_pg_role "$1"
	pg_sql "SELECT count(*) FROM pg_stat_activity WHERE usename = '$1'"
}

# pg_has_backends ROLE N: ROLE has N sessions (for retry).
pg_has_backends() { [ "$(pg_backends "$1")" = "$2" ]; }

# pg_nologin ROLE / pg_login ROLE: ROLE may not / may log in again (the
# sessions it has stay: pg_terminate ends them).
pg_nologin() {
	_pg_role "$1"
	pg_psql -c "ALTER ROLE $1 NOLOGIN" >/dev/null
}
pg_login() {
	_pg_role "$1"
	pg_psql -c "ALTER ROLE $1 LOGIN" >/dev/null
}

# pgb_need: skip (exit 77) unless pg_need's needs and PgBouncer are
# there.
pgb_need() {
	pg_need
	[ -x "$PGBOUNCER" ] || skip_fixable "no PgBouncer ($PGBOUNCER)"
}

# _pgb_conf DIR PORT MODE: DIR/pgbouncer.ini, in front of the primary.
_pgb_conf() {
	cat >"$1/pgbouncer.ini" <<EOF
[databases]
vigil = host=$PGSOCK_T port=$PGPORT_T dbname=vigil

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $2
unix_socket_dir = $1/sock
auth_type = trust
auth_file = $1/userlist.txt
admin_users = postgres
pool_mode = $3
max_client_conn = 200
default_pool_size = 20
ignore_startup_parameters = extra_float_digits,options
server_login_retry = 1
logfile = $1/pgbouncer.log
pidfile = $1/pgbouncer.pid
EOF
	chown postgres: "$1/pgbouncer.ini"
}

# _pgb_child: the pid of the pgbouncer that _PGB_RUNUSER (runuser) runs:
# its child, once that has exec'd pgbouncer.
_pgb_child() {
	local c exe
	exe=$(readlink -f "$PGBOUNCER")
	for c in $(pg_children "$_PGB_RUNUSER"); do
		if [ "$(readlink "/proc/$c/exe" 2>/dev/null)" = "$exe" ]; then
			echo "$c"
			return 0
		fi
	done
	return 1
}

# _pgb_up PORT: psql gets through PgBouncer on PORT to the database vigil.
_pgb_up() {
	[ "$(PGCONNECT_TIMEOUT=2 pg_sql "SELECT current_database()" \
		-h 127.0.0.1 -p "$1" 2>/dev/null)" = vigil ]
}

# _pgb_launch DIR PORT MODE: start PgBouncer on PORT and wait (up to
# 10 s) until psql gets through it; 1 if PORT was taken (PgBouncer 1.18
# does not exit then: it would serve its unix socket only, and psql on
# 127.0.0.1:PORT reach whatever has it), once that PgBouncer is stopped.
_pgb_launch() {
	local d=$1 port=$2 deadline off new
	_pgb_conf "$d" "$port" "$3"
	rm -f "$d/pgbouncer.pid"
	off=$(stat -c %s "$d/pgbouncer.log" 2>/dev/null) || off=0
	runuser -u postgres -- "$PGBOUNCER" "$d/pgbouncer.ini" \
		</dev/null >>"$d/pgbouncer.out" 2>&1 &
	_PGB_RUNUSER=$!
	track "$_PGB_RUNUSER"
	deadline=$(($(now_ms) + $(slow_s 10) * 1000))
	while :; do
		if [ -z "$PGBPID_T" ] && PGBPID_T=$(_pgb_child); then
			_PGB_START=$(starttime "$PGBPID_T")
			track "$PGBPID_T"
		fi
		# This start's lines of the log.
		new=$(tail -c +$((off + 1)) "$d/pgbouncer.log" 2>/dev/null) || new=
		if grep -qF "cannot listen on 127.0.0.1:$port:" <<<"$new" &&
			[ -n "$PGBPID_T" ]; then
			_pgb_end || true
			return 1
		fi
		if grep -q "listening on 127\.0\.0\.1:$port\$" <<<"$new" &&
			[ -n "$PGBPID_T" ] && _pgb_up "$port"; then
			return 0
		fi
		if dead "$_PGB_RUNUSER"; then
			wait "$_PGB_RUNUSER" 2>/dev/null || true
			_PGB_RUNUSER='' PGBPID_T='' _PGB_START=''
			fail "PgBouncer exited; log: $(tail -n 20 "$d/pgbouncer.log" 2>/dev/null || tail -n 20 "$d/pgbouncer.out")"
		fi
		[ "$(now_ms)" -lt "$deadline" ] ||
			fail "psql did not get through PgBouncer in 10 s; log: $(tail -n 20 "$d/pgbouncer.log" 2>/dev/null)"
		sleep 0.02
	done
}

# pgb_start [MODE]: PgBouncer in front of the primary, pool_mode MODE
# (transaction unless given), on the port it had if it ran before in this
# test, else on a free one; sets and exports PGBPORT_T and PGBPID_T.  In
# the test's shell, not in $(...).
pgb_start() {
	local mode=${1:-transaction} d=$T/pgb try port t0
	pgb_need
	[ -n "$PGPORT_T" ] || fail "pgb_start: pg_start first"
	[ -z "$_PGB_RUNUSER" ] || fail "pgb_start: PgBouncer runs already (pid $PGBPID_T)"
	case $mode in
	session | transaction | statement) ;;
	*) fail "pgb_start: pool mode '$mode': session, transaction or statement" ;;
	esac
	mkdir -p "$d/sock"
	# shellcheck disable=SC2086 # PGB_USERS: more roles, words
	printf '"%s" ""\n' n1 n2 n3 vigil postgres ${PGB_USERS:-} >"$d/userlist.txt"
	chown -R postgres: "$d"
	t0=$(now_ms)
	for try in 1 2 3 4 5; do
		port=${PGBPORT_T:-$(_pg_port)}
		if _pgb_launch "$d" "$port" "$mode"; then
			PGBPORT_T=$port
			export PGBPORT_T PGBPID_T
			log "pgbouncer: $mode mode, up in $(($(now_ms) - t0)) ms; port $PGBPORT_T, pid $PGBPID_T"
			return 0
		fi
		# Taken meanwhile: another port, unless it must come back on
		# its own.
		[ -z "$PGBPORT_T" ] || fail "PgBouncer: its port $port is taken"
	done
	fail "PgBouncer found no free port in 5 tries"
}

# pgb_conninfo I: node I's libpq conninfo through PgBouncer (the role nI).
pgb_conninfo() {
	case $1 in
	1 | 2 | 3) ;;
	*) fail "pgb_conninfo: no node '$1': nodes are 1, 2 and 3" ;;
	esac
	[ -n "$PGBPORT_T" ] || fail "pgb_conninfo: pgb_start first"
	echo "host=127.0.0.1 port=$PGBPORT_T dbname=vigil user=n$1"
}

# _pgb_end: SIGTERM (immediate shutdown) and SIGCONT to PgBouncer, by
# pid, SIGKILL past 5 s; then its runuser, reaped.  1 if either needed
# more than that first SIGTERM.
_pgb_end() {
	local rc=0 s
	[ -n "$_PGB_RUNUSER" ] || return 0
	if [ -n "$PGBPID_T" ] && alive "$PGBPID_T" &&
		[ "$(starttime "$PGBPID_T")" = "$_PGB_START" ]; then
		kill -TERM "$PGBPID_T" 2>/dev/null || true
		kill -CONT "$PGBPID_T" 2>/dev/null || true
		if ! retry 5 dead "$PGBPID_T"; then
			kill -KILL "$PGBPID_T" 2>/dev/null || true
			rc=1
		fi
	fi
	# runuser exits with its child (and passes a SIGTERM on to it).
	for s in TERM KILL; do
		retry 5 dead "$_PGB_RUNUSER" && break
		kill -"$s" "$_PGB_RUNUSER" 2>/dev/null || true
		rc=1
	done
	wait "$_PGB_RUNUSER" 2>/dev/null || true
	_PGB_RUNUSER='' PGBPID_T='' _PGB_START=''
	return "$rc"
}

# pgb_stop: stop PgBouncer (its clients and its server sessions are cut).
pgb_stop() {
	[ -n "$_PGB_RUNUSER" ] || fail "pgb_stop: PgBouncer does not run"
	_pgb_end || fail "PgBouncer did not stop on SIGTERM; log: $(tail -n 20 "$T/pgb/pgbouncer.log")"
}

# Cleanup: PgBouncer, whatever state it is in.
_pgb_cleanup() {
	_pgb_end || true
	if [ "$1" -ne 0 ] && [ "$1" -ne 77 ] && [ -s "$T/pgb/pgbouncer.log" ]; then
		printf '# pgbouncer log:\n' >&2
		tail -n 20 "$T/pgb/pgbouncer.log" >&2 2>/dev/null || true
	fi
	return 0
}

# Cleanup: the standby, then the primary, whatever state they are in.
_pg_cleanup() {
	if [ -n "$PGDATA_S" ]; then _pg_stop_data "$PGDATA_S"; fi
	if [ -n "$PGDATA_T" ]; then _pg_stop_data "$PGDATA_T"; fi
	if [ "$1" -ne 0 ] && [ "$1" -ne 77 ] && [ -n "$PGDATA_T" ]; then
		printf '# postgres log:\n' >&2
		tail -n 20 "${PGDATA_T%/data}/postgres.log" >&2 2>/dev/null || true
	fi
	return 0
}
at_cleanup _pg_cleanup
# PgBouncer before the servers (the last registered goes first).
at_cleanup _pgb_cleanup
