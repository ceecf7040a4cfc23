#!/bin/bash
# A periodic run's timeout counts from its exec, not from when vigild woke
# up to start it: many periodic jobs wait for one dependency, which becomes
# ready late; they all start in one go, the last ones well after the first,
# and each run, a bit shorter than timeout, must end normally.
. "$(dirname "$0")/lib.sh"
need_cmd systemd-notify systemd
need_cmd jq jq

N=50
job dep "command = {\"sh\", \"-c\", \"while [ ! -e $T/go ]; do sleep 0.02; done; systemd-notify --ready; exec sleep 1000\"}" \
	'ready = "notify"'
# A large environment makes each start take a few milliseconds.
head -c 900000 /dev/zero | tr '\0' x | fold -w 100 | sed 's/^/X_/; s/$/=1/' >"$T/env"
names=
for i in $(seq 1 $N); do
	job "p$i" 'kind = "periodic"' 'every = "1h"' 'timeout = "1s"' \
		'stop_timeout = "200ms"' 'command = "sleep 0.85"' \
		'depends = {"dep"}' "env_file = \"$T/env\""
	names="$names p$i"
done
start_vigild

# shellcheck disable=SC2086
ctl start --no-wait $names >/dev/null
waiting() { ctl status "p$N" | grep -q "waiting for dep"; }
retry 10 waiting || fail "p$N does not wait for dep: $(ctl status "p$N")"
touch "$T/go"

# ended JOB: the job's last run is over.
ended() { ctl --json history "$1" | jq -e '.runs | length > 0 and .[0].ended_us != null' >/dev/null; }
for i in $(seq 1 $N); do
	retry 20 ended "p$i" || fail "p$i's run did not end: $(ctl history "p$i")"
done
# No run was stopped before a whole timeout had passed since its exec (a
# busy machine, or vigild under valgrind, may make a run outlast it: then
# it is stopped, but never sooner).
normal=0
for i in $(seq 1 $N); do
	run=$(ctl --json history "p$i" | jq -c '.runs[0]')
	if jq -e '.reason == "exited 0" and .exit_code == 0' >/dev/null <<<"$run"; then
		normal=$((normal + 1))
		continue
	fi
	jq -e '.ended_us - .started_us >= 995000' >/dev/null <<<"$run" ||
		fail "p$i's run was stopped before its timeout: $(ctl history "p$i")"
done
log "$normal of $N runs ended normally, the others after their timeout"
stop_vigild
