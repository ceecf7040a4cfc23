#!/bin/bash
# The HTTP server under load and abuse (issue 23): 200 concurrent scrapes
# of /metrics while 100 jobs flap, with slow and half-open clients holding
# connections all the while.  Every scrape is answered and parsed by the
# real OpenMetrics parser; the control socket answers between them; a steady
# job is never touched; the stalled clients are cut at the idle timeout.
. "$(dirname "$0")/lib.sh"

# Heavy, and about behaviour that stage 1 of tests/run-all.sh sees:
# not again under valgrind (VIGILD_WRAPPER) nor in distcheck (VIGIL_SKIP_SLOW).
[ -z "${VIGILD_WRAPPER:-}" ] || skip "timings under valgrind say nothing; ASan runs it"
[ -z "${VIGIL_SKIP_SLOW:-}" ] || skip "VIGIL_SKIP_SLOW is set"
[ -z "${VIGIL_SKIP_TIMING:-}" ] || skip "VIGIL_SKIP_TIMING is set (a timing, load or container test: the gcc stage runs it)"

/usr/bin/python3 -c 'import prometheus_client' 2>/dev/null ||
	skip_fixable "python3-prometheus-client not installed (contrib/install-deps.sh --test)"

cat >"$T/vigil.conf" <<EOF
http_listen = "127.0.0.1:0"
EOF
for i in $(seq 1 100); do
	job "flap$i" "command = \"sh -c 'sleep 0.0$((i % 10)); exit 1'\"" \
		'restart_delay = "10ms"' 'restart_delay_max = "50ms"'
done
job steady 'command = "sleep 100000"'
start_vigild
http_port
wait_state steady RUNNING
steady=$(job_pid steady)
# The flapping goes on under the load: the restarts of all 100 jobs, as
# vigild counts them, grow while the scrapes run.
restarts() { ctl --json status | jq '[.jobs[] | select(.name | startswith("flap")) | .restarts] | add'; }
before=$(restarts)

/usr/bin/python3 - "$PORT" "$VIGILCTL" "$SOCK" "$VIGIL_TEST_SLOW" >"$T/load.out" 2>&1 <<'EOF' &
import socket, subprocess, sys, threading, time
import http.client
from prometheus_client.openmetrics.parser import text_string_to_metric_families

port, vigilctl, sock = int(sys.argv[1]), sys.argv[2], sys.argv[3]
slow = int(sys.argv[4])  # VIGIL_TEST_SLOW: the deadlines' factor
out = []

# Stalled clients: half a request line; a full request line and no end
# of headers; connected and silent.
stalled = []
for i in range(40):
    s = socket.create_connection(("127.0.0.1", port), timeout=30 * slow)
    s.sendall([b"GET /metr", b"GET /metrics HTTP/1.1\r\nHost: localhost\r\n", b""][i % 3])
    stalled.append(s)

ok, bad, errors, flaps = [0], [], [], [0]
lock = threading.Lock()
start = threading.Barrier(200)

done_at = []  # when each scrape was answered (monotonic)
answers = []  # (status, body) of each

def scrape():
    try:
        start.wait(timeout=30 * slow)
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30 * slow)
        c.request("GET", "/metrics")
        r = c.getresponse()
        body = r.read()
        with lock:
            done_at.append(time.monotonic())
            answers.append((r.status, body))
    except Exception as e:
        with lock:
            errors.append(repr(e))

# Parsed once every scrape is answered: parsing 200 texts under Python's
# one lock in the scraping threads took seconds, and a thread that waited
# for it read its answer late.
def judge(status, body):
    fams = {f.name: f for f in text_string_to_metric_families(body.decode())}
    n = sum(1 for s in fams["vigil_job_state"].samples
            if s.labels["job"].startswith("flap") and s.value == 1)
    if status == 200 and n == 100:
        ok[0] += 1
    else:
        bad.append((status, n))

t0 = time.monotonic()
threads = [threading.Thread(target=scrape) for _ in range(200)]
for t in threads:
    t.start()
# The control socket answers while the scrapes run.
ping = []
while any(t.is_alive() for t in threads) and time.monotonic() - t0 < 60 * slow:
    p0 = time.monotonic()
    subprocess.run([vigilctl, "-s", sock, "ping"], check=True,
                   stdout=subprocess.DEVNULL)
    ping.append((p0, time.monotonic()))
for t in threads:
    t.join(timeout=60 * slow)
elapsed = time.monotonic() - t0
for status, body in answers:
    try:
        judge(status, body)
    except Exception as e:
        errors.append("parse: " + repr(e))
print("scrapes ok %d bad %r errors %r in %.2fs" % (ok[0], bad[:3], errors[:3], elapsed))
# The pings answered while scrapes were still to be answered: between
# the first scrape's answer and the last's.
first, last = (min(done_at), max(done_at)) if done_at else (t0, t0)
between = sum(1 for p0, p1 in ping if first < p1 < last)
print("ping max %.3fs over %d" % (max(p1 - p0 for p0, p1 in ping) if ping else 0, len(ping)))
print("scraping %.2fs pings between %d" % (last - first, between))

# The stalled clients are cut once idle for the timeout (10 s).
t1 = time.monotonic()
closed = 0
for s in stalled:
    try:
        s.settimeout(max(0.1, 25 * slow - (time.monotonic() - t1)))
        while s.recv(4096):
            pass
        closed += 1
    except OSError:
        pass
print("stalled closed %d of %d after %.1fs" % (closed, len(stalled), time.monotonic() - t1))
EOF
LOAD=$!
track "$LOAD"
wait "$LOAD" || fail "the load script failed: $(cat "$T/load.out")"
cat "$T/load.out"

check "200 scrapes answered and parsed ($(grep '^scrapes' "$T/load.out"))" grep -q '^scrapes ok 200 bad \[\] errors \[\]' "$T/load.out"
# The control socket is not starved by the scrapes: a ping was answered
# while scrapes were still waiting for theirs.  One pass of libmicrohttpd
# runs every request that is ready, so on a fast machine 200 scrapes may
# all be answered in one or two passes (0.6 s on an idle 2-core machine)
# with no ping between; that is only judged when the scrapes' answers
# were spread over more than 2 s.  How long a ping waited is a figure,
# not a verdict (it grows with the machine's load): logged above.
# shellcheck disable=SC2016
check "the control socket answered between the scrapes" awk '/^scraping/ { exit !($2 + 0 < 2 || $5 + 0 >= 1) }' "$T/load.out"
check "the stalled clients were cut ($(grep '^stalled' "$T/load.out"))" grep -q '^stalled closed 40 of 40' "$T/load.out"
check "steady kept its pid" test "$(job_pid steady)" = "$steady"
after=$(restarts)
log "restarts of the flapping jobs: $before before the load, $after after"
check "the jobs flapped all along" test "$after" -gt "$((before + 100))"
check "vigild still serves" test "$(curl -sS -m 10 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/healthz")" = 200

stop_vigild
checks_passed
log "HTTP under load: 200 scrapes with 100 flapping jobs and 40 stalled clients"
