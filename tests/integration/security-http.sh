#!/bin/bash
# The HTTP listener against a browser and against what is already at its
# path (issue 34, finding 13).  DNS rebinding: a page of another site
# that a browser sends to vigild (its name now resolving to 127.0.0.1)
# carries that site's Host header; such requests are answered 421, on
# /metrics, the API (even with the token) and the dashboard, while
# addresses, localhost names and http_allowed_hosts are served (on TCP:
# no browser reaches a unix listener, which takes any Host).  A unix
# listener replaces a stale socket at its path, and refuses to start over
# a regular file or a socket some process listens on, which is left as it
# was.
. "$(dirname "$0")/lib.sh"

need_cmd curl curl
[ -x /usr/bin/python3 ] || skip_fixable "no /usr/bin/python3 (Debian package python3)"

# (1) Host headers, first without http_allowed_hosts.
http_token
cat >"$T/vigil.conf" <<EOF
http_listen = "127.0.0.1:0"
http_token_file = "$T/token"
EOF
job a 'command = "sleep 100000"'
start_vigild
http_port
URL=http://127.0.0.1:$PORT
# host HOST PATH [curl args]: the status of GET PATH with Host: HOST.
host() {
	local h=$1 p=$2
	shift 2
	curl -sS -m 10 -o "$T/body" -w '%{http_code}' -H "Host: $h" "$@" "$URL$p"
}
AUTH=(-H "Authorization: Bearer $TOKEN")
check "/metrics for evil.example is 421" test "$(host "evil.example:$PORT" /metrics)" = 421
check "the 421 says what is allowed" grep -q 'http_allowed_hosts' "$T/body"
check "the API for evil.example is 421, token or not" \
	test "$(host "evil.example:$PORT" /api/v1/jobs "${AUTH[@]}")" = 421
check "a POST for evil.example is 421 and changes nothing" \
	test "$(host "evil.example:$PORT" /api/v1/jobs/a/stop -X POST "${AUTH[@]}")" = 421
check "a is still running" is_state a RUNNING
check "the dashboard for evil.example is 421" test "$(host evil.example /)" = 421
check "/healthz for localhost.evil.example is 421" \
	test "$(host "localhost.evil.example:$PORT" /healthz)" = 421
check "/metrics for 127.0.0.1:PORT is 200" test "$(host "127.0.0.1:$PORT" /metrics)" = 200
check "/metrics for localhost:PORT is 200" test "$(host "localhost:$PORT" /metrics)" = 200
check "/metrics for [::1]:PORT is 200" test "$(host "[::1]:$PORT" /metrics)" = 200
check "/metrics for dash.localhost is 200" test "$(host dash.localhost /metrics)" = 200
check "vigil.example.org is not allowed yet" test "$(host vigil.example.org /metrics)" = 421
stop_vigild
# (3) What is at a unix listener's path.  vigild alone (no jobs), for at
# most 20 s: it either refuses at once, or runs (which fails the check).
mkdir -p "$T/nojobs"
printf 'http_listen = "unix:%s/http.sock"\n' "$T" >"$T/unix.conf"
# refused: vigild exited by itself, not 0.
refused() { [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]; }
vigild_unix() {
	timeout "$(slow_s 20)" "$VIGILD" -c "$T/unix.conf" -j "$T/nojobs" \
		--runtime-dir "$T/run2" --state-dir "$T/state2" \
		--log-dir "$T/log2" >"$T/unix.out" 2>&1
}
# A regular file.
echo "precious" >"$T/http.sock"
rc=0
vigild_unix || rc=$?
log "over a file: exit $rc: $(tail -n 1 "$T/unix.out")"
check "vigild refuses to start over a regular file" refused
check "it says why" grep -q "http_listen unix:$T/http.sock: a file that is not a socket is there" "$T/unix.out"
check "the file is left as it was" test "$(cat "$T/http.sock")" = precious
rm -f "$T/http.sock"

# A socket that a process listens on.
/usr/bin/python3 - "$T/http.sock" >"$T/listener.out" 2>&1 <<'EOF' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(8)
print("listening", flush=True)
time.sleep(120)
EOF
LISTENER=$!
track "$LISTENER"
retry 20 grep -q listening "$T/listener.out" || fail "the listener did not start"
rc=0
vigild_unix || rc=$?
log "over a live socket: exit $rc: $(tail -n 1 "$T/unix.out")"
check "vigild refuses to start over a live socket" refused
check "it says why" grep -q "http_listen unix:$T/http.sock: a process listens on it" "$T/unix.out"
connects() {
	/usr/bin/python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])' "$T/http.sock"
}
check "the listener still gets its clients" connects
kill "$LISTENER" 2>/dev/null || true
wait "$LISTENER" 2>/dev/null || true
rm -f "$T/http.sock"

# A stale socket (its process gone): replaced.
/usr/bin/python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])' "$T/http.sock"
test -S "$T/http.sock" || fail "no stale socket made"
"$VIGILD" -c "$T/unix.conf" -j "$T/nojobs" --runtime-dir "$T/run2" \
	--state-dir "$T/state2" --log-dir "$T/log2" >"$T/unix.out" 2>&1 &
P=$!
track "$P"
served() {
	local code
	code=$(curl -sS -m 5 --unix-socket "$T/http.sock" -o /dev/null \
		-w '%{http_code}' http://localhost/metrics 2>/dev/null) || true
	[ "$code" = 200 ]
}
check "vigild replaces a stale socket and serves on it" retry 20 served
check "it runs" alive "$P"
# No browser reaches a unix listener: any Host is served there.
check "a unix listener serves any Host" test "$(curl -sS -m 10 --unix-socket "$T/http.sock" -o /dev/null -w '%{http_code}' http://vigil/metrics)" = 200
kill -TERM "$P" 2>/dev/null || true
rc=0
wait "$P" || rc=$?
check "it exits 0" test "$rc" -eq 0

# (1) again, with http_allowed_hosts (last: main had no such option).
printf 'http_allowed_hosts = {"vigil.example.org", "box"}\n' >>"$T/vigil.conf"
start_vigild
http_port
URL=http://127.0.0.1:$PORT
check "an allowed name is 200" test "$(host vigil.example.org /metrics)" = 200
check "evil.example still 421" test "$(host evil.example /metrics)" = 421
check "the API for an allowed name is 200" \
	test "$(host "VIGIL.example.org:$PORT" /api/v1/jobs/a "${AUTH[@]}")" = 200
check "the dashboard for an allowed name is 200" test "$(host box /)" = 200
check "a request without Host (HTTP/1.0) is 200" \
	test "$(curl -sS -m 10 -0 -o /dev/null -w '%{http_code}' -H 'Host:' "$URL/metrics")" = 200
stop_vigild

# (2) A bad http_allowed_hosts: file, line and option named.
cat >"$T/bad.conf" <<EOF
http_listen = "127.0.0.1:0"
http_allowed_hosts = {"ok.example", "bad.example:80"}
EOF
rc=0
"$VIGILD" -t -c "$T/bad.conf" -j "$JOBS" >"$T/bad.out" 2>&1 || rc=$?
log "vigild -t: $(cat "$T/bad.out")"
check "a host with a port is refused" test "$rc" -ne 0
check "the error names file, line and option" \
	grep -q "bad.conf:2: .*http_allowed_hosts.*bad.example:80" "$T/bad.out"

checks_passed
log "Host headers checked; a unix listener replaces only a stale socket"
