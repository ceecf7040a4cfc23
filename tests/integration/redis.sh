#!/bin/bash
# A real daemon from Debian speaks the readiness protocol unchanged:
# redis-server --supervised systemd becomes RUNNING through its own
# READY=1, and a job that depends on it starts only after that.
. "$(dirname "$0")/lib.sh"
need_cmd redis-server redis-server

mkdir -p "$T/redis"
job redis "command = {\"redis-server\", \"--port\", \"0\", \"--unixsocket\", \"$T/redis/redis.sock\", \"--save\", \"\", \"--appendonly\", \"no\", \"--dir\", \"$T/redis\", \"--daemonize\", \"no\", \"--supervised\", \"systemd\"}" \
	'ready = "notify"' 'ready_timeout = "20s"'
job client "command = {\"sh\", \"-c\", \"test -S $T/redis/redis.sock && echo up > $T/client.seen; exec sleep 1000\"}" \
	'depends = {"redis"}'
start_vigild
wait_state redis RUNNING 20
wait_state client RUNNING 10
ctl status redis | grep -q "status: Ready to accept connections" ||
	fail "redis's STATUS= not shown: $(ctl status redis)"
# The client found redis's socket already there when it started.
retry 5 test -s "$T/client.seen" || fail "client started before redis was ready"
rs=$(awk '{ print $22 }' "/proc/$(job_pid redis)/stat")
cs=$(awk '{ print $22 }' "/proc/$(job_pid client)/stat")
[ "$cs" -ge "$rs" ] || fail "client started before redis"
rp=$(job_pid redis)
stop_vigild
dead "$rp" || fail "redis survived the shutdown"
log "ok"
