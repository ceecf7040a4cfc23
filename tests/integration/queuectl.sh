#!/bin/bash
# The queue verbs of vigilctl, with queue jobs that never run a message
# (autostart = false): enqueue prints increasing ids and counts available
# and delayed messages apart; --unique refuses a duplicate (exit 1, the
# first id printed); payloads from stdin are binary-safe up to 1 MiB, and
# one byte more is refused by vigilctl and by vigild without harm to
# either; unknown jobs exit 4, other kinds 1, bad ids 2, unknown ids 1;
# enqueue --direct writes state.db while vigild is down (and kicks it when
# it is up); dead messages (made in state.db) are listed, retried,
# deleted and purged; every --json output parses.
# vigilctl is the subject: LeakSanitizer checks it too (lib.sh).
VIGIL_CTL_LEAKS=1
. "$(dirname "$0")/lib.sh"
python3 -c 'import json, sqlite3' 2>/dev/null ||
	skip_fixable "python3 with its sqlite3 module not installed (Debian package python3)"

DB=$STATE/state.db

# rc WANT ARGS...: vigilctl ARGS must exit WANT; output in $T/out, $T/err.
rc() {
	local want=$1 got=0
	shift
	ctl "$@" >"$T/out" 2>"$T/err" || got=$?
	[ "$got" -eq "$want" ] ||
		fail "vigilctl $*: exit $got, not $want: $(cat "$T/out" "$T/err")"
}

# jval EXPR: EXPR (Python, the document is d) of the JSON on stdin.
jval() {
	python3 -c 'import json, sys
d = json.load(sys.stdin)
v = eval(sys.argv[1])
print(v if isinstance(v, str) else json.dumps(v))' "$1"
}

# sql STATEMENT: run it on state.db (committed), print rows as a|b|c.
sql() {
	python3 - "$DB" "$1" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for row in db.execute(sys.argv[2]):
    print("|".join("" if v is None else str(v) for v in row))
db.commit()
db.close()
EOF
}

# counts JOB: "available delayed running dead" from queue --json.
counts() {
	ctl --json queue "$1" | jval \
		'" ".join(str(d["queues"][0][k]) for k in ("available", "delayed", "running", "dead"))'
}

counts_are() {
	local got
	got=$(counts "$1")
	[ "$got" = "$2" ] || fail "$1: counts $got, want $2"
}

job q 'kind = "queue"' 'command = "cat"' 'autostart = false'
job other 'kind = "queue"' 'command = "cat"' 'autostart = false'
job svc 'command = "sleep 1000"'
start_vigild

# Increasing ids, printed once committed; a delayed message is counted
# apart from the available ones.
a=$(ctl enqueue q one) || fail "enqueue q one"
b=$(ctl enqueue q "two words") || fail "enqueue q two"
c=$(ctl enqueue q three) || fail "enqueue q three"
case "$a$b$c" in *[!0-9]*) fail "ids are not numbers: $a $b $c" ;; esac
[ "$a" -lt "$b" ] && [ "$b" -lt "$c" ] || fail "ids not increasing: $a $b $c"
later=$(ctl enqueue --delay 1h q later) || fail "enqueue --delay"
[ "$later" -gt "$c" ] || fail "id $later after $c"
counts_are q "3 1 0 0"
rc 0 queue q
awk 'NR == 2 { exit !($1 == "q" && $2 == 3 && $3 == 1 && $4 == 0 && $5 == 0) }' \
	"$T/out" || fail "queue table: $(cat "$T/out")"
rc 0 queue
grep -q '^other ' "$T/out" && grep -q '^q ' "$T/out" || fail "queue: $(cat "$T/out")"
grep -q '^svc ' "$T/out" && fail "queue lists a service: $(cat "$T/out")"
rc 0 --json queue
[ "$(jval 'sorted(q["job"] for q in d["queues"])' <"$T/out")" = '["other", "q"]' ] ||
	fail "queue --json: $(cat "$T/out")"
rc 0 --json enqueue --priority -3 q neg
neg=$(jval 'd["id"]' <"$T/out")
[ "$(jval '"duplicate" in d' <"$T/out")" = false ] || fail "enqueue --json: $(cat "$T/out")"
[ "$(sql "SELECT priority, CAST(payload AS TEXT) FROM queue WHERE id = $neg")" = "-3|neg" ] ||
	fail "message $neg: $(sql "SELECT * FROM queue WHERE id = $neg")"

# --unique: a second message with the key is refused, the first id printed.
u=$(ctl enqueue --unique k1 q first) || fail "enqueue --unique"
rc 1 enqueue --unique k1 q second
[ "$(cat "$T/out")" = "$u" ] || fail "duplicate printed '$(cat "$T/out")', not $u"
grep -q "q: a message with key k1 is already queued: id $u" "$T/err" ||
	fail "duplicate message: $(cat "$T/err")"
rc 1 --json enqueue -u k1 q third
[ "$(jval '[d["id"], d["duplicate"]]' <"$T/out")" = "[$u, true]" ] ||
	fail "duplicate --json: $(cat "$T/out")"
rc 0 enqueue --unique=k1 other first
counts_are q "5 1 0 0"

# Payloads from stdin: binary, empty, exactly 1 MiB; one byte more is
# refused by vigilctl, and by vigild from a client that sends it anyway.
bin=$(printf 'a\0b' | ctl enqueue q -) || fail "enqueue from stdin"
[ "$(sql "SELECT hex(payload) FROM queue WHERE id = $bin")" = 610062 ] ||
	fail "binary payload: $(sql "SELECT hex(payload) FROM queue WHERE id = $bin")"
empty=$(ctl enqueue q - </dev/null) || fail "empty stdin"
[ "$(sql "SELECT length(payload) FROM queue WHERE id = $empty")" = 0 ] ||
	fail "empty payload"
noop=$(ctl enqueue q) || fail "enqueue without a payload"
[ "$(sql "SELECT length(payload) FROM queue WHERE id = $noop")" = 0 ] ||
	fail "no payload"
big=$(head -c 1048576 /dev/zero | tr '\0' x | ctl enqueue q -) ||
	fail "a 1 MiB payload was refused"
[ "$(sql "SELECT length(payload) FROM queue WHERE id = $big")" = 1048576 ] ||
	fail "1 MiB payload"
head -c 1048577 /dev/zero >"$T/toobig"
rc 1 enqueue q - <"$T/toobig"
grep -qx 'vigilctl: payload larger than 1 MiB (1048576 bytes)' "$T/err" ||
	fail "too big: $(cat "$T/err")"
python3 - "$SOCK" >"$T/raw" <<'EOF' || fail "raw client: $(cat "$T/raw")"
import socket, struct, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
chunk = b"x" * (256 * 1024)
try:
    for _ in range(5):
        s.sendall(struct.pack("=HHI", 1, 5, len(chunk)) + chunk)
    cmd = struct.pack("=I", 0) + b"enqueue\0q\0-\0"
    s.sendall(struct.pack("=HHI", 1, 1, len(cmd)) + cmd)
except OSError:
    pass
# vigild closes with our last frame unread: the reply, then a reset.
reply = b""
while True:
    try:
        d = s.recv(65536)
    except ConnectionResetError:
        break
    if not d:
        break
    reply += d
text, code = b"", None
while len(reply) >= 8:
    v, t, n = struct.unpack("=HHI", reply[:8])
    body, reply = reply[8:8 + n], reply[8 + n:]
    if t == 3:
        text += body
    if t == 4:
        code = struct.unpack("=i", body)[0]
print(text.decode().strip(), code)
EOF
[ "$(cat "$T/raw")" = "vigild: payload larger than 1 MiB (1048576 bytes) 1" ] ||
	fail "vigild's limit: $(cat "$T/raw")"
rc 0 ping
counts_are q "9 1 0 0"

# Jobs, ids and options.
rc 4 enqueue nope x
grep -q 'nope: no such job' "$T/err" || fail "unknown job: $(cat "$T/err")"
rc 1 enqueue svc x
grep -q 'svc is not a queue job' "$T/err" || fail "service: $(cat "$T/err")"
rc 4 queue nope
rc 1 queue q svc
rc 4 purge nope
rc 1 purge svc
rc 1 kick svc
rc 0 kick q
# same_refusal OPTION...: vigild and enqueue --direct both refuse it, exit
# 2, in the same words (enqueue_check).
same_refusal() {
	local got=0
	rc 2 enqueue "$@" q x
	"$VIGILCTL" --state-dir "$STATE" enqueue --direct "$@" q x \
		2>"$T/derr" || got=$?
	[ "$got" = 2 ] || fail "enqueue --direct $*: exit $got"
	[ "$(sed 's/^vigilctl: //' "$T/derr")" = "$(cat "$T/err")" ] ||
		fail "enqueue $*: vigild: $(cat "$T/err"), --direct: $(cat "$T/derr")"
}
same_refusal --delay soon
same_refusal --delay 106751991d
same_refusal --priority high
same_refusal -p 2147483648
same_refusal --unique ''
rc 2 enqueue q x y
rc 2 queue --dead
rc 2 queue --dead q other
rc 2 queue -n 5 q
for bad in 0 -1 abc 1x +1 '' 99999999999999999999999; do
	rc 2 retry -- "$bad"
	rc 2 delete -- "$bad"
done
rc 1 retry 999999
grep -q '999999: no such message' "$T/err" || fail "retry 999999: $(cat "$T/err")"
rc 1 delete "$noop" 999999
grep -q '999999: no such message' "$T/err" || fail "delete 999999: $(cat "$T/err")"
[ "$(sql "SELECT count(*) FROM queue WHERE id = $noop")" = 0 ] ||
	fail "delete with an unknown id did not delete $noop"
rc 0 --json purge other
[ "$(jval 'd["removed"]' <"$T/out")" = 1 ] || fail "purge other: $(cat "$T/out")"
counts_are other "0 0 0 0"

# enqueue --direct: into state.db while vigild is down; seen once it is up.
stop_vigild
rc 69 queue q
"$VIGILCTL" -s "$SOCK" --state-dir "$STATE" enqueue --direct q direct >"$T/out" ||
	fail "enqueue --direct with vigild down"
direct=$(cat "$T/out")
[ "$direct" -gt "$big" ] || fail "direct id '$direct'"
[ "$(sql "SELECT job, CAST(payload AS TEXT) FROM queue WHERE id = $direct")" = "q|direct" ] ||
	fail "direct row: $(sql "SELECT * FROM queue WHERE id = $direct")"
printf 'p\0q' | VIGIL_STATE_DIR=$STATE "$VIGILCTL" -s "$SOCK" --json \
	enqueue --direct --delay 1h --priority 7 q - >"$T/out" || fail "direct from stdin"
d2=$(jval 'd["id"]' <"$T/out")
[ "$(sql "SELECT hex(payload), priority, due > created FROM queue WHERE id = $d2")" = "700071|7|1" ] ||
	fail "direct stdin row: $(sql "SELECT * FROM queue WHERE id = $d2")"
got=0
"$VIGILCTL" --state-dir "$STATE" enqueue --direct -u k1 q again >"$T/out" 2>"$T/err" || got=$?
[ "$got" = 1 ] && [ "$(cat "$T/out")" = "$u" ] ||
	fail "direct duplicate: exit $got, $(cat "$T/out" "$T/err")"
got=0
"$VIGILCTL" --state-dir "$STATE" enqueue --direct 'no/such' x 2>"$T/err" || got=$?
[ "$got" = 2 ] || fail "direct with a bad name: exit $got"
got=0
"$VIGILCTL" --state-dir "$T/none" enqueue --direct q x 2>"$T/err" || got=$?
[ "$got" = 1 ] || fail "direct without a state dir: exit $got"
start_vigild
counts_are q "9 2 0 0"
kicks() { grep -c ': kick$' "$VLOG" || true; }
k0=$(kicks)
"$VIGILCTL" -s "$SOCK" --state-dir "$STATE" enqueue --direct q live >/dev/null ||
	fail "enqueue --direct with vigild up"
[ "$(kicks)" -gt "$k0" ] || fail "enqueue --direct did not kick vigild"
counts_are q "10 2 0 0"

# Dead messages, made in state.db while vigild is down.
stop_vigild
sql "UPDATE queue SET state = 2, attempts = 5, last_exit = 3,
	last_error = 'boom', updated = created WHERE id IN ($a, $b)" >/dev/null
sql "UPDATE queue SET state = 2, attempts = 1, last_signal = 9,
	updated = created WHERE id IN ($c, $u)" >/dev/null
start_vigild
counts_are q "6 2 0 4"
rc 0 queue --dead q
[ "$(awk 'NR > 1 { print $1 }' "$T/out" | tr '\n' ' ')" = "$a $b $c $u " ] ||
	fail "dead list: $(cat "$T/out")"
grep -Eq "^$a +5 +exit 3 +[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+[+-][0-9]{2}:[0-9]{2} +boom\$" "$T/out" ||
	fail "dead row of $a: $(cat "$T/out")"
grep -Eq "^$c +1 +signal KILL " "$T/out" || fail "dead row of $c: $(cat "$T/out")"
rc 0 --json queue --dead q
[ "$(jval '[m["id"] for m in d["messages"]]' <"$T/out")" = "[$a, $b, $c, $u]" ] ||
	fail "dead --json: $(cat "$T/out")"
[ "$(jval '[d["messages"][0][k] for k in ("attempts", "last_exit", "last_signal", "last_error")]' <"$T/out")" = '[5, 3, null, "boom"]' ] ||
	fail "dead --json fields: $(cat "$T/out")"
[ "$(jval '[d["messages"][2][k] for k in ("last_exit", "last_signal", "last_error")]' <"$T/out")" = '[null, "KILL", null]' ] ||
	fail "dead --json signal: $(cat "$T/out")"
jval '[m["created_us"] > 0 and m["updated_us"] > 0 and m["priority"] == 0 for m in d["messages"]]' \
	<"$T/out" | grep -q false && fail "dead --json times: $(cat "$T/out")"
rc 0 queue --dead -n 1 q
[ "$(wc -l <"$T/out")" = 2 ] || fail "-n 1: $(cat "$T/out")"
grep -q '3 more dead messages' "$T/err" || fail "-n 1: $(cat "$T/err")"

# retry: dead to available; a dead one whose key a live message took since
# is refused, and state.db stays open.
u2=$(ctl enqueue -u k1 q newer) || fail "key of a dead message not free"
rc 0 retry "$a"
counts_are q "8 2 0 3"
rc 1 retry "$u" "$b"
grep -q "$u: its unique key is taken" "$T/err" || fail "retry $u: $(cat "$T/err")"
counts_are q "9 2 0 2"
grep -q 'supervising from memory' "$VLOG" && fail "a refused retry closed state.db"
rc 0 history svc
rc 0 delete "$c"
counts_are q "9 2 0 1"
rc 0 purge --dead q
[ "$(cat "$T/out")" = "removed: 1" ] || fail "purge --dead: $(cat "$T/out")"
counts_are q "9 2 0 0"
rc 0 purge q
[ "$(cat "$T/out")" = "removed: 11" ] || fail "purge: $(cat "$T/out")"
counts_are q "0 0 0 0"
[ "$(sql "SELECT count(*) FROM queue WHERE id = $u2")" = 0 ] || fail "purge left $u2"
[ "$(sql "SELECT count(*) FROM queue")" = 0 ] || fail "rows left: $(sql "SELECT id, job, state FROM queue")"
stop_vigild
log "ok"
