#!/bin/bash
# shellcheck disable=SC2317 # predicates called through retry
# A message deleted (vigilctl delete) while it runs: the run goes on, and
# when it fails vigild says the message was deleted and its outcome
# dropped, with no "retrying" for a message that no longer exists, and no
# second run.
. "$(dirname "$0")/lib.sh"

cat >"$T/gate.sh" <<EOF
#!/bin/sh
echo "\$VIGIL_MESSAGE_ID" >>"$T/runs"
while [ ! -e "$T/go" ]; do sleep 0.02; done
exit 3
EOF
chmod +x "$T/gate.sh"
job q 'kind = "queue"' "command = \"$T/gate.sh\"" 'max_attempts = 3' \
	'retry_delay = "100ms"'
start_vigild
id=$(ctl enqueue q m) || fail "enqueue"
runs() { [ -s "$T/runs" ]; }
retry 10 runs || fail "the message did not start"
ctl delete "$id" || fail "delete of the running message"
: >"$T/go"
said() {
	grep -qF "q: message $id was deleted while it ran; its outcome is dropped" "$VLOG"
}
retry 10 said || fail "no word of the deleted message: $(tail -n 5 "$VLOG")"
! grep -q "message $id .*retrying" "$VLOG" || fail "vigild retries a deleted message"
# A retry would come after 100 ms: wait for a later message instead.
id2=$(ctl enqueue q m2) || fail "enqueue 2"
second() { grep -qx "$id2" "$T/runs"; }
retry 10 second || fail "the next message did not run"
[ "$(grep -cx "$id" "$T/runs")" -eq 1 ] || fail "the deleted message ran again"
stop_vigild
