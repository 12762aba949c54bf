#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# pair34.sh OLD_BUILD NEW_BUILD WORKDIR [STEP...]: issue 34's table, two
# builds side by side on one machine (docs/performance.md "Issue 34 on a
# quiet machine"). Each figure comes from the repo's benches, each beside its
# own baseline in the same run (SQLite, raw LMDB, the no-storage echo), and
# the two builds alternate round by round. OLD_BUILD and NEW_BUILD are meson
# build directories of any two commits (the docket binary is found at
# app/cli/docket, or cli/docket before the house move); each build's own
# bench binaries drive its own docket where the bench links the library
# (bench_append, bench_replay, bench_verify), because a ledger of one format
# version may not open in the other. Steps (all by default):
#
#   ledger  a ledger of 1M tool intents (bench_replay's generator, written by
#           OLD: WORKDIR/L_old), and the same migrated by NEW (WORKDIR/L_new)
#   read    replay (1 and 2 threads), export and verify, 3 alternated rounds
#           each on its build's ledger; verify and export of both binaries
#           on L_old (bench_verify --before, the same bytes)
#   record  bench_format2 NEW --before OLD (3 rounds: record against SQLite)
#   serve   bench_serve of each (serve and echo), 3 alternated rounds
#   append  bench_append of each (2,000 one-event commits, 4 stores), 2 rounds
#
# Output: WORKDIR/out/STEP_*.txt, and an index with the load average at each
# run. Nothing is asserted: the figures are read off the outputs (the
# machine must be quiet; compare the ratios).
set -uo pipefail
[ $# -ge 3 ] || { echo "usage: pair34.sh OLD_BUILD NEW_BUILD WORKDIR [ledger|read|record|serve|append]..." >&2; exit 2; }
old=$(cd "$1" && pwd) new=$(cd "$2" && pwd) w=$3
shift 3
steps=${*:-ledger read record serve append}
mkdir -p "$w/out" || exit 1
w=$(cd "$w" && pwd)
out=$w/out

docket_of() {
	local b
	for b in "$1/app/cli/docket" "$1/cli/docket"; do
		[ -x "$b" ] && { echo "$b"; return 0; }
	done
	echo "pair34.sh: no docket binary in $1" >&2
	exit 1
}
dold=$(docket_of "$old") dnew=$(docket_of "$new")
log() { echo "$(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg): $*" | tee -a "$out/index"; }
run() {  # NAME COMMAND...: the command's output in out/NAME.txt
	local name=$1
	shift
	log "$name"
	"$@" >"$out/$name.txt" 2>&1 || echo "  exit $? (see $out/$name.txt)" | tee -a "$out/index"
}

for step in $steps; do
	case $step in
	ledger)
		rm -rf "$w/L_old" "$w/L_new" "$w/L_old.intents" "$w/L_new.intents"
		run ledger_old "$old/tests/bench/bench_replay" "$dold" --intents 1000000 --keep "$w/L_old" --rounds 1
		cp -a "$w/L_old" "$w/L_new" && cp "$w/L_old.intents" "$w/L_new.intents"
		run ledger_migrate "$dnew" -L "$w/L_new" migrate
		;;
	read)
		for r in 1 2 3; do
			run "replay_old_$r" "$old/tests/bench/bench_replay" "$dold" --ledger "$w/L_old" --rounds 1
			run "replay_new_$r" "$new/tests/bench/bench_replay" "$dnew" --ledger "$w/L_new" --rounds 1
		done
		run verify_both_on_old "$new/tests/bench/bench_verify" "$dnew" --before "$dold" --ledger "$w/L_old" --rounds 2
		;;
	record)
		run record "$new/tests/bench/bench_format2" "$dnew" --before "$dold" --rounds 3 --dir "$w"
		;;
	serve)
		for r in 1 2 3; do
			run "serve_old_$r" "$old/tests/bench/bench_serve" "$dold" --seconds 5 --only serve --rounds 1 --dir "$w"
			run "echo_old_$r" "$old/tests/bench/bench_serve" "$dold" --seconds 5 --only echo --rounds 1 --dir "$w"
			run "serve_new_$r" "$new/tests/bench/bench_serve" "$dnew" --seconds 5 --only serve,echo --rounds 1 --dir "$w"
		done
		;;
	append)
		for r in 1 2; do
			run "append_old_$r" "$old/tests/bench/bench_append" --rounds 4 --events 3000 --events-1 2000 --events-16 320 --dir "$w"
			run "append_new_$r" "$new/tests/bench/bench_append" --rounds 4 --events 3000 --events-1 2000 --events-16 320 --dir "$w"
		done
		;;
	*)
		echo "pair34.sh: unknown step $step" >&2
		exit 2
		;;
	esac
done
log "done: $steps"
