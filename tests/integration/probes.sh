#!/bin/bash
# ready and health probes (issue 20), against real servers: python3's
# http.server that listens only after a while is STARTING until it
# answers, then RUNNING, and its dependent starts after that; a port that
# never listens is a failed start after ready_timeout; exec: waits for its
# command to exit 0; a server that starts answering 500, or is SIGSTOPped,
# is restarted after health_failures checks, reason "unhealthy".
. "$(dirname "$0")/lib.sh"

# Ports under the ephemeral range: a port a client socket holds would fail
# web's bind, and web would loop through STARTING (seen in CI, issue 43).
P1=$(free_port)
P2=$(free_port "$P1")
P3=$(free_port "$P1" "$P2")
cat >"$T/srv.py" <<'PY'
import http.server, os, sys, time
port, flag, delay = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
time.sleep(delay)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        code = 500 if os.path.exists(flag) else 200
        self.send_response(code)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
PY
job web "command = {\"python3\", \"$T/srv.py\", \"$P1\", \"$T/web.500\", \"1.5\"}" \
	"ready = \"http:http://127.0.0.1:$P1/\""
job after 'command = "sleep 100000"' 'depends = {"web"}'
job deaf 'command = "sleep 100000"' "ready = \"tcp:$P2\"" \
	'ready_timeout = "700ms"' 'restart_delay = "30s"'
job flag "command = \"sleep 100000\"" "ready = \"exec:test -e $T/flag\""
job sick "command = {\"python3\", \"$T/srv.py\", \"$P3\", \"$T/sick.500\", \"0\"}" \
	"ready = \"tcp:$P3\"" "health = \"http:http://127.0.0.1:$P3/health\"" \
	'health_interval = "200ms"' 'health_failures = 3' 'restart_delay = "100ms"'
start_vigild

# web: STARTING while it sleeps, then RUNNING once it answers.
s=$(state web)
[ "$s" = STARTING ] || fail "web is '$s' before it listens, not STARTING"
grep -q "after: started pid" "$VLOG" &&
	fail "after started before web was ready: $(cat "$VLOG")"
wait_state web RUNNING
grep -q "web: ready (http:http://127.0.0.1:$P1/ answered)" "$VLOG" ||
	fail "no ready line: $(cat "$VLOG")"
wait_state after RUNNING
ready_line=$(grep -n "web: ready" "$VLOG" | head -n 1 | cut -d: -f1)
start_line=$(grep -n "after: started pid" "$VLOG" | head -n 1 | cut -d: -f1)
[ "$start_line" -gt "$ready_line" ] || fail "after started before web was ready"

# A bad probe in a reload: FILE:LINE errors, nothing changes.
wp=$(job_pid web)
cp "$JOBS/web.conf" "$T/web.conf.good"
job web "command = {\"python3\", \"$T/srv.py\", \"$P1\", \"$T/web.500\", \"0\"}" \
	'ready = "tcp:notaport"' 'health = "http:"'
rc=0
ctl reload >"$T/reload.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "a reload with bad probes exited $rc: $(cat "$T/reload.out")"
grep -q "web.conf:2: ready: \"notaport\": not a port (1-65535)" "$T/reload.out" ||
	fail "no ready error: $(cat "$T/reload.out")"
grep -q "web.conf:3: health: \"\": not an http:// URL" "$T/reload.out" ||
	fail "no health error: $(cat "$T/reload.out")"
[ "$(job_pid web)" = "$wp" ] && is_state web RUNNING ||
	fail "a bad reload touched web: $(ctl status web)"
cp "$T/web.conf.good" "$JOBS/web.conf"

# deaf: nothing listens: a failed start after ready_timeout.
wait_state deaf BACKOFF
ctl status deaf | grep -q "ready timeout" || fail "deaf: $(ctl status deaf)"
grep -q "deaf: no answer to its ready probe within ready_timeout (700ms)" "$VLOG" ||
	fail "no ready timeout line: $(cat "$VLOG")"

# flag: STARTING until its command exits 0.
is_state flag STARTING || fail "flag is $(state flag), not STARTING"
touch "$T/flag"
wait_state flag RUNNING

# sick: healthy, then 500: restarted, reason unhealthy.
wait_state sick RUNNING
p=$(job_pid sick)
track "$p"
touch "$T/sick.500"
restarted() { [ "$(job_pid sick)" != "$p" ] && is_state sick RUNNING; }
# It comes back still answering 500: 3 checks later it goes again.
retry 10 grep -q "sick: 3 health checks failed in a row" "$VLOG" ||
	fail "sick not found unhealthy: $(cat "$VLOG")"
rm -f "$T/sick.500"
retry 10 restarted || fail "sick was not restarted: $(ctl status sick)"
ctl history sick | grep -q "unhealthy" || fail "history: $(ctl history sick)"
grep -q "sick: health check http:http://127.0.0.1:$P3/health failed (1 of 3): answered 500" "$VLOG" ||
	fail "no failed check line: $(cat "$VLOG")"
grep -q "unhealthy: 3 health checks failed in a row" "$LOGS/sick.log" ||
	fail "no marker in the job's log: $(cat "$LOGS/sick.log")"

# SIGSTOPped: it accepts (the kernel does) but never answers.
p=$(job_pid sick)
track "$p"
n0=$(grep -c "sick: 3 health checks failed in a row" "$VLOG")
kill -STOP "$p"
stopped_out() { [ "$(grep -c "sick: 3 health checks failed in a row" "$VLOG")" -gt "$n0" ]; }
retry 10 stopped_out || { kill -CONT "$p"; fail "a SIGSTOPped server was not found unhealthy"; }
grep -q "no answer within 200ms" "$VLOG" || fail "no timeout line: $(cat "$VLOG")"
retry 10 dead "$p" || fail "the stopped server $p is still there"
wait_state sick RUNNING
log "$(grep -c 'health check' "$VLOG") health check lines in vigild's log"
stop_vigild
