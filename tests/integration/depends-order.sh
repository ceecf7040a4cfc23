#!/bin/bash
# A job that depends on a job whose name sorts after its own (vigild
# starts jobs in name order) starts once that dependency runs: the start
# it pulls up may be RUNNING at once, and must still wake the waiter.
# No other job here becomes RUNNING later to wake it by chance.
. "$(dirname "$0")/lib.sh"

job a_web 'command = "sleep 1000"' 'depends = {"z_db"}'
job z_db 'command = "sleep 1002"' 'min_uptime = "0s"'
start_vigild
wait_state z_db RUNNING
wait_state a_web RUNNING
stop_vigild
log "dependents of a job later in name order start"
