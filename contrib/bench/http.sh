#!/bin/bash
# The HTTP server's figures (issue 23), on one vigild with http_listen:
#  - a scrape of /metrics with N services running (default 1000), over
#    HTTP (curl, a new connection each) beside `vigilctl metrics`;
#  - enqueue over HTTP keep-alive from 1 and 8 clients (python3's
#    http.client) beside `vigilctl enqueue` run once per message from 1
#    and 8 shells, M messages each way (default 2000);
#  - vigild's wakeups (voluntary context switches) in an idle window of
#    IDLE seconds (default 10) with the HTTP server on and no client.
#
# usage: contrib/bench/http.sh [N] [M] [IDLE]
# VIGILD and VIGILCTL name the binaries (default: the build in the tree).
# Prints markdown tables.
set -eu

N=${1:-1000}
M=${2:-2000}
IDLE=${3:-10}
REPS=10
here=$(cd "$(dirname "$0")" && pwd)
: "${VIGILD:=$here/../../supervisord/vigild}"
: "${VIGILCTL:=$here/../../supervisord/vigilctl}"
T=$(mktemp -d "${TMPDIR:-/tmp}/vigil-bench.XXXXXX")
PID=
cleanup() {
	if [ -n "$PID" ]; then
		kill -TERM "$PID" 2>/dev/null || true
		wait "$PID" 2>/dev/null || true
	fi
	rm -rf "$T"
}
trap cleanup EXIT

now_ns() { date +%s%N; }
stats() {
	printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END {
		printf "%d (%d-%d)", v[int((NR + 1) / 2)], v[1], v[NR] }'
}
ctl() { "$VIGILCTL" -s "$T/run/vigild.sock" "$@"; }
us() {
	local t0
	t0=$(now_ns)
	"$@" >/dev/null
	echo $((($(now_ns) - t0) / 1000))
}
switches() { awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$PID/status"; }

mkdir -p "$T/jobs"
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$T/token"
chmod 600 "$T/token"
printf 'http_listen = "127.0.0.1:0"\nhttp_token_file = "%s"\n' "$T/token" >"$T/vigil.conf"
for i in $(seq 1 "$N"); do
	printf 'command = "sleep 100000"\n' >"$T/jobs/j$i.conf"
done
# A queue whose messages wait (it does not start), so that only the
# enqueue is measured.
printf 'kind = "queue"\ncommand = "cat"\nautostart = false\n' >"$T/jobs/q.conf"
"$VIGILD" -c "$T/vigil.conf" -j "$T/jobs" --runtime-dir "$T/run" \
	--state-dir "$T/state" --log-dir "$T/log" >>"$T/vigild.log" 2>&1 &
PID=$!
for _ in $(seq 1 1000); do
	ctl ping >/dev/null 2>&1 && break
	sleep 0.01
done
PORT=$(sed -n 's/.*http: listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$T/vigild.log")
URL=http://127.0.0.1:$PORT
for _ in $(seq 1 3000); do
	[ "$(ctl status 2>/dev/null | grep -c RUNNING)" -ge "$N" ] && break
	sleep 0.01
done

echo "| $N services running | median (min-max), us | bytes |"
echo "|---|---|---|"
h='' c=''
for _ in $(seq 1 "$REPS"); do
	h="$h $(us curl -sf "$URL/metrics")"
	c="$c $(us ctl metrics)"
done
# shellcheck disable=SC2086
echo "| GET /metrics (curl) | $(stats $h) | $(curl -sf "$URL/metrics" | wc -c) |"
# shellcheck disable=SC2086
echo "| vigilctl metrics | $(stats $c) | $(ctl metrics | wc -c) |"
echo

enqueue_http() {
	/usr/bin/python3 - "$PORT" "$(cat "$T/token")" "$1" "$2" <<'EOF'
import http.client, sys, threading, time
port, token, clients, total = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def work(n):
    c = http.client.HTTPConnection("127.0.0.1", port)
    for i in range(n):
        c.request("POST", "/api/v1/queues/q/messages", body=b"payload %d" % i,
                  headers={"Authorization": "Bearer " + token})
        r = c.getresponse()
        r.read()
        assert r.status == 201, r.status
t0 = time.monotonic()
ts = [threading.Thread(target=work, args=(total // clients,)) for _ in range(clients)]
for t in ts: t.start()
for t in ts: t.join()
print("%.0f" % (total / (time.monotonic() - t0)))
EOF
}
enqueue_ctl() {
	local clients=$1 total=$2 t0
	t0=$(now_ns)
	for _ in $(seq 1 "$clients"); do
		(for i in $(seq 1 $((total / clients))); do
			ctl enqueue q "payload $i" >/dev/null
		done) &
	done
	wait
	echo $((total * 1000000000 / ($(now_ns) - t0)))
}
echo "| enqueue, $M messages | messages/s |"
echo "|---|---|"
echo "| HTTP keep-alive, 1 client | $(enqueue_http 1 "$M") |"
echo "| HTTP keep-alive, 8 clients | $(enqueue_http 8 "$M") |"
echo "| vigilctl enqueue, 1 shell | $(enqueue_ctl 1 "$M") |"
echo "| vigilctl enqueue, 8 shells | $(enqueue_ctl 8 "$M") |"
echo

a=$(switches)
sleep "$IDLE"
b=$(switches)
echo "| idle ${IDLE}s, HTTP on, no client | wakeups |"
echo "|---|---|"
echo "| vigild | $((b - a)) |"
