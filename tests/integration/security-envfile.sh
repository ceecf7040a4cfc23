#!/bin/bash
# A job's user who can replace the job's env_file must neither freeze
# vigild (a FIFO there blocked its event loop at the next start) nor read
# a file it may not read through the job's environment (a symbolic link
# to a root-only file was followed by root vigild, and so was a directory
# above the file swapped for a link to a root-only directory).  Each
# refused file is a failed start whose reason names the file (and the
# link); vigild keeps answering.  A link root made in root's directory is
# still followed.
. "$(dirname "$0")/lib.sh"

need_nobody
need_cmd mkfifo coreutils

# The job user owns the directories of its env_file; the secrets are root's:
# a file, and a file of the same name in a directory only root may enter.
ENVDIR=$T/envdir
SUB=$ENVDIR/conf
ENVF=$SUB/app.env
mkdir "$ENVDIR" "$SUB"
chown nobody "$ENVDIR" "$SUB"
printf 'GREETING=hello\n' >"$ENVF"
chown nobody "$ENVF"
SECRET=vigil-secret-$$-$RANDOM
printf 'STOLEN=%s\n' "$SECRET" >"$T/secret"
chmod 0600 "$T/secret"
VAULT=$T/vault
mkdir -m 0700 "$VAULT"
printf 'STOLEN=%s\n' "$SECRET" >"$VAULT/app.env"
chmod 0600 "$VAULT/app.env"
# Nobody must not read the secrets, else the test could not tell a leak.
as_nobody cat "$T/secret" >/dev/null 2>&1 &&
	skip "user nobody can read root's 0600 $T/secret here"
as_nobody cat "$VAULT/app.env" >/dev/null 2>&1 &&
	skip "user nobody can read root's 0600 $VAULT/app.env here"

# A job whose env_file is reached through a link of root's in root's
# directory: followed, as /var/run -> /run is.
mkdir "$T/legit"
printf 'LEGIT=yes\n' >"$T/legit/app.env"
ln -s legit "$T/legit-link"
job legit 'command = {"sleep", "1000"}' "env_file = \"$T/legit-link/app.env\""

job app 'command = {"sh", "-c", "env; exec sleep 1000"}' 'user = "nobody"' \
	"env_file = \"$ENVF\"" 'restart_delay = "100ms"' 'max_restarts = 1000'
start_vigild
wait_state app RUNNING
p=$(job_pid app)
grep -qzx GREETING=hello "/proc/$p/environ" || fail "env_file not applied"
wait_state legit RUNNING
p=$(job_pid legit)
grep -qzx LEGIT=yes "/proc/$p/environ" ||
	fail "env_file through root's link not applied"

# answers: vigild replies to status within 3 seconds.
answers() { timeout "$(slow_s 3)" "$VIGILCTL" -s "$SOCK" status >/dev/null 2>&1; }
# reason_names: status app gives a reason naming the env_file and why.
reason_names() {
	timeout "$(slow_s 3)" "$VIGILCTL" -s "$SOCK" status app 2>/dev/null |
		grep -q "reason: env_file $ENVF: $1"
}
# leaked: the secret is in a live job process's environment or in its log.
leaked() {
	local q
	for q in $(procs_with VIGIL_JOB=app); do
		grep -qzF "$SECRET" "/proc/$q/environ" 2>/dev/null && return 0
	done
	grep -qF "$SECRET" "$LOGS/app.log" 2>/dev/null
}
# restart_app: ask for a restart, bounded: the start itself may hang.
restart_app() { timeout "$(slow_s 5)" "$VIGILCTL" -s "$SOCK" restart app >/dev/null 2>&1 || true; }

# 1. A symbolic link to the root-only secret, put there by the job's user.
as_nobody rm "$ENVF"
as_nobody ln -s "$T/secret" "$ENVF"
restart_app
check "answers after a symlink env_file" retry 10 answers
check "start refused with the file named (symlink)" \
	retry 10 reason_names "is a symbolic link"
check "secret not in the job's environment or output" eval '! leaked'

# 2. A FIFO: opening it for reading would block until a writer comes.
as_nobody rm "$ENVF"
as_nobody mkfifo "$ENVF"
restart_app
check "answers after a FIFO env_file" retry 10 answers
check "start refused with the file named (FIFO)" \
	retry 10 reason_names "not a regular file"

# 3. A file over the 1 MiB cap.
as_nobody rm "$ENVF"
as_nobody sh -c "head -c 2000000 /dev/zero | tr '\\0' x >'$ENVF'"
restart_app
check "answers after a huge env_file" retry 10 answers
check "start refused with the file named (size)" \
	retry 10 reason_names "larger than"

# 4. The job's user swaps the env_file's directory for a link to a
# directory only root may enter, holding a root-only file of that name.
as_nobody mv "$SUB" "$ENVDIR/conf.real"
as_nobody ln -s "$VAULT" "$SUB"
restart_app
check "answers after a directory swapped for a link" retry 10 answers
check "start refused with the link named (directory swap)" \
	retry 10 reason_names "$SUB is a symbolic link, refused"
check "secret not leaked through the swapped directory" eval '! leaked'
as_nobody rm "$SUB"
as_nobody mv "$ENVDIR/conf.real" "$SUB"

# A regular file again: the job comes back, and has its environment.
as_nobody rm "$ENVF"
as_nobody sh -c "printf 'GREETING=again\n' >'$ENVF'"
# Bounded: an unfixed vigild never answers again.
app_running() {
	timeout "$(slow_s 3)" "$VIGILCTL" -s "$SOCK" status app 2>/dev/null |
		awk 'NR == 2 && $2 == "RUNNING" { ok = 1 } END { exit !ok }'
}
check "job runs again with a regular env_file" retry 10 app_running
p2=$(timeout "$(slow_s 3)" "$VIGILCTL" -s "$SOCK" pid app 2>/dev/null || true)
greeted() { grep -qzx GREETING=again "/proc/${p2:-0}/environ" 2>/dev/null; }
check "regular env_file applied" greeted
check "secret never leaked" eval '! leaked'
checks_passed
stop_vigild
log "ok"
