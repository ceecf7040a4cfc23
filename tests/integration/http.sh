#!/bin/bash
# The HTTP server (issue 23): every endpoint of the API and every error
# code, against a real vigild on a TCP port of its own choosing (port 0,
# read back from its log) and on a unix socket; answers checked against
# vigilctl and against what really happened (pid changed, message worked,
# job stopped).
. "$(dirname "$0")/lib.sh"

need_cmd curl curl

http_token
cat >"$T/vigil.conf" <<EOF
http_listen = "127.0.0.1:0"
http_token_file = "$T/token"
EOF

job web 'command = "sleep 100000"'
job other 'command = "sleep 100000"'
job q 'kind = "queue"' "command = \"sh -c 'cat >>$T/worked'\""
job held 'kind = "queue"' 'command = "cat"' 'autostart = false'
start_vigild

http_port
URL=http://127.0.0.1:$PORT

# req METHOD PATH [curl args]: the body in $T/body, the status printed.
req() {
	local m=$1 p=$2
	shift 2
	curl -sS -m 20 -o "$T/body" -w '%{http_code}' -X "$m" "$@" "$URL$p"
}
# auth METHOD PATH [curl args]: req with the bearer token.
auth() {
	local m=$1 p=$2
	shift 2
	req "$m" "$p" -H "Authorization: Bearer $TOKEN" "$@"
}
body() { cat "$T/body"; }
jbody() { jq -r "$1" "$T/body"; }

wait_state web RUNNING
wait_state other RUNNING

# Open paths answer anyone; the rest want the token.
check "healthz 200" test "$(req GET /healthz)" = 200
check "healthz says ok" test "$(body)" = ok
check "metrics without a token 200" test "$(req GET /metrics)" = 200
check "metrics are OpenMetrics" grep -qx '# EOF' "$T/body"
check "jobs without a token 401" test "$(req GET /api/v1/jobs)" = 401
check "401 names the scheme" sh -c "curl -sS -i '$URL/api/v1/jobs' | grep -qi '^WWW-Authenticate: Bearer'"
wrong=$(printf '%s' "$TOKEN" | tr '0-9a-f' 'a-f0-9')
check "a wrong token of the same length 401" test "$(req GET /api/v1/jobs -H "Authorization: Bearer $wrong")" = 401
check "a token as basic auth 401" test "$(req GET /api/v1/jobs -u "x:$TOKEN")" = 401
check "the page itself is static: 200" test "$(req GET /)" = 200
check "the page is HTML" grep -qi '<!doctype html>' "$T/body"
check "stop without a token 401" test "$(req POST /api/v1/jobs/web/stop)" = 401
check "web still runs after the refused stop" is_state web RUNNING

# Status: the JSON of vigilctl --json status.
check "jobs 200" test "$(auth GET /api/v1/jobs)" = 200
ctl --json status >"$T/ctl.json"
check "the same jobs as vigilctl" test "$(jbody '[.jobs[] | .name + " " + .state + " " + (.pid|tostring)] | join(",")')" = \
	"$(jq -r '[.jobs[] | .name + " " + .state + " " + (.pid|tostring)] | join(",")' "$T/ctl.json")"
check "one job 200" test "$(auth GET /api/v1/jobs/web)" = 200
check "one job: web" test "$(jbody '.jobs | length') $(jbody '.jobs[0].name')" = "1 web"
check "no such job 404" test "$(auth GET /api/v1/jobs/nosuch)" = 404
check "404 says why" grep -q 'nosuch: no such job' "$T/body"
check "no such path 404" test "$(auth GET /api/v1/nothing)" = 404
check "wrong method 405" test "$(auth DELETE /api/v1/jobs/web)" = 405
check "405 lists the methods" sh -c "curl -sS -i -X PUT -H 'Authorization: Bearer $TOKEN' '$URL/api/v1/jobs' | grep -qi '^Allow: GET, POST'"

# Control: restart changes the pid; stop stops; start starts again.
pid=$(job_pid web)
check "restart 200" test "$(auth POST /api/v1/jobs/web/restart)" = 200
check "restart says started" test "$(jbody '.exit_code') $(jbody '.output[0]')" = "0 web: started"
check "web has a new pid" test "$(job_pid web)" != "$pid"
check "the old pid is gone" retry 20 dead "$pid"
check "the restart is logged with its peer" grep -q "http 127.0.0.1:[0-9]*: restart" "$VLOG"
pid=$(job_pid web)
check "stop 200" test "$(auth POST /api/v1/jobs/web/stop)" = 200
check "web is stopped when stop answers" is_state web STOPPED
check "its process is gone" dead "$pid"
check "jobs with one stopped: still 200" test "$(auth GET /api/v1/jobs)" = 200
check "web shows STOPPED" test "$(jbody '.jobs[] | select(.name == "web") | .state')" = STOPPED
check "signal to a stopped job 409" test "$(auth POST '/api/v1/jobs/web/signal?sig=HUP')" = 409
check "409 says why" test "$(jbody '.errors[0]')" = "web: not running"
check "start 200" test "$(auth POST /api/v1/jobs/web/start)" = 200
check "web runs when start answers" is_state web RUNNING
check "signal without sig 400" test "$(auth POST /api/v1/jobs/web/signal)" = 400
check "400 names the parameter" grep -q 'missing parameter: sig' "$T/body"
check "signal with a bad name 400" test "$(auth POST '/api/v1/jobs/web/signal?sig=NOPE')" = 400
check "signal USR1 200" test "$(auth POST '/api/v1/jobs/web/signal?sig=USR1')" = 200
check "an unknown parameter 400" test "$(auth POST '/api/v1/jobs/web/start?force=1')" = 400
check "400 names it" grep -q 'unknown parameter: force' "$T/body"
check "a repeated parameter 400" test "$(auth GET '/api/v1/jobs/web/history?n=1&n=2&n=3&n=4&n=5&n=6&n=7')" = 400
check "400 says repeated" grep -q 'repeated parameter: n' "$T/body"
check "start no such job 404" test "$(auth POST /api/v1/jobs/nosuch/start)" = 404
check "a name that looks like an option is a name" test "$(auth POST /api/v1/jobs/--no-wait/start)" = 404

# History and log.
check "history 200" test "$(auth GET '/api/v1/jobs/web/history?n=2')" = 200
check "history: 2 runs of web" test "$(jbody '[.runs[] | select(.job == "web")] | length')" = 2
check "history n=abc 400" test "$(auth GET '/api/v1/jobs/web/history?n=abc')" = 400
check "log 200" test "$(auth GET '/api/v1/jobs/web/log?n=3')" = 200
check "log: 3 lines" test "$(jbody '.lines | length')" = 3
check "log of no such job 404" test "$(auth GET /api/v1/jobs/nosuch/log)" = 404

# The queue: 201 with the id once durable; the message is worked.
check "enqueue 201" test "$(auth POST /api/v1/queues/q/messages --data-binary 'hello over http')" = 201
id=$(jbody .id)
check "an id" test "$id" -gt 0
has_worked() { grep -qx 'hello over http' "$T/worked" 2>/dev/null; }
check "the message was worked" retry 20 has_worked
check "enqueue delayed 201" test "$(auth POST '/api/v1/queues/held/messages?delay=1h&priority=5&unique=k1' --data-binary x)" = 201
first=$(jbody .id)
check "the same unique key 409" test "$(auth POST '/api/v1/queues/held/messages?unique=k1' --data-binary y)" = 409
check "409 gives the first id" test "$(jbody .result.id)" = "$first"
check "the row is in state.db" test "$(sqlite3 "$STATE/state.db" "select count(*) from queue where id = $first")" = 1
check "a bad delay 400" test "$(auth POST '/api/v1/queues/held/messages?delay=soon' --data-binary x)" = 400
check "enqueue to no such queue 404" test "$(auth POST /api/v1/queues/nosuch/messages --data-binary x)" = 404
check "enqueue to a service 409" test "$(auth POST /api/v1/queues/web/messages --data-binary x)" = 409
head -c $((1024 * 1024 + 1)) /dev/zero >"$T/big"
check "a body over 1 MiB 413" test "$(auth POST /api/v1/queues/q/messages --data-binary @"$T/big")" = 413
check "a chunked body over 1 MiB 413" test "$(auth POST /api/v1/queues/q/messages -H 'Transfer-Encoding: chunked' --data-binary @"$T/big")" = 413
check "queue 200" test "$(auth GET /api/v1/queues/held)" = 200
check "held: 1 delayed" test "$(jbody '.queues[0].delayed')" = 1
check "dead 200" test "$(auth GET '/api/v1/queues/held/dead?n=5')" = 200
check "dead: none" test "$(jbody '.total')" = 0
check "every queue 200" test "$(auth GET /api/v1/queues)" = 200
check "every queue: q and held" test "$(jbody '[.queues[].job] | sort | join(",")')" = held,q
check "queue of no such job 404" test "$(auth GET /api/v1/queues/nosuch)" = 404

# Garbage is answered 400, or the connection closed; nothing else is
# touched.
# raw BYTES: send BYTES (with Python's escapes) on a new connection; print
# the answer's status code, or "closed" when vigild closed it unanswered.
raw() {
	/usr/bin/python3 - "$PORT" "$1" <<'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
try:
    s.sendall(sys.argv[2].encode().decode("unicode_escape").encode("latin-1"))
except OSError:
    pass
data = b""
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
except OSError:
    pass
print(data.split(b" ", 2)[1].decode() if data.startswith(b"HTTP/") else "closed")
EOF
}
check "a bad Content-Length 400" test "$(raw 'POST /api/v1/jobs HTTP/1.1\r\nHost: localhost\r\nContent-Length: zz\r\n\r\n')" = 400
check "a garbage request line: closed" test "$(raw 'GARBAGE\r\n\r\n')" = closed
check "binary garbage: closed" test "$(raw '\x01\x02\xff\xfe\r\n\r\n')" = closed
long=$(head -c 70000 /dev/zero | tr '\0' a)
check "a header over 64 KiB: refused" test "$(raw "GET /healthz HTTP/1.1\r\nX: $long\r\n\r\n")" != 200
check "vigild still answers" test "$(auth GET /healthz)" = 200
check "web still runs" is_state web RUNNING

# A waiting request whose client hangs up: the stop still happens.
job slow "command = \"sh -c 'trap \\\"\\\" TERM; while :; do sleep 0.1; done'\"" 'stop_timeout = "2s"'
ctl reload >/dev/null || fail "reload"
wait_state slow RUNNING
spid=$(job_pid slow)
curl -sS -m 0.5 -o /dev/null -X POST -H "Authorization: Bearer $TOKEN" "$URL/api/v1/jobs/slow/stop" 2>/dev/null || true
check "the stop goes on without its client" retry 50 dead "$spid"
check "slow is stopped" retry 20 is_state slow STOPPED
check "vigild answers after that" test "$(auth GET /api/v1/jobs/slow)" = 200

stop_vigild

# Without a token file, a TCP listener serves only /metrics and /healthz.
cat >"$T/vigil.conf" <<EOF
http_listen = "127.0.0.1:0"
EOF
start_vigild
http_port
URL=http://127.0.0.1:$PORT
check "no token file: metrics 200" test "$(req GET /metrics)" = 200
check "no token file: jobs 401" test "$(req GET /api/v1/jobs)" = 401
check "no token file: any token 401" test "$(auth GET /api/v1/jobs)" = 401
check "no token file: the 401 says so" grep -q 'no http_token_file' "$T/body"
check "no token file: the page 401" test "$(req GET /)" = 401
stop_vigild

# A unix listener: the socket's permissions and the peer's rights decide.
cat >"$T/vigil.conf" <<EOF
http_listen = "unix:$T/http.sock"
socket_mode = 0666
EOF
start_vigild
ureq() {
	local m=$1 p=$2
	shift 2
	"$@" curl -sS -m 20 -o "$T/body" -w '%{http_code}' -X "$m" --unix-socket "$T/http.sock" "http://vigil$p"
}
chmod 755 "$T"
check "unix: root reads" test "$(ureq GET /api/v1/jobs/web)" = 200
check "unix: root restarts" test "$(ureq POST /api/v1/jobs/other/restart)" = 200
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	check "unix: nobody reads" test "$(ureq GET /api/v1/jobs/web as_nobody)" = 200
	check "unix: nobody may not stop: 403" test "$(ureq POST /api/v1/jobs/web/stop as_nobody)" = 403
	check "unix: web still runs" is_state web RUNNING
fi
check "unix: the socket is mode 0666" test "$(stat -c %a "$T/http.sock")" = 666
stop_vigild
check "unix: the socket is removed at exit" test ! -e "$T/http.sock"

# Bad settings: a clear error naming the file, line and option.
printf 'http_listen = "nowhere"\n' >"$T/bad.conf"
refuses_check() { ! "$VIGILD" -t -c "$T/bad.conf" -j "$JOBS" >"$T/out" 2>&1; }
check "vigild -t refuses http_listen nowhere" refuses_check
check "a bad address is named" grep -q "bad.conf:1: http_listen: \"nowhere\": not an address" "$T/out"
chmod 644 "$T/token"
printf 'http_listen = "127.0.0.1:0"\nhttp_token_file = "%s"\n' "$T/token" >"$T/vigil.conf"
refuses_start() {
	! timeout "$(slow_s 20)" "$VIGILD" -c "$T/vigil.conf" -j "$JOBS" --runtime-dir "$RUN" \
		--state-dir "$STATE" --log-dir "$LOGS" >"$T/out" 2>&1
}
check "vigild refuses to start" refuses_start
check "a token others may read is refused" grep -q "other users may read it" "$T/out"

checks_passed
log "HTTP API: every endpoint and error code; rights on TCP and unix"
