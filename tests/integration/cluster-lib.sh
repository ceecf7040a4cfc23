# shellcheck shell=bash
# Several vigild "nodes" in one test, for cluster mode; sourced after
# lib.sh and pg-lib.sh.  Node I (1, 2 or 3) has everything of its own
# under $T/nI: vigil.conf, jobs.d, run (its socket), state, log and
# vigild.log; its cluster section points at pg-lib.sh's private server as
# the role nI with node_name nI.  Also TCP proxies in front of the server
# (tests/helpers/tcpproxy: a frozen proxy is a silent partition) and the
# exactly-one sampler (tests/helpers/onecopy).  Cleanup ends the nodes
# (SIGTERM, then SIGKILL past a deadline), the proxies and the sampler, by
# pid, before pg-lib.sh stops the server; lib.sh's own vigild is left to
# lib.sh.
#
# The cluster timings, read by node_start (set them before it):
: "${CLUSTER_LEASE_TTL:=3s}"
: "${CLUSTER_RENEW_INTERVAL:=500ms}"
: "${CLUSTER_QUERY_TIMEOUT:=500ms}"
: "${CLUSTER_CONNECT_TIMEOUT:=500ms}"
: "${CLUSTER_FENCE_MARGIN:=500ms}"
: "${CLUSTER_ON_DB_LOSS:=kill}"
# The nodes cluster_job writes to.
: "${CLUSTER_NODES:=1 2 3}"
# Seconds node_stop (and cleanup) waits for a node to exit.
: "${NODE_STOP_TIMEOUT:=15}"
# NODE_CLUSTER_EXTRA[I]: more lines for node I's cluster section (inside
# its braces; node_start's LINES go after it), e.g.
#   NODE_CLUSTER_EXTRA[1]="work_conninfo = \"$(pgb_conninfo 1)\""

NODE_PID=()
# NODE_CONNINFO[I]: a test's own conninfo for node I (else node_conninfo's).
NODE_CONNINFO=()
NODE_CLUSTER_EXTRA=()
declare -gA PROXY_PID=()
PROXY_PORT=
SAMPLER_PID=
SAMPLER_MARKERS=
SAMPLER_OUT=$T/onecopy.out

# CLUSTER_MAX_NODES: how many nodes there may be (3 in the tests; the
# scale bench has more, with their roles nI made by itself).
: "${CLUSTER_MAX_NODES:=3}"
_node() {
	case $1 in
	'' | *[!0-9]*) fail "no node '$1': nodes are 1 to $CLUSTER_MAX_NODES" ;;
	esac
	[ "$1" -ge 1 ] && [ "$1" -le "$CLUSTER_MAX_NODES" ] ||
		fail "no node '$1': nodes are 1 to $CLUSTER_MAX_NODES"
}

# node_conninfo I: the libpq conninfo of node I: NODE_CONNINFO[I] if the
# test set it; else through node I's proxy if it has one (node_proxy);
# else the primary then the standby if there is one (multi-host, the
# read-write one wins); else the primary's socket.
node_conninfo() {
	local hosts
	_node "$1"
	if [ -n "${NODE_CONNINFO[$1]:-}" ]; then
		echo "${NODE_CONNINFO[$1]}"
		return
	fi
	[ -n "$PGPORT_T" ] || fail "node_conninfo: pg_start first"
	if [ -n "${PROXY_PID[n$1]:-}" ]; then
		hosts="host=127.0.0.1 port=$(cat "$T/proxy-n$1.port")"
	elif [ -n "$PGPORT_S" ]; then
		hosts="host=$PGSOCK_T,$PGSOCK_S port=$PGPORT_T,$PGPORT_S target_session_attrs=read-write"
	else
		hosts="host=$PGSOCK_T port=$PGPORT_T"
	fi
	echo "$hosts dbname=vigil user=n$1"
}

# node_start I [LINES...]: write node I's vigil.conf (the cluster section,
# then LINES, one each) and start its vigild; wait for its ping.  Call it
# in the test's shell, not in $(...): the node must be the test's child.
node_start() {
	_node_spawn "$1" '' "${@:2}"
	_node_ping "$1"
}

# nodes_start_together I...: start the vigild of these nodes at the same
# instant, each behind one gate (a FIFO each opens for reading once it is
# ready to exec its vigild; the test opens it for writing once all are
# there), then wait for each one's ping.  Their vigil.conf has the cluster
# section only.  In the test's shell, as node_start.
nodes_start_together() {
	local i gate=$T/gate fd
	rm -f "$gate" "$gate".*
	mkfifo "$gate"
	for i in "$@"; do _node_spawn "$i" "$gate"; done
	for i in "$@"; do
		retry 10 test -e "$gate.$i" || fail "node $i did not reach the gate"
	done
	# Read-write: this open never blocks, and lets every reader through.
	exec {fd}<>"$gate"
	for i in "$@"; do _node_ping "$i"; done
	exec {fd}>&-
	rm -f "$gate" "$gate".*
}

# _node_spawn I GATE [LINES...]: write node I's vigil.conf and start its
# vigild in the background: at once, or with GATE (a FIFO) once GATE has
# a writer (nodes_start_together).
_node_spawn() {
	local i=$1 gate=$2 d=$T/n$1 ci
	_node "$i"
	shift 2
	[ -z "${NODE_PID[i]:-}" ] || ! alive "${NODE_PID[i]}" ||
		fail "node $i runs already (pid ${NODE_PID[i]})"
	ci=$(node_conninfo "$i") || exit 1
	mkdir -p "$d/jobs.d"
	{
		echo "cluster {"
		echo "  conninfo = \"$ci\""
		echo "  node_name = \"n$i\""
		echo "  lease_ttl = \"$CLUSTER_LEASE_TTL\""
		echo "  renew_interval = \"$CLUSTER_RENEW_INTERVAL\""
		echo "  query_timeout = \"$CLUSTER_QUERY_TIMEOUT\""
		echo "  connect_timeout = \"$CLUSTER_CONNECT_TIMEOUT\""
		echo "  fence_margin = \"$CLUSTER_FENCE_MARGIN\""
		echo "  on_db_loss = \"$CLUSTER_ON_DB_LOSS\""
		if [ -n "${NODE_CLUSTER_EXTRA[i]:-}" ]; then
			printf '  %s\n' "${NODE_CLUSTER_EXTRA[i]}"
		fi
		echo "}"
		if [ $# -gt 0 ]; then printf '%s\n' "$@"; fi
	} >"$d/vigil.conf"
	if [ -n "$gate" ]; then
		# The same process, exec'd: NODE_PID is the vigild.
		# shellcheck disable=SC2016,SC2086
		bash -c ': >"$1.$2" && exec 3<"$1" && exec 3<&- && shift 2 &&
			exec "$@"' gate "$gate" "$i" $VIGILD_WRAPPER "$VIGILD" \
			-c "$d/vigil.conf" -j "$d/jobs.d" --runtime-dir "$d/run" \
			--state-dir "$d/state" --log-dir "$d/log" \
			>>"$d/vigild.log" 2>&1 &
	else
		# shellcheck disable=SC2086
		$VIGILD_WRAPPER "$VIGILD" -c "$d/vigil.conf" -j "$d/jobs.d" \
			--runtime-dir "$d/run" --state-dir "$d/state" \
			--log-dir "$d/log" >>"$d/vigild.log" 2>&1 &
	fi
	NODE_PID[i]=$!
	track "${NODE_PID[i]}"
}

# _node_ping I: wait for node I's ping.
_node_ping() {
	retry 20 nctl "$1" ping >/dev/null 2>&1 ||
		fail "node $1 did not answer ping; log: $(tail -n 20 "$(node_log "$1")")"
}

# cluster_need: skip (exit 77) unless the cluster tests can run here:
# pg_need, jq, and a vigild built with PostgreSQL support (missing, each
# fails the test in CI: lib.sh's skip_fixable); and not under
# valgrind (VIGILD_WRAPPER: their bounds are timings), in distcheck
# (VIGIL_SKIP_SLOW) or where the suite asked: VIGIL_SKIP_CLUSTER, or a
# VIGIL_CLUSTER_TESTS that does not name this test (tests/run-all.sh
# runs each cluster test in one of its builds, gcc or ASan).
cluster_need() {
	local d=$T/need t=${0##*/}
	[ -z "${VIGILD_WRAPPER:-}" ] || skip "timings, not under valgrind"
	[ -z "${VIGIL_SKIP_SLOW:-}" ] || skip "VIGIL_SKIP_SLOW is set"
	[ -z "${VIGIL_SKIP_CLUSTER:-}" ] || skip "VIGIL_SKIP_CLUSTER is set"
	case " ${VIGIL_CLUSTER_TESTS:-${t%.sh}} " in
	*" ${t%.sh} "*) ;;
	*) skip "not in VIGIL_CLUSTER_TESTS (the suite runs it in its other build)" ;;
	esac
	pg_need
	need_cmd jq jq
	mkdir -p "$d/jobs.d"
	printf 'cluster {\n  conninfo = "dbname=vigil"\n  node_name = "n1"\n}\n' \
		>"$d/vigil.conf"
	if ! "$VIGILD" -t -c "$d/vigil.conf" -j "$d/jobs.d" >"$d/out" 2>&1; then
		grep -q 'without PostgreSQL support' "$d/out" &&
			skip_fixable "vigild was built without PostgreSQL support (libpq-dev)"
		fail "vigild -t on a cluster section: $(cat "$d/out")"
	fi
	rm -rf "$d"
}

# nctl I ARGS...: vigilctl against node I.
nctl() {
	_node "$1"
	"$VIGILCTL" -s "$T/n$1/run/vigild.sock" "${@:2}"
}

# node_log I: the path of node I's vigild log.
node_log() { echo "$T/n$1/vigild.log"; }

# node_pid I: the pid of node I's vigild.
node_pid() {
	_node "$1"
	[ -n "${NODE_PID[$1]:-}" ] || fail "node $1 is not running"
	echo "${NODE_PID[$1]}"
}

# node_kill I SIGNAL: send SIGNAL (KILL, STOP, CONT, ...) to node I's
# vigild; after KILL, reap it: node I can be started again.
node_kill() {
	local pid
	pid=$(node_pid "$1")
	kill -"$2" "$pid" || fail "node $1: kill -$2 $pid failed"
	case $2 in
	KILL | 9)
		wait "$pid" 2>/dev/null || true
		NODE_PID[$1]=
		;;
	esac
}

# node_stop I: SIGTERM (and SIGCONT: it may be stopped) to node I's
# vigild, wait up to NODE_STOP_TIMEOUT seconds; its status must be 0.
node_stop() {
	local pid rc=0
	_node "$1"
	pid=${NODE_PID[$1]:-}
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null || true
	kill -CONT "$pid" 2>/dev/null || true
	if ! retry "$NODE_STOP_TIMEOUT" dead "$pid"; then
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		NODE_PID[$1]=
		fail "node $1 did not stop within $(slow_s "$NODE_STOP_TIMEOUT") s; log: $(tail -n 20 "$(node_log "$1")")"
	fi
	wait "$pid" || rc=$?
	NODE_PID[$1]=
	[ "$rc" -eq 0 ] ||
		fail "node $1 exited with $rc; log: $(tail -n 20 "$(node_log "$1")")"
}

# node_job I NAME <<EOF ... EOF: stdin as node I's jobs.d/NAME.conf, plus
# the environment line that marks the job's processes as this test's
# (procs_with), unless the text sets environment itself.
node_job() {
	_node "$1"
	mkdir -p "$T/n$1/jobs.d"
	_node_job_text "$(cat)" >"$T/n$1/jobs.d/$2.conf"
}

_node_job_text() {
	printf '%s\n' "$1"
	case $1 in
	*environment*) ;;
	*) printf 'environment = {"VIGIL_TEST_ROOT=%s"}\n' "$T" ;;
	esac
}

# cluster_job NAME <<EOF ... EOF: the same file as node_job, in the jobs.d
# of every node of CLUSTER_NODES (byte for byte: the nodes compare specs).
cluster_job() {
	local text i
	text=$(_node_job_text "$(cat)")
	for i in $CLUSTER_NODES; do
		_node "$i"
		mkdir -p "$T/n$i/jobs.d"
		printf '%s\n' "$text" >"$T/n$i/jobs.d/$1.conf"
	done
}

# proxy_start NAME HOST PORT: a tcpproxy named NAME to HOST PORT; its
# port in PROXY_PORT and in $T/proxy-NAME.port.
proxy_start() {
	local f=$T/proxy-$1.port
	[ -x "$HELPERS/tcpproxy" ] || fail "no $HELPERS/tcpproxy (HELPERS=$HELPERS)"
	[ -z "${PROXY_PID[$1]:-}" ] || fail "proxy $1 runs already"
	rm -f "$f"
	"$HELPERS/tcpproxy" "$f" "$2" "$3" 2>>"$T/proxy-$1.err" &
	PROXY_PID[$1]=$!
	track "${PROXY_PID[$1]}"
	retry 5 test -s "$f" || fail "proxy $1 wrote no port: $(cat "$T/proxy-$1.err")"
	# shellcheck disable=SC2034 # for the test
	PROXY_PORT=$(cat "$f")
}

# proxy_pid NAME: the pid of the proxy NAME.
proxy_pid() {
	[ -n "${PROXY_PID[$1]:-}" ] || fail "no proxy $1"
	echo "${PROXY_PID[$1]}"
}

# proxy_freeze NAME / proxy_thaw NAME: SIGSTOP / SIGCONT the proxy NAME:
# a silent partition of its clients, and its end.
proxy_freeze() { kill -STOP "$(proxy_pid "$1")"; }
proxy_thaw() { kill -CONT "$(proxy_pid "$1")"; }

# proxy_stop NAME: end the proxy NAME (its connections are reset).
proxy_stop() {
	local pid
	pid=$(proxy_pid "$1")
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	unset 'PROXY_PID[$1]'
}

# node_proxy I: a proxy n$I in front of the primary's TCP port, which
# node I's next node_start uses; freeze it with proxy_freeze nI.
node_proxy() {
	_node "$1"
	[ -n "$PGPORT_T" ] || fail "node_proxy: pg_start first"
	proxy_start "n$1" 127.0.0.1 "$PGPORT_T"
}

# sampler_start MARKER...: the exactly-one sampler on these markers (no
# spaces in them); returns after its first scan.  A live process counts
# once for a marker among its arguments, a fork of it (same marker in its
# parent) not at all.  Give each cluster job a marker of its own, unique
# to the test, as an argument: e.g. m=svc-$$ and
#   command = {"bash", "-c", "exec -a svc-1234 sleep 1000"}
sampler_start() {
	local m
	[ -x "$HELPERS/onecopy" ] || fail "no $HELPERS/onecopy (HELPERS=$HELPERS)"
	[ -z "$SAMPLER_PID" ] || fail "the sampler runs already"
	for m in "$@"; do
		case $m in
		*[[:space:]]* | '') fail "bad marker '$m'" ;;
		esac
	done
	SAMPLER_MARKERS="$*"
	rm -f "$SAMPLER_OUT"
	"$HELPERS/onecopy" "$SAMPLER_OUT" "$@" 2>>"$T/onecopy.err" &
	SAMPLER_PID=$!
	track "$SAMPLER_PID"
	retry 5 grep -q '^start ' "$SAMPLER_OUT" ||
		fail "the sampler did not start: $(cat "$T/onecopy.err")"
}

# _sampler_end: SIGTERM the sampler, wait for it; 1 if it failed.
_sampler_end() {
	local pid=$SAMPLER_PID rc=0
	[ -n "$pid" ] || return 0
	SAMPLER_PID=
	kill -TERM "$pid" 2>/dev/null || true
	if ! retry 5 dead "$pid"; then
		kill -KILL "$pid" 2>/dev/null || true
		rc=1
	fi
	wait "$pid" 2>/dev/null || rc=1
	return "$rc"
}

# sampler_max MARKER: the most processes the sampler saw with MARKER at
# once (after sampler_stop).
sampler_max() {
	awk -v m="$1" '$1 == "max" && $2 == m { print $3 }' "$SAMPLER_OUT"
}

# marker_pids MARKER: the live processes with an argument equal to
# MARKER, as the sampler counts them (forks of one not again), one a line.
# The sampler itself is not counted; nor is this grep, which is not given
# MARKER itself as an argument (the sampler would count it).
marker_pids() {
	local f p all
	# shellcheck disable=SC2062 # the glob is the files, not the pattern
	all=$(grep -lzxF "--regexp=$1" /proc/[0-9]*/cmdline 2>/dev/null |
		sed 's|^/proc/||; s|/cmdline$||') || true
	for p in $all; do
		[ "$p" != "$SAMPLER_PID" ] && alive "$p" || continue
		f=$(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f2)
		case " $all " in
		*" $f "*) ;;
		*) echo "$p" ;;
		esac
	done
}

# sampler_stop: stop the sampler; fail unless each marker's maximum is at
# most 1, showing the samples that saw more.
sampler_stop() {
	local m n bad=
	_sampler_end || fail "the sampler did not end well: $(cat "$T/onecopy.err")"
	for m in $SAMPLER_MARKERS; do
		n=$(sampler_max "$m")
		[ -n "$n" ] || fail "the sampler wrote no maximum for $m"
		log "sampler: at most $n of $m at once ($(sed -n 's/^samples //p' "$SAMPLER_OUT") samples)"
		[ "$n" -le 1 ] || bad="$bad $m"
	done
	[ -z "$bad" ] ||
		fail "more than one copy of$bad:$(printf '\n'; grep '^over ' "$SAMPLER_OUT" | head -n 20)"
}

# beat_job NAME [LINES...]: on stdout, the text of a cluster job (for
# cluster_job or node_job) whose child appends a beat to $T/beats-NAME
# every 20 ms, "USEC NODE TOKEN PID" (USEC: the wall clock in
# microseconds; NODE, TOKEN: its VIGIL_NODE and VIGIL_FENCING_TOKEN), and
# "USEC NODE TOKEN PID term" at SIGTERM, then exits 0; LINES are more
# options.  Its marker for the sampler is beat_marker NAME.
beat_job() {
	local name=$1
	shift
	[ -f "$T/beat.sh" ] || cat >"$T/beat.sh" <<'EOF'
f=$1
b() { echo "${EPOCHREALTIME/./} $VIGIL_NODE $VIGIL_FENCING_TOKEN $$${1:+ $1}" >>"$f"; }
trap 'b term; exit 0' TERM
while :; do b; sleep 0.02; done
EOF
	printf 'command = {"bash", "%s", "%s", "%s"}\ncluster = true\n' \
		"$T/beat.sh" "$T/beats-$name" "$(beat_marker "$name")"
	if [ $# -gt 0 ]; then printf '%s\n' "$@"; fi
}
beat_marker() { echo "beat-$1-$$"; }

# beats_check NAME [quiet]: one line per copy (token and pid) of the job
# in $T/beats-NAME.sum, "TOKEN PID NODE FIRST LAST TERM" (USEC of its
# first and last lines and of its SIGTERM, 0 if none), in the order they
# started, and logged unless quiet; fail if the beats of two copies
# overlap: each must start after every earlier one's last.
beats_check() {
	local f=$T/beats-$1 bad
	[ -s "$f" ] || fail "no beats in $f"
	awk '{ k = $3 " " $4
		if (!(k in first)) { first[k] = $1; node[k] = $2; term[k] = 0 }
		if ($5 == "term" && !term[k]) term[k] = $1
		last[k] = $1 }
		END { for (k in first) print k, node[k], first[k], last[k], term[k] }' \
		"$f" | sort -n -k 4 >"$f.sum"
	bad=$(awk '{ if (NR > 1 && $4 <= max)
			printf "%s (pid %s, %s) started %.1f ms before the end of an earlier copy; ",
			    $1, $2, $3, (max - $4) / 1000
		if ($5 > max) max = $5 }' "$f.sum")
	[ "${2:-}" = quiet ] || awk -v n="$1" '{ printf "beats %s: token %s pid %s on %s: %.3f .. %.3f s%s\n",
		n, $1, $2, $3, $4 / 1e6, $5 / 1e6, $6 ? sprintf(", TERM at %.3f", $6 / 1e6) : "" }' \
		"$f.sum" | while IFS= read -r l; do log "$l"; done
	[ -z "$bad" ] || fail "two copies of $1 overlap: $bad"
}

# beat_sum NAME TOKEN FIELD: FIELD (first, last or term) of TOKEN's copy
# in $T/beats-NAME.sum (after beats_check).
beat_sum() {
	awk -v t="$2" -v f="$3" '$1 == t {
		print (f == "first" ? $4 : f == "last" ? $5 : $6); exit }' "$T/beats-$1.sum"
}

# beat_last NAME FIELD: the last beat's node or token (its second or third
# field).
beat_last() {
	tail -n 1 "$T/beats-$1" 2>/dev/null |
		awk -v f="$2" '{ print (f == "node" ? $2 : $3) }'
}

# now_us: the wall clock in microseconds, as the beats have it.
# us_ms US0 US1: US1 - US0 in milliseconds, one decimal.
now_us() { echo "${EPOCHREALTIME/./}"; }
us_ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1000 }'; }

# node_status I JOB FIELD: FIELD of JOB (an instance) in node I's
# `vigilctl --json status` ("null" if it has none).
node_status() {
	nctl "$1" --json status "$2" 2>/dev/null | jq -r ".jobs[0].$3"
}

# node_runs I JOB: node I runs JOB as the holder of its lease.
node_runs() {
	[ "$(node_status "$1" "$2" state)" = RUNNING ] &&
		[ "$(node_status "$1" "$2" fencing_token)" != null ]
}

# job_runner JOB: the node (1-3) that runs JOB as its lease's holder, if
# one does.
job_runner() {
	local i
	for i in 1 2 3; do
		node_runs "$i" "$1" && echo "$i" && return 0
	done
	return 1
}

# node_standby I JOB: node I runs no JOB and waits for its lease, held by
# another node.
node_standby() {
	case $(node_status "$1" "$2" reason) in
	"waiting for cluster lease (held by n"*)
		[ "$(node_status "$1" "$2" pid)" = null ] ;;
	*) return 1 ;;
	esac
}

# Cleanup: thaw the proxies (a node's last words reach the server), stop
# the nodes together, then end the proxies and the sampler.
_cluster_cleanup() {
	local i pid name deadline
	for name in "${!PROXY_PID[@]}"; do
		kill -CONT "${PROXY_PID[$name]}" 2>/dev/null || true
	done
	for i in "${!NODE_PID[@]}"; do
		pid=${NODE_PID[i]}
		[ -n "$pid" ] || continue
		kill -TERM "$pid" 2>/dev/null || true
		kill -CONT "$pid" 2>/dev/null || true
	done
	deadline=$(($(now_ms) + $(slow_s "$NODE_STOP_TIMEOUT") * 1000))
	for i in "${!NODE_PID[@]}"; do
		pid=${NODE_PID[i]}
		[ -n "$pid" ] || continue
		while alive "$pid" && [ "$(now_ms)" -lt "$deadline" ]; do
			sleep 0.02
		done
		if alive "$pid"; then
			printf '# node %s did not stop: SIGKILL\n' "$i" >&2
			kill -KILL "$pid" 2>/dev/null || true
		fi
		wait "$pid" 2>/dev/null || true
	done
	for name in "${!PROXY_PID[@]}"; do
		kill -KILL "${PROXY_PID[$name]}" 2>/dev/null || true
		wait "${PROXY_PID[$name]}" 2>/dev/null || true
	done
	_sampler_end || true
	if [ "$1" -ne 0 ] && [ "$1" -ne 77 ]; then
		for i in "${!NODE_PID[@]}"; do
			printf '# node %s log:\n' "$i" >&2
			tail -n 30 "$(node_log "$i")" >&2 2>/dev/null || true
		done
		if [ -s "$SAMPLER_OUT" ]; then
			printf '# sampler:\n' >&2
			grep -v '^start ' "$SAMPLER_OUT" | head -n 20 >&2 || true
		fi
	fi
	return 0
}
at_cleanup _cluster_cleanup
