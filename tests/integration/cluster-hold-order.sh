#!/bin/bash
# shellcheck disable=SC2317 # predicates called through retry
# The operator's start on a node wins over what that node read of the
# cluster-wide stops before it.  Under load, the answer of a reload's
# read of the jobs (which said "stopped") came after the operator's start
# on the same node and stopped the job again: the start answered
# "STOPPED: stopped cluster-wide" and the job stayed down while
# vigil.lease said it was started.  Here the read is held back by a lock
# on vigil.node_job while the start is asked; then the lock goes.
. "$(dirname "$0")/lib.sh"
# Stages 1 and 2 run it: not again under valgrind nor in distcheck.
. "$(dirname "$0")/pg-lib.sh"
# The lease connection waits on the lock: no query timeout meanwhile
# (and a lease_ttl the timeout fits in twice, as vigil.conf requires).
CLUSTER_QUERY_TIMEOUT=10s
CLUSTER_LEASE_TTL=30s
. "$(dirname "$0")/cluster-lib.sh"
cluster_need

m=svc-$$
cluster_job svc <<EOF
command = {"bash", "-c", "exec -a $m sleep 1000", "$m"}
cluster = true
stop_timeout = "500ms"
EOF

# held: vigil.lease.held of svc's instance 0.
held() {
	pg_sql "SELECT l.held FROM vigil.lease l JOIN vigil.job j ON j.id = l.job_id
		WHERE j.name = 'svc' AND l.instance = 0"
}
runs() { node_runs 1 svc; }
stopped() { [ "$(node_status 1 svc state)" = STOPPED ]; }

pg_start
node_start 1
retry 10 runs || fail "svc does not run: $(node_status 1 svc reason)"
nctl 1 stop svc >/dev/null || fail "n1: stop svc failed"
retry 5 stopped || fail "svc is not STOPPED: $(node_status 1 svc state)"
[ "$(held)" = t ] || fail "vigil.lease.held is not true: $(held)"

# The lock, held by a psql session the test feeds through a FIFO.
mkfifo "$T/locker"
pg_psql -A -t <"$T/locker" >"$T/locker.out" 2>&1 &
track $!
exec 9>"$T/locker"
echo "BEGIN; LOCK TABLE vigil.node_job IN ACCESS EXCLUSIVE MODE; SELECT 'locked';" >&9
locked() { grep -qx locked "$T/locker.out"; }
retry 10 locked || fail "no lock on vigil.node_job: $(cat "$T/locker.out")"

# The reload's read of the jobs (and the stops) waits for the lock.
nctl 1 reload >/dev/null || fail "n1: reload failed"
read_waits() {
	[ "$(pg_sql "SELECT count(*) FROM pg_locks
		WHERE NOT granted AND relation = 'vigil.node_job'::regclass")" -ge 1 ]
}
retry 10 read_waits || fail "n1's read of the jobs did not wait for the lock"

# The start, asked now: its write of the start queues behind the read.
# (It waits for svc to run: bounded, since without the fix it never does.)
timeout "$(slow_s 10)" "$VIGILCTL" -s "$T/n1/run/vigild.sock" start svc \
	>"$T/start.out" 2>&1 &
starter=$!
track "$starter"
asked() { grep -q '^vigild: uid [0-9]*: start$' "$(node_log 1)"; }
retry 10 asked || fail "n1 was not asked to start svc: $(tail -n 3 "$(node_log 1)")"
echo "COMMIT;" >&9
exec 9>&-

rc=0
wait "$starter" || rc=$?
check "the start exits 0 (exit $rc: $(cat "$T/start.out"))" [ "$rc" = 0 ]
check "svc runs" retry 10 runs
check "vigil.lease.held is false" [ "$(held)" = f ]
not_again() { ! grep -q '^vigild: svc: stopped cluster-wide$' "$(node_log 1)"; }
check "n1 did not stop it again on its earlier read" not_again
checks_passed
node_stop 1
log "ok: the start on n1 won over n1's read of the stops made before it"
