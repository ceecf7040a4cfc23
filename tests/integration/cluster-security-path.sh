#!/bin/bash
# shellcheck disable=SC2317 # predicates called through retry
# search_path: the owner of the database (not vigild's role) plants, in
# public and in a schema named after vigild's role ("$user"), operators
# and functions that match what vigild's statements and vigil's functions
# call better than PostgreSQL's own (text || integer, numeric * integer,
# text * interval, integer ^ integer, unnest of int[], bigint[], text[]),
# each recording that it ran.  Two nodes connect as the role vnode (its
# sessions' default search_path is "$user", public); n2's work
# connection goes through PgBouncer in transaction mode, where no session
# setting holds.  Leases are taken and renewed, a cluster service is
# stopped and started (the operator's hold), messages are enqueued (by
# vigilctl and by an application's SQL), claimed, run, fail and go dead,
# are listed, retried and kicked, vigilctl cluster and queue answer: not
# one planted object ever runs.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
cluster_need
pgb_need

CLUSTER_NODES="1 2"
m=svc-$$
cluster_job svc <<EOF
command = {"bash", "-c", "exec -a $m sleep 1000", "$m"}
cluster = true
stop_timeout = "500ms"
EOF
cat >"$T/run.sh" <<'EOF'
p=$(cat)
echo "$p $VIGIL_MESSAGE_ID $VIGIL_NODE" >>"$VIGIL_TEST_ROOT/runs"
case $p in bad*) exit 3 ;; esac
EOF
cluster_job q <<EOF
kind = "queue"
cluster = true
concurrency = 2
cluster_concurrency = 3
max_attempts = 1
drain_timeout = "500ms"
stop_timeout = "500ms"
command = {"bash", "$T/run.sh"}
EOF

# field I KEY: KEY of svc in node I's --json status.
field() {
	{ nctl "$1" --json status svc 2>/dev/null || :; } |
		jq -r --arg k "$2" '.jobs[0][$k] | tostring'
}
states() { echo "$(field 1 state) $(field 2 state)"; }
one_runs() {
	case $(states) in
	"RUNNING STARTING" | "STARTING RUNNING") ;;
	*) return 1 ;;
	esac
	[ "$(marker_pids "$m" | wc -l)" = 1 ]
}
all_stopped() { [ "$(states)" = "STOPPED STOPPED" ] && [ -z "$(marker_pids "$m")" ]; }
ran() { grep -q "^$1 " "$T/runs" 2>/dev/null; }
traps() { pg_sql "SELECT count(*) FROM public.trap"; }
no_trap() { [ "$(traps)" = 0 ]; }
trap_rows() { pg_sql "SELECT what || ' by ' || who FROM public.trap GROUP BY 1 ORDER BY 1" | tr '\n' ';'; }

pg_start
PGB_USERS=vnode pgb_start transaction
# The database belongs to appowner; vigild's role vnode may create the
# schema vigil in it, nothing more.
pg_psql -c "CREATE ROLE appowner LOGIN" -c "CREATE ROLE vnode LOGIN" \
	-c "ALTER DATABASE vigil OWNER TO appowner" \
	-c "GRANT CREATE ON DATABASE vigil TO vnode" >/dev/null ||
	fail "could not create the roles"

# The traps, as the database's owner, in public and in "$user" (vnode).
plant() {
	local s=$1
	cat <<EOF
CREATE FUNCTION $s.t_cat(text, integer) RETURNS text LANGUAGE plpgsql
  SECURITY DEFINER SET search_path = pg_catalog AS \$\$ BEGIN
  INSERT INTO public.trap (what) VALUES ('$s.||(text,int)');
  RETURN \$1 || \$2::text; END \$\$;
CREATE OPERATOR $s.|| (LEFTARG = text, RIGHTARG = integer, FUNCTION = $s.t_cat);
CREATE FUNCTION $s.t_catb(text, bigint) RETURNS text LANGUAGE plpgsql
  SECURITY DEFINER SET search_path = pg_catalog AS \$\$ BEGIN
  INSERT INTO public.trap (what) VALUES ('$s.||(text,bigint)');
  RETURN \$1 || \$2::text; END \$\$;
CREATE OPERATOR $s.|| (LEFTARG = text, RIGHTARG = bigint, FUNCTION = $s.t_catb);
CREATE FUNCTION $s.t_mul(numeric, integer) RETURNS numeric LANGUAGE plpgsql
  SECURITY DEFINER SET search_path = pg_catalog AS \$\$ BEGIN
  INSERT INTO public.trap (what) VALUES ('$s.*(numeric,int)');
  RETURN \$1 * \$2::numeric; END \$\$;
CREATE OPERATOR $s.* (LEFTARG = numeric, RIGHTARG = integer, FUNCTION = $s.t_mul);
CREATE FUNCTION $s.t_muli(text, interval) RETURNS interval LANGUAGE plpgsql
  SECURITY DEFINER SET search_path = pg_catalog AS \$\$ BEGIN
  INSERT INTO public.trap (what) VALUES ('$s.*(text,interval)');
  RETURN \$1::float8 * \$2; END \$\$;
CREATE OPERATOR $s.* (LEFTARG = text, RIGHTARG = interval, FUNCTION = $s.t_muli);
CREATE FUNCTION $s.t_pow(integer, integer) RETURNS float8 LANGUAGE plpgsql
  SECURITY DEFINER SET search_path = pg_catalog AS \$\$ BEGIN
  INSERT INTO public.trap (what) VALUES ('$s.^(int,int)');
  RETURN \$1::float8 ^ \$2::float8; END \$\$;
CREATE OPERATOR $s.^ (LEFTARG = integer, RIGHTARG = integer, FUNCTION = $s.t_pow);
CREATE FUNCTION $s.unnest(integer[]) RETURNS SETOF integer LANGUAGE plpgsql
  SECURITY DEFINER SET search_path = pg_catalog AS \$\$ BEGIN
  INSERT INTO public.trap (what) VALUES ('$s.unnest(int[])');
  RETURN QUERY SELECT unnest(\$1); END \$\$;
CREATE FUNCTION $s.unnest(bigint[]) RETURNS SETOF bigint LANGUAGE plpgsql
  SECURITY DEFINER SET search_path = pg_catalog AS \$\$ BEGIN
  INSERT INTO public.trap (what) VALUES ('$s.unnest(bigint[])');
  RETURN QUERY SELECT unnest(\$1); END \$\$;
CREATE FUNCTION $s.unnest(text[]) RETURNS SETOF text LANGUAGE plpgsql
  SECURITY DEFINER SET search_path = pg_catalog AS \$\$ BEGIN
  INSERT INTO public.trap (what) VALUES ('$s.unnest(text[])');
  RETURN QUERY SELECT unnest(\$1); END \$\$;
EOF
}
{
	echo "CREATE TABLE public.trap (what text, who text DEFAULT session_user, at timestamptz DEFAULT now());"
	echo "CREATE SCHEMA vnode; GRANT USAGE ON SCHEMA vnode TO PUBLIC;"
	plant public
	plant vnode
} >"$T/plant.sql"
pg_psql -U appowner -f "$T/plant.sql" >/dev/null || fail "appowner could not plant the traps"
# The traps work: a session with vnode's default search_path runs them.
probe=$(pg_sql "SELECT 'x' || 1::int" -U vnode)
check "the traps catch a session of vnode ('x' || 1 = $probe)" [ "$(traps)" = 1 ]
pg_psql -c "TRUNCATE public.trap" >/dev/null

NODE_CONNINFO[1]="host=$PGSOCK_T port=$PGPORT_T dbname=vigil user=vnode"
NODE_CONNINFO[2]="host=$PGSOCK_T port=$PGPORT_T dbname=vigil user=vnode"
NODE_CLUSTER_EXTRA[2]="work_conninfo = \"host=127.0.0.1 port=$PGBPORT_T dbname=vigil user=vnode\""
n1_runs() { [ "$(field 1 state)" = RUNNING ]; }
node_start 1
retry 15 n1_runs || fail "svc does not run on n1: $(field 1 state)"
node_start 2
check "the schema vigil belongs to vnode" \
	[ "$(pg_sql "SELECT nspowner::regrole FROM pg_namespace WHERE nspname = 'vigil'")" = vnode ]

# Leases renewed for a while, the operator's stop and start.
retry 10 one_runs || fail "svc does not run once: $(states)"
nctl 2 stop svc >/dev/null || fail "n2: stop svc failed"
retry 10 all_stopped || fail "svc not stopped on both nodes: $(states)"
nctl 1 start svc >/dev/null || fail "n1: start svc failed"
retry 10 one_runs || fail "svc does not run again: $(states)"

# The queue: vigilctl enqueue on each node (n2's work connection through
# PgBouncer), with a delay, an application's SQL; a failure goes dead,
# is listed, retried (dead again) and the queue kicked.
a=$(nctl 1 enqueue q a1) || fail "n1: enqueue failed"
b=$(nctl 2 enqueue q b2) || fail "n2: enqueue failed"
c=$(nctl 2 enqueue --delay 200ms q c3) || fail "n2: enqueue --delay failed"
d=$(pg_sql "SELECT vigil.enqueue('q', 'd4')" -U vnode) || fail "the application's enqueue failed"
e=$(nctl 1 enqueue q bad5) || fail "n1: enqueue bad5 failed"
for id in a1 b2 c3 d4 bad5; do
	retry 10 ran "$id" || fail "message $id did not run; runs: $(cat "$T/runs" 2>/dev/null)"
done
is_dead() { [ "$(pg_sql "SELECT state FROM vigil.message WHERE id = $e")" = 2 ]; }
retry 10 is_dead || fail "message $e is not dead"
nctl 2 queue --dead q >"$T/dead" || fail "n2: queue --dead failed"
check "queue --dead (n2) lists $e" grep -q "^$e " "$T/dead"
nctl 2 retry "$e" >/dev/null || fail "n2: retry $e failed"
ran_twice() { [ "$(grep -c '^bad5 ' "$T/runs")" = 2 ]; }
retry 10 ran_twice || fail "the retried message did not run again"
nctl 2 kick q >/dev/null || fail "n2: kick q failed"
nctl 1 kick q >/dev/null || fail "n1: kick q failed"
for i in 1 2; do
	nctl "$i" queue q >/dev/null || fail "n$i: queue q failed"
	nctl "$i" cluster >/dev/null || fail "n$i: cluster failed"
done
log "ran $a $b $c $d $e"
# A few more renew intervals, then: nothing planted ever ran.
renewed() { [ "$(pg_sql "SELECT count(*) FROM vigil.lease WHERE renewed_at > now() - interval '1 s' AND holder IS NOT NULL")" -ge 1 ]; }
retry 5 renewed || fail "no lease renewed lately"
check "no planted object ran ($(trap_rows))" no_trap
checks_passed

for i in 1 2; do node_stop "$i"; done
check "no planted object ran at the nodes' exit ($(trap_rows))" no_trap
checks_passed

# A database at schema version 2 (functions without their search_path)
# gets the pinned definitions from the next vigild to connect.
unpinned() {
	pg_sql "SELECT count(*) FROM pg_proc WHERE pronamespace = 'vigil'::regnamespace
		AND NOT coalesce('search_path=pg_catalog, pg_temp' = ANY(proconfig), false)"
}
pg_psql -c "DO \$\$ DECLARE f regprocedure; BEGIN
	FOR f IN SELECT oid FROM pg_proc WHERE pronamespace = 'vigil'::regnamespace LOOP
		EXECUTE format('ALTER FUNCTION %s RESET ALL', f);
	END LOOP; END \$\$" -c "UPDATE vigil.cluster SET schema_version = 2" >/dev/null ||
	fail "could not turn the schema back to version 2"
check "the functions are unpinned ($(unpinned))" [ "$(unpinned)" -gt 0 ]
node_start 1
migrated() { [ "$(pg_sql "SELECT schema_version FROM vigil.cluster")" = 5 ]; }
retry 10 migrated || fail "the schema was not migrated to version 3"
check "every function of vigil pins its search_path again" [ "$(unpinned)" = 0 ]
node_stop 1
checks_passed
log "ok"
