#!/bin/bash
# The cluster section's conninfo, checked by vigild -t as vigild's start
# checks it (libpq's parser): a conninfo libpq refuses fails -t, naming
# the file, the line and the option, as the start does; a password in a
# conninfo of a vigil.conf that others may read is a warning naming file
# and line (-t and at start), none at mode 0600.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg-lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
cluster_need

d=$T/conf
mkdir -p "$d/jobs.d"
# conf CONNINFO [WORK]: $d/vigil.conf with a cluster section.
conf() {
	{
		echo "# vigil.conf"
		echo "cluster {"
		echo "  node_name = \"n1\""
		echo "  conninfo = \"$1\""
		[ -z "${2:-}" ] || echo "  work_conninfo = \"$2\""
		echo "}"
	} >"$d/vigil.conf"
}
# vt: vigild -t on it; its output in $d/out, its status in rc.
vt() {
	rc=0
	"$VIGILD" -t -c "$d/vigil.conf" -j "$d/jobs.d" >"$d/out" 2>&1 || rc=$?
}

conf "dbname=vigil nosuchoption=1"
vt
check "-t refuses an option libpq does not know (exit $rc: $(cat "$d/out"))" \
	[ "$rc" = 1 ]
check "  naming file, line and option" \
	grep -q "^$d/vigil.conf:4: cluster: conninfo: .*nosuchoption" "$d/out"
conf "dbname=vigil" "dbname=vigil user"
vt
check "-t refuses a work_conninfo libpq cannot parse (exit $rc: $(cat "$d/out"))" \
	[ "$rc" = 1 ]
check "  naming its line" grep -q "^$d/vigil.conf:5: cluster: work_conninfo: " "$d/out"
conf "postgresql://vigil@db1,db2/vigil?nosuchoption=1"
vt
check "-t refuses a URI with an unknown option (exit $rc)" [ "$rc" = 1 ]

# The start refuses the same conninfo, with the same words.
conf "dbname=vigil nosuchoption=1"
vt
rc=0
timeout "$(slow_s 20)" "$VIGILD" -c "$d/vigil.conf" -j "$d/jobs.d" --runtime-dir "$d/run" \
	--state-dir "$d/state" --log-dir "$d/log" >"$d/start" 2>&1 || rc=$?
check "the start refuses it too (exit $rc: $(cat "$d/start"))" [ "$rc" != 0 ]
check "  with the same message" grep -qF "$(cat "$d/out")" "$d/start"
check "  before it made any directory" [ ! -e "$d/state" ]

# A password in a readable vigil.conf: warned, file and line.
conf "dbname=vigil user=n1 password=s3cret"
chmod 0644 "$d/vigil.conf"
vt
check "-t accepts a password (exit $rc: $(cat "$d/out"))" [ "$rc" = 0 ]
check "  with a warning naming file and line" \
	grep -q "^vigild: warning: $d/vigil.conf:4: cluster: conninfo holds a password and $d/vigil.conf may be read by others" "$d/out"
check "  pointing at passfile and PGPASSFILE" grep -q "passfile=.*PGPASSFILE" "$d/out"
conf "dbname=vigil" "postgresql://n1:s3cret@localhost/vigil"
chmod 0640 "$d/vigil.conf"
vt
check "-t warns of a password in a work_conninfo URI, mode 0640" \
	grep -q "vigil.conf:5: cluster: work_conninfo holds a password" "$d/out"
conf "dbname=vigil user=n1 password=s3cret"
chmod 0600 "$d/vigil.conf"
vt
quiet() { [ "$rc" = 0 ] && ! grep -q password "$d/out"; }
check "no warning at mode 0600 (exit $rc: $(cat "$d/out"))" quiet
checks_passed

# And at start (node 1's vigil.conf as written, mode 0644 under umask 022).
umask 022
NODE_CONNINFO[1]="host=$T/nosuchdir dbname=vigil user=n1 password=s3cret"
node_start 1
check "the start warns of the password, file and line" \
	grep -q "^vigild: warning: $T/n1/vigil.conf:2: cluster: conninfo holds a password" "$(node_log 1)"
node_stop 1
checks_passed
log "ok"
