#!/bin/bash
# vigilctl metrics (issue 23): OpenMetrics text that prometheus_client's
# parser reads; states and restarts as status shows them; runs and
# messages counted by outcome; queue depths; counters that do not go down
# when a reload replaces a job.
. "$(dirname "$0")/lib.sh"

/usr/bin/python3 -c 'import prometheus_client' 2>/dev/null ||
	skip_fixable "python3-prometheus-client not installed (contrib/install-deps.sh --test)"

job web 'command = "sleep 100000"' 'instances = 2'
job crash 'command = "false"' 'restart_delay = "20ms"' 'restart_delay_max = "20ms"' \
	'max_restarts = 3'
job q 'kind = "queue"' 'command = "sh -c \"cat >/dev/null\""'
job held 'kind = "queue"' 'command = "cat"' 'autostart = false'
start_vigild

# scrape: the samples, one "NAME LABEL=VALUE... VALUE" line each, sorted
# labels, as the real OpenMetrics parser reads them (it fails on bad text).
scrape() {
	ctl metrics >"$T/metrics.txt" || fail "vigilctl metrics"
	/usr/bin/python3 - "$T/metrics.txt" <<'EOF'
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
for f in text_string_to_metric_families(open(sys.argv[1]).read()):
    for s in f.samples:
        labels = " ".join("%s=%s" % kv for kv in sorted(s.labels.items()))
        print(s.name, labels, repr(float(s.value)))
EOF
}
# value NAME LABELS: one sample's value ("LABELS" sorted, space-separated).
value() { scrape | awk -v n="$1" -v l="$2" '
	{ v = $NF; $NF = ""; sub(/ $/, ""); }
	$0 == n " " l { print v + 0; found = 1 }
	END { exit !found }'; }

wait_state web@1 RUNNING
wait_state crash FATAL
scrape >"$T/samples" || fail "the parser refused: $(cat "$T/metrics.txt")"
check "the text ends in # EOF" test "$(tail -n 1 "$T/metrics.txt")" = "# EOF"
check "build info" grep -q "^vigil_build_info version=" "$T/samples"
# States and restarts, as status has them.
for i in web@0 web@1 crash q held; do
	name=${i%@*} idx=0
	[ "$name" = "$i" ] || idx=${i#*@}
	st=$(ctl --json status "$i" | jq -r '.jobs[0].state')
	rs=$(ctl --json status "$i" | jq -r '.jobs[0].restarts')
	check "$i: state $st is 1" grep -qx "vigil_job_state instance=$idx job=$name state=$st 1.0" "$T/samples"
	check "$i: one state only" test "$(grep -c "^vigil_job_state instance=$idx job=$name .* 1.0$" "$T/samples")" -eq 1
	check "$i: restarts $rs" grep -qx "vigil_job_restarts_total instance=$idx job=$name $rs.0" "$T/samples"
done
check "crash: 4 failed runs" grep -qx "vigil_job_runs_total job=crash outcome=failure 4.0" "$T/samples"
check "web runs" grep -q "^vigil_job_uptime_seconds instance=1 job=web [0-9.]*$" "$T/samples"
up=$(awk '/^vigil_job_uptime_seconds instance=0 job=web / { print $NF }' "$T/samples")
check "web's uptime is counted ($up)" awk -v u="$up" 'BEGIN { exit !(u > 0) }'

# Queues: three messages done; two waiting in a queue that does not run.
for m in a b c; do ctl enqueue q "$m" >/dev/null || fail "enqueue"; done
ctl enqueue held x >/dev/null && ctl enqueue held y >/dev/null || fail "enqueue held"
done3() { [ "$(value vigil_queue_processed_total "job=q outcome=done")" = 3 ]; }
check "q: 3 done" retry 10 done3
check "held: 2 available" test "$(value vigil_queue_messages "job=held state=available")" = 2
check "held: none dead" test "$(value vigil_queue_messages "job=held state=dead")" = 0

# A reload that replaces crash keeps its counters: the new instance's
# four failed runs and three restarts add to the old one's.
printf 'log_keep = 2\n' >>"$JOBS/crash.conf"
ctl reload >/dev/null || fail "reload"
eight() { [ "$(value vigil_job_runs_total "job=crash outcome=failure")" = 8 ]; }
check "runs add up across the reload" retry 10 eight
wait_state crash FATAL
check "the new instance counts from 0" test "$(ctl --json status crash | jq -r '.jobs[0].restarts')" = 3
check "restarts add up across the reload" test "$(value vigil_job_restarts_total "instance=0 job=crash")" = 6

stop_vigild
checks_passed
log "vigilctl metrics: parsed, true to status, monotonic"
