#!/bin/bash
# Round trip: the same supervisord config (a web app: gunicorn behind an
# [include], celery workers with numprocs, numprocs_start and process_name,
# a beat; %(here)s, %(ENV_X)s, %(process_num)02d, %(host_node_name)s,
# %(numprocs)s, quoting in command and environment, user, umask,
# directory) run by Debian's supervisord itself and, after vigilctl import
# supervisord, by vigild.  Each pair of processes must have the same
# command line, environment, working directory, umask, uid, gid and
# groups.  Left out of the environment: what each supervisor adds itself
# (SUPERVISOR_*, VIGIL_*; vigil's HOME, USER, LOGNAME and SHELL of a
# job's user, as systemd sets them), LC_CTYPE, which Python sets in
# supervisord's own environment when it starts with the C locale, and
# APP_BIN, the variable of supervisord's own environment that the config
# reads as %(ENV_APP_BIN)s: supervisord hands its whole environment down,
# vigil starts jobs in a clean one (the value is imported, not the
# variable).
# vigilctl is the subject: LeakSanitizer checks it too (lib.sh).
VIGIL_CTL_LEAKS=1
. "$(dirname "$0")/lib.sh"

need_cmd supervisord supervisor
need_cmd supervisorctl supervisor
need_nobody

# The jobs run as nobody too: the tree must be open to it.
chmod 755 "$T"
SV=$T/sv
mkdir -p "$SV/conf.d" "$SV/app" "$SV/logs" "$T/bin"
# A stand-in for gunicorn and celery that keeps its argv on show.
printf '#!/bin/sh\nwhile :; do sleep 1; done\n' >"$T/bin/gunicorn"
cp "$T/bin/gunicorn" "$T/bin/celery"
chmod 755 "$T/bin/gunicorn" "$T/bin/celery"

cat >"$SV/supervisord.conf" <<'EOF'
; A typical Django deployment's supervisord.conf.
[unix_http_server]
file=%(here)s/supervisor.sock
chmod=0700

[supervisord]
logfile=%(here)s/logs/supervisord.log
pidfile=%(here)s/supervisord.pid
childlogdir=%(here)s/logs
nodaemon=true
environment=APP_HOME="%(here)s/app",DJANGO_SETTINGS_MODULE="site.settings"

[rpcinterface:supervisor]
supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface

[supervisorctl]
serverurl=unix://%(here)s/supervisor.sock

[include]
files = conf.d/*.ini
EOF
cat >"$SV/conf.d/web.ini" <<'EOF'
[program:web]
command=%(ENV_APP_BIN)s/gunicorn --bind 127.0.0.1:80%(process_num)02d
    --workers 2 "site.wsgi:application"   ; continued
directory=%(here)s/../app
environment=PORT="80%(process_num)02d",GREETING="hello, world",QUOTED='say "hi"'
umask=022
priority=100
EOF
cat >"$SV/conf.d/celery.ini" <<'EOF'
[program:celery]
command=%(ENV_APP_BIN)s/celery -A site worker -n w%(process_num)d@%(host_node_name)s
  --concurrency=%(numprocs)s -Q 'default,mail'
process_name=%(program_name)s_%(process_num)02d
numprocs=3
numprocs_start=1
directory=/
environment=C_FORCE_ROOT="1",WORKER=%(process_num)02d,NAME=%(program_name)s
stopasgroup=true
user=nobody
umask=027
priority=200

[program:beat]
command=%(ENV_APP_BIN)s/celery -A site beat -s '%(here)s/beat schedule.db'
directory=%(here)s
autorestart=unexpected
exitcodes=0,1
priority=300
EOF

export APP_BIN=$T/bin
path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
SVC="supervisorctl -c $SV/supervisord.conf"

# supervisord, in a clean environment as under systemd.
env -i PATH="$path" APP_BIN="$APP_BIN" \
	supervisord -c "$SV/supervisord.conf" >"$T/supervisord.out" 2>&1 &
SUP_PID=$!
# Not tracked (that would SIGKILL it and orphan its children): stopped.
cleanup_hook() {
	kill -TERM "$SUP_PID" 2>/dev/null || return 0
	for _ in $(seq 1 750); do
		alive "$SUP_PID" || return 0
		sleep 0.02
	done
	kill -KILL "$SUP_PID"
}

# sv_pid NAME: the pid supervisord reports for NAME, when it runs.
sv_pid() { $SVC pid "$1" 2>/dev/null | grep -x '[1-9][0-9]*'; }
SV_NAMES="web celery:celery_01 celery:celery_02 celery:celery_03 beat"
VG_NAMES="web celery@0 celery@1 celery@2 beat"
for n in $SV_NAMES; do
	retry 20 sv_pid "$n" >/dev/null ||
		fail "supervisord did not start $n: $(tail -n 20 "$T/supervisord.out" "$SV/logs/supervisord.log")"
done

J=$T/imported
mkdir -p "$J"
"$VIGILCTL" import supervisord --jobs-dir "$J" "$SV/supervisord.conf" \
	>"$T/import.out" 2>"$T/import.err" || [ $? -eq 1 ] ||
	fail "import failed: $(cat "$T/import.out" "$T/import.err")"
log "reports: $(tr '\n' '|' <"$T/import.err")"
JOBS=$J start_vigild
for n in $VG_NAMES; do wait_state "$n" RUNNING; done

# facts PID: what must be the same, one per line.
facts() {
	printf 'cmdline:%s\n' "$(tr '\0' ' ' <"/proc/$1/cmdline")"
	printf 'cwd:%s\n' "$(readlink "/proc/$1/cwd")"
	grep -E '^(Umask|Uid|Gid|Groups):' "/proc/$1/status"
	tr '\0' '\n' <"/proc/$1/environ" |
		grep -Ev '^(SUPERVISOR_[A-Z_]*|VIGIL_[A-Z_]*|HOME|USER|LOGNAME|SHELL|LC_CTYPE|APP_BIN)=' |
		sort | sed 's/^/env:/'
}

# shellcheck disable=SC2086
set -- $VG_NAMES
for n in $SV_NAMES; do
	sp=$(sv_pid "$n")
	vp=$(job_pid "$1")
	facts "$sp" >"$T/sv.$n"
	facts "$vp" >"$T/vg.$1"
	if diff -u "$T/sv.$n" "$T/vg.$1" >"$T/diff" 2>&1; then
		log "ok: supervisord's $n and vigil's $1 are twins ($(grep -c . "$T/vg.$1") facts)"
	else
		cat "$T/diff" >&2
		CHECKS_FAILED=1
		printf 'FAIL: %s differs from %s\n' "$n" "$1" >&2
	fi
	shift
done
# The facts are not empty by accident.
check "a celery worker's argv went through %(process_num)d" \
	grep -qxF "cmdline:/bin/sh $T/bin/celery -A site worker -n w2@$(uname -n) --concurrency=3 -Q default,mail " "$T/vg.celery@1"
check "its environment too" grep -qxF "env:WORKER=02" "$T/vg.celery@1"
check "as nobody" sh -c "grep '^Uid:' '$T/vg.celery@1' | grep -qw 65534"
stop_vigild
cleanup_hook
checks_passed
log "supervisord and vigild run the imported config's processes alike"
