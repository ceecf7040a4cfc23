#!/bin/bash
# Readers that never read (issue 23): each asks for a big reply (the log
# of a job that wrote 4 MB of control characters, some 24 MB as JSON)
# and reads nothing, so that vigild holds what the socket does not take.
# Past 64 MiB held, a request is answered 503 with Retry-After at once,
# vigild's memory stays bounded, the control socket answers; once those
# readers go, the same request is answered 200 again.
. "$(dirname "$0")/lib.sh"

# 24 MB of JSON per reply: not under valgrind (VIGILD_WRAPPER), where it
# takes minutes, nor again in distcheck (VIGIL_SKIP_SLOW).
[ -z "${VIGILD_WRAPPER:-}" ] || skip "too slow under valgrind"
[ -z "${VIGIL_SKIP_SLOW:-}" ] || skip "VIGIL_SKIP_SLOW is set"
[ -z "${VIGIL_SKIP_TIMING:-}" ] || skip "VIGIL_SKIP_TIMING is set (a timing, load or container test: the gcc stage runs it)"
need_cmd curl curl

http_token
cat >"$T/vigil.conf" <<EOF
http_listen = "127.0.0.1:0"
http_token_file = "$T/token"
EOF
cat >"$T/junk.sh" <<'EOF'
#!/bin/sh
# 4 MB of \001 in lines of 1000: each byte is 6 in JSON (\u0001).
head -c 4000000 /dev/zero | tr '\000' '\001' | fold -w 1000
echo done
exec sleep 100000
EOF
chmod 755 "$T/junk.sh"
job junk "command = \"$T/junk.sh\"" 'log_max_size = "64M"'
start_vigild
http_port
URL=http://127.0.0.1:$PORT
written() { grep -aq 'done$' "$LOGS/junk.log" 2>/dev/null; }
retry 30 written || fail "the job did not write its log: $(ls -l "$LOGS")"
size=$(curl -sS -m 30 -H "Authorization: Bearer $TOKEN" "$URL/api/v1/jobs/junk/log?n=100000" | wc -c)
log "the reply is $size bytes"
[ "$size" -gt $((16 * 1024 * 1024)) ] || fail "the reply is too small to test with"
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$VIGILD_PID/status"; }
before=$(rss)

/usr/bin/python3 - "$PORT" "$TOKEN" "$VIGIL_TEST_SLOW" >"$T/held.out" 2>&1 <<'EOF' &
import socket, sys, time, urllib.request, urllib.error
port, token, slow = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
path = "/api/v1/jobs/junk/log?n=100000"
held, status, retry = [], None, None
# Open readers that never read until vigild refuses a request (at most 20).
for i in range(20):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", port))
    s.sendall(("GET %s HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer %s\r\n\r\n"
               % (path, token)).encode())
    held.append(s)
    time.sleep(0.3)
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path),
                                 headers={"Authorization": "Bearer " + token})
    try:
        # 24 MB of JSON, made before its first byte is sent: a deadline,
        # not a figure (at a load of 14, 10 s per VIGIL_TEST_SLOW ran out
        # before the status line).
        urllib.request.urlopen(req, timeout=40 * slow).read()
    except urllib.error.HTTPError as e:
        status, retry = e.code, e.headers.get("Retry-After")
        break
print("held %d status %s retry-after %s" % (len(held), status, retry), flush=True)
# Hold them while the shell samples vigild's memory.
print("rss-sample", flush=True)
time.sleep(2)
for s in held:
    s.close()
print("closed", flush=True)
EOF
P=$!
track "$P"
sampled() { grep -q '^rss-sample' "$T/held.out"; }
retry 180 sampled || fail "the readers did not settle: $(cat "$T/held.out")"
during=$(rss)
check "the control socket answers meanwhile" ctl ping
wait "$P" || fail "the reader script failed: $(cat "$T/held.out")"
cat "$T/held.out"

check "a request past the cap is 503 with Retry-After" grep -q '^held [0-9]* status 503 retry-after 1$' "$T/held.out"
# (ASan keeps what is freed in quarantine: its RSS says nothing of this.)
if grep -q __asan_init "$VIGILD"; then
	log "vigild is built with ASan: memory ${before} kB -> ${during} kB, not checked"
else
	check "vigild's memory stayed bounded (${before} kB -> ${during} kB)" test "$during" -lt $((before + 100 * 1024))
fi
again() { [ "$(curl -sS -m 30 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$URL/api/v1/jobs/junk/log?n=100000")" = 200 ]; }
check "once they go, the reply is 200 again" retry 20 again
check "the job still runs" is_state junk RUNNING

stop_vigild
checks_passed
log "readers that never read: held replies capped at 64 MiB, 503 past it"
