#!/bin/bash
# vigilctl import supervisord: a realistic config (includes, numprocs with
# process_name, %(here)s, %(ENV_X)s (in [include] too) and %(process_num)02d, priorities, a
# group, an event listener, options vigil has no meaning for, a program
# vigil refuses) becomes job files that vigild --check accepts and runs:
# the reports name file, line and option; --dry-run writes nothing; an
# existing job is kept unless --force; exit 0, 1 and 2 as documented.
# vigilctl is the subject: LeakSanitizer checks it too (lib.sh).
VIGIL_CTL_LEAKS=1
. "$(dirname "$0")/lib.sh"

SV=$T/sv
mkdir -p "$SV/conf.d"
# The line numbers below are checked: keep them.
cat >"$SV/supervisord.conf" <<'EOF'
[unix_http_server]
file=/tmp/supervisor.sock   ; ignored: vigil has its own socket

[supervisord]
nodaemon=true
environment=DEPLOY_ROOT="%(here)s",SHARED=1
minfds=4096

[supervisorctl]
serverurl=unix:///tmp/supervisor.sock

[program:web]
command=sh -c 'echo "web $PORT"; exec sleep 1000'
directory=%(here)s
autorestart=true
stopsignal=INT
stopwaitsecs=5
environment=APP_ENV="%(ENV_IMPORT_TEST_ENV)s",PORT=80%(process_num)02d
stdout_logfile_maxbytes=1MB
stdout_logfile_backups=3
redirect_stderr=true
priority=10

[program:worker]
command=sleep 10%(process_num)02d
process_name=%(program_name)s_%(process_num)02d
numprocs=3
priority=20
startretries=5
stopasgroup=true
exitcodes=0,2
startsecs=0
frobnicate=yes

[include]
files = %(ENV_IMPORT_TEST_CONFD)s/*.conf

[eventlistener:crashmail]
command=crashmail -a
events=PROCESS_STATE_EXITED

[group:app]
programs=web,worker
EOF
cat >"$SV/conf.d/beat.conf" <<'EOF'
[program:beat]
command=/bin/sleep 999
priority=30
umask=027
stdout_events_enabled=true
EOF
cat >"$SV/conf.d/bad.conf" <<'EOF'
[program:bad]
command=/bin/sleep 998
user=no-such-user-vigil-test
EOF

J=$T/imported
mkdir -p "$J"
export IMPORT_TEST_ENV=prod
# [include] files may use %(ENV_X)s, as supervisord's read_config() has it.
export IMPORT_TEST_CONFD=conf.d

# imp EXPECTED ARGS...: vigilctl import supervisord, exit status checked.
imp() {
	local want=$1 got=0
	shift
	"$VIGILCTL" import supervisord "$@" >"$T/out" 2>"$T/err" || got=$?
	[ "$got" -eq "$want" ] ||
		fail "import $* exited $got, expected $want: $(cat "$T/out" "$T/err")"
}
reported() { grep -qF -- "$1" "$T/err"; }
conf_has() { grep -qxF -- "$2" "$J/$1.conf"; }

imp 1 --dry-run --jobs-dir "$J" "$SV/supervisord.conf"
check "dry run prints the files" grep -qxF "==> $J/web.conf <==" "$T/out"
check "dry run writes nothing" test -z "$(ls -A "$J")"
S=$SV/supervisord.conf
# at TEXT: the line of S that starts with TEXT.
at() { grep -n -m 1 -F -- "$1" "$S" | cut -d: -f1; }
check "minfds reported" reported "$S:$(at minfds=): minfds: not translated ("
check "unknown option reported" \
	reported "$S:$(at frobnicate=): frobnicate: not translated (not an option of [program:x])"
check "process_name reported" \
	reported "$S:$(at process_name=): process_name: not translated (the instances are called worker@0 to worker@2)"
check "event listener reported" \
	reported "$S:$(at '[eventlistener:'): : not translated (vigil has no event listener protocol"
check "group reported" reported "$S:$(at '[group:'): : not translated (vigil has no groups"
check "events of an included file reported" \
	reported "$SV/conf.d/beat.conf:5: stdout_events_enabled: not translated ("
check "a job vigil refuses is reported" \
	reported "$SV/conf.d/bad.conf:1: [program:bad]: not translated (vigil refuses the job file:"
check "nothing about ignored sections" sh -c "! grep -q 'unix_http_server\|supervisorctl\|:1: : ' '$T/err'"

imp 1 --jobs-dir "$J" "$S"
check "three jobs written" test "$(ls "$J")" = "$(printf '%s\n' beat.conf web.conf worker.conf)"
check "the refused job is not written" test ! -e "$J/bad.conf"
check "no staging directory left" test -z "$(find "$J" -name '.vigil-import*')"
check "vigild --check accepts them" "$VIGILD" -t -c "$T/vigil.conf" -j "$J" \
	--runtime-dir "$RUN" --state-dir "$STATE" --log-dir "$LOGS"
check "autorestart=true" conf_has web 'restart = "always"'
check "default autorestart is on-failure" conf_has beat 'restart = "on-failure"'
check "stopsignal" conf_has web 'stop_signal = "INT"'
check "stopwaitsecs" conf_has web 'stop_timeout = "5s"'
check "log size" conf_has web 'log_max_size = "1024K"'
check "log backups" conf_has web 'log_keep = 3'
check "numprocs" conf_has worker 'instances = 3'
check "startretries" conf_has worker 'max_restarts = 5'
check "exitcodes" conf_has worker 'success_exit_codes = {0, 2}'
check "startsecs" conf_has worker 'min_uptime = "0s"'
check "umask" conf_has beat 'umask = "027"'
check "directory with %(here)s" conf_has web "directory = \"$SV\""
check "the option beside its line" conf_has web '# stopsignal = INT'
check "stdin is a pipe, as supervisord's" conf_has worker 'stdin = "pipe"'
# priorities: beat (30) first, then the group app (999): web (10), worker (20).
check "beat has no depends" sh -c "! grep -q '^depends' '$J/beat.conf'"
check "web after beat" conf_has web 'depends = {"beat"}'
check "worker after web" conf_has worker 'depends = {"web"}'

# An existing job is kept without --force, replaced with it.
: >"$J/extra.conf"
printf '# mine\ncommand = "sleep 1"\n' >"$J/web.conf"
imp 1 --jobs-dir "$J" "$S"
check "existing job refused" reported "vigilctl: $J/web.conf exists: not written (--force replaces it)"
check "existing job kept" grep -qx '# mine' "$J/web.conf"
imp 1 --force --jobs-dir "$J" "$S"
check "--force replaces it" conf_has web 'restart = "always"'

# Exit 2: unreadable input, usage; nothing written.
imp 2 --jobs-dir "$T/none" "$T/no-such.conf"
check "unreadable file named" reported "$T/no-such.conf"
imp 2 --jobs-dir "$J" "$SV/conf.d"
imp 2 --jobs-dir "$J"
imp 2 nginx "$S"
"$VIGILCTL" import >/dev/null 2>&1 && fail "import alone succeeded"
printf '[program:x]\ncommand=sleep 1\nno delimiter here\n' >"$T/broken.conf"
imp 2 --jobs-dir "$J" "$T/broken.conf"
check "a syntax error names file and line" reported "$T/broken.conf:3:"

# Exit 0 when everything is translated; vigil.conf's jobs_dir by default.
mkdir -p "$T/clean.d"
printf '[supervisord]\nnodaemon=true\n[program:solo]\ncommand=sleep 997\nautorestart=unexpected\n' >"$T/clean.conf"
printf 'jobs_dir = "%s"\n' "$T/clean.d" >"$T/vigil.conf"
"$VIGILCTL" -c "$T/vigil.conf" import supervisord "$T/clean.conf" >"$T/out" 2>"$T/err" ||
	fail "clean import failed: $(cat "$T/out" "$T/err")"
check "clean import: nothing reported" test ! -s "$T/err"
check "written to vigil.conf's jobs_dir" test -f "$T/clean.d/solo.conf"
: >"$T/vigil.conf"

# Run what was imported.
rm -f "$J/extra.conf"
JOBS=$J start_vigild
for w in beat web worker@0 worker@1 worker@2; do wait_state "$w" RUNNING; done
for i in 0 1 2; do
	p=$(job_pid "worker@$i")
	check "worker@$i runs sleep 100$i" test "$(tr '\0' ' ' <"/proc/$p/cmdline")" = "sleep 100$i "
	check "worker@$i stdin is a pipe" sh -c "readlink /proc/$p/fd/0 | grep -q '^pipe:'"
done
p=$(job_pid web)
envof() { tr '\0' '\n' <"/proc/$1/environ" | grep -x "$2" >/dev/null; }
check "web has APP_ENV from %(ENV_X)s" envof "$p" APP_ENV=prod
check "web has PORT from %(process_num)02d" envof "$p" PORT=8000
check "web has [supervisord]'s environment" envof "$p" "DEPLOY_ROOT=$SV"
check "web runs in %(here)s" test "$(readlink "/proc/$p/cwd")" = "$SV"
check "beat's umask" sh -c "grep -q '^Umask:.*0027' /proc/$(job_pid beat)/status"
stop_vigild
checks_passed
log "imported jobs run as supervisord would run them"
