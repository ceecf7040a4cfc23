#!/bin/bash
# vigilctl import supervisord, run by root on a config a user could have
# shaped: a 0600 file of secrets (and an included 0640 one) must not
# become job files others may read; [program:.hidden] (a hidden job
# file) and [program:-x] (an option to vigilctl) are refused like other
# bad names, with file and line; an [include] glob matching a FIFO or a
# device skips it without reading it (reading a FIFO waited for ever).
. "$(dirname "$0")/lib.sh"

need_nobody
need_cmd mkfifo coreutils

SV=$T/sv
OUT=$T/imported
mkdir -p "$SV/conf.d" "$OUT"
chmod 0755 "$SV" "$SV/conf.d" "$OUT"
SECRET=vigil-secret-$$-$RANDOM
cat >"$SV/supervisord.conf" <<CONF
[program:app]
command=sleep 1000
environment=API_TOKEN="$SECRET"

[program:.hidden]
command=sleep 1000

[program:-x]
command=sleep 1000

[include]
files = conf.d/*
CONF
chmod 0600 "$SV/supervisord.conf"
printf '[program:extra]\ncommand=sleep 1000\nenvironment=T="%s"\n' \
	"$SECRET" >"$SV/conf.d/extra.conf"
chmod 0640 "$SV/conf.d/extra.conf"
chgrp "$(id -gn nobody)" "$SV/conf.d/extra.conf" # its group may read it
printf '[program:plain]\ncommand=sleep 1000\n' >"$SV/conf.d/plain.conf"
chmod 0644 "$SV/conf.d/plain.conf"

# imp ARGS...: vigilctl import supervisord, bounded (a FIFO could block it).
imp() {
	rc=0
	timeout "$(slow_s 20)" "$VIGILCTL" import supervisord "$@" \
		"$SV/supervisord.conf" >"$T/out" 2>"$T/err" || rc=$?
	cat "$T/out" "$T/err"
}

imp --jobs-dir "$OUT"
mode_of() { stat -c %a "$1" 2>/dev/null; }
check "app.conf written" test -f "$OUT/app.conf"
check "app.conf keeps the source's 0600" test "$(mode_of "$OUT/app.conf")" = 600
nobody_cannot_read() { ! as_nobody cat "$1" >/dev/null 2>&1; }
check "nobody cannot read the secret" nobody_cannot_read "$OUT/app.conf"
check "extra.conf at most 0640" test "$(mode_of "$OUT/extra.conf")" = 640
check "extra.conf keeps the source's group" \
	test "$(stat -c %G "$OUT/extra.conf")" = "$(id -gn nobody)"
check "plain.conf 0644 as before" test "$(mode_of "$OUT/plain.conf")" = 644
check "no hidden job file" test ! -e "$OUT/.hidden.conf"
check "no job file named like an option" test ! -e "$OUT/-x.conf"
check "the hidden name refused, with file and line" \
	grep -qF "$SV/supervisord.conf:5: : not translated ('.hidden' is not a vigil job name" "$T/err"
check "the dash name refused, with file and line" \
	grep -qF "$SV/supervisord.conf:8: : not translated ('-x' is not a vigil job name" "$T/err"

# A FIFO and a device matched by the [include] glob.
mkfifo "$SV/conf.d/pipe.conf"
ln -s /dev/zero "$SV/conf.d/zero.conf"
imp --dry-run
check "import ends (a FIFO include is not read)" test "$rc" -ne 124
check "the FIFO skipped, named" \
	grep -qF "$SV/conf.d/pipe.conf: skipped: not a regular file" "$T/err"
check "the device skipped, named" \
	grep -qF "$SV/conf.d/zero.conf: skipped: not a regular file" "$T/err"
checks_passed
log "ok"
