#!/bin/bash
# The bash completion in contrib/completion/vigilctl offers, for the
# command position, exactly the command names and aliases that
# `vigilctl list-commands` prints, and vigilctl's own import (with files
# after "supervisord"); it also completes job names from the
# vigild given with -s (only queue jobs for the queue verbs; several
# targets for pid), every state for wait --state (WAITING too), and the
# options of a few commands.
. "$(dirname "$0")/lib.sh"

: "${TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
COMPLETION=$TOP_SRCDIR/contrib/completion/vigilctl
[ -f "$COMPLETION" ] || fail "no $COMPLETION"
# shellcheck source=../../contrib/completion/vigilctl
. "$COMPLETION"

# complete_words WORD...: what the completion offers for the last WORD of
# "vigilctl WORD...", sorted, one a line.
complete_words() {
	COMP_WORDS=("$VIGILCTL" "$@")
	COMP_CWORD=$#
	COMP_LINE="${COMP_WORDS[*]}"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	# Job names must come from the vigild that -s names, not the env.
	VIGIL_SOCKET='' _vigilctl vigilctl "${COMP_WORDS[COMP_CWORD]}" \
		"${COMP_WORDS[COMP_CWORD - 1]}"
	[ "${#COMPREPLY[@]}" -eq 0 ] || printf '%s\n' "${COMPREPLY[@]}" |
		LC_ALL=C sort -u
}

# offers WORD WORD...: the completion of "vigilctl WORD..." includes WORD.
offers() {
	local want=$1
	shift
	complete_words "$@" | grep -qxF -- "$want" ||
		fail "vigilctl $* <TAB>: no $want in: $(complete_words "$@" | tr '\n' ' ')"
}

job web 'command = "sleep 1000"'
job q 'kind = "queue"' 'command = "cat"' 'autostart = false'
start_vigild
wait_state web RUNNING

# Names and aliases: "name (alias) usage" or "name usage".
ctl list-commands >"$T/list" || fail "list-commands failed"
{
	awk '{ print $1 } $2 ~ /^\(.*\)$/ { gsub(/[()]/, "", $2); print $2 }' "$T/list"
	echo import
} | LC_ALL=C sort -u >"$T/vigild.words"
[ -s "$T/vigild.words" ] || fail "list-commands printed nothing"
complete_words "" >"$T/completion.words"
if ! cmp -s "$T/vigild.words" "$T/completion.words"; then
	only_d=$(comm -23 "$T/vigild.words" "$T/completion.words" | tr '\n' ' ')
	only_c=$(comm -13 "$T/vigild.words" "$T/completion.words" | tr '\n' ' ')
	fail "command words differ: only in vigild: ${only_d:-none}; only in the completion: ${only_c:-none}"
fi
log "$(wc -l <"$T/completion.words") command words match"

# Prefixes, global options, and the rest of the command line.
[ "$(complete_words st | tr '\n' ' ')" = "st start status stop " ] ||
	fail "st<TAB>: $(complete_words st | tr '\n' ' ')"
offers --socket --s
offers --json --
offers web -s "$SOCK" status ""
offers web -s "$SOCK" --json st w
offers web --socket="$SOCK" restart --no-wait ""
offers all -s "$SOCK" stop ""
offers --no-wait -s "$SOCK" start -
offers --dry-run reload -
# Every option of every command, as the table has it (vigilctl --help).
"$VIGILCTL" --help | awk '/^  [a-z]/ { c = $1 } /^      options:/ {
	for (i = 2; i <= NF; i++) print c, $i }' >"$T/options"
[ -s "$T/options" ] || fail "vigilctl --help lists no options"
while read -r c o; do
	offers "$o" "$c" -
done <"$T/options"
offers --timeout wait -
offers RUNNING wait --state R
offers WAITING wait --state W
offers TERM signal ""
offers SIGHUP kill SIGH
offers web -s "$SOCK" signal TERM ""
offers --delay enqueue -
offers --direct enqueue --priority 3 -
offers q -s "$SOCK" enqueue --delay 1h ""
# not_offered WORD WORD...: the completion of "vigilctl WORD..." lacks WORD.
not_offered() {
	local bad=$1
	shift
	! complete_words "$@" | grep -qxF -- "$bad" ||
		fail "vigilctl $* <TAB>: offers $bad: $(complete_words "$@" | tr '\n' ' ')"
}
for verb in enqueue queue purge kick; do
	not_offered web -s "$SOCK" "$verb" ""
	offers q -s "$SOCK" "$verb" ""
done
offers q -s "$SOCK" pid web ""
offers all -s "$SOCK" pid ""
[ -z "$(complete_words -s "$SOCK" enqueue -u key q "")" ] ||
	fail "enqueue: completion after the job"
offers --dead queue -
offers --dead purge -
offers --state-dir --st
offers q -s "$SOCK" --state-dir /tmp queue ""
offers --timeout --ti
[ -z "$(complete_words --timeout "")" ] || fail "--timeout takes a duration"
offers web -s "$SOCK" --timeout 5s status ""
[ -z "$(complete_words -s "$SOCK" ping "")" ] || fail "ping takes no arguments"
# import supervisord [--jobs-dir DIR] FILE...: files after the word.
offers supervisord import ""
offers --dry-run import supervisord -
: >"$T/sv-import-probe.conf"
offers "$T/sv-import-probe.conf" import supervisord "$T/sv-import-p"
offers "$T/sv-import-probe.conf" import supervisord --jobs-dir "$T" "$T/sv-import-p"
[ "$(complete_words import supervisord --jobs-dir "$T/sv-import-p")" = "" ] ||
	fail "--jobs-dir offers files"
stop_vigild
log "ok"
