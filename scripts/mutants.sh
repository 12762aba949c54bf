#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Mutation check (opt-in): disable one invariant or authority check at a
# time and see that the fast suites fail. Works on a copy of the committed
# tree (git archive HEAD), never on the checkout; builds it once, then for
# each mutation of scripts/mutants.txt: apply it (sed), rebuild, run the
# tests that own the checks, restore: for a mutation in app/fleet/ the fleet
# suite (tests/fleet/run.sh, every case, on a real PostgreSQL server), for
# one named durable-* the power-cut window torture (serve's acknowledgement
# after durability: no unit test can see a sync), for any other the unit
# tests and the CLI golden cases. Prints a table
# (killed / SURVIVED / not applied / no such file / sed failed) and exits 1
# when a mutation survived or could not be applied (its file is gone, or its
# sed changed nothing: a mutation that names nothing is a failure, never a
# pass).
#
#   scripts/mutants.sh [LIST] [NAME...]     default LIST: scripts/mutants.txt
#   meson test -C build --suite slow mutants
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
only=()
# mutations LIST: its mutations as NAME|FILE|SCRIPT lines, trimmed, without
# comments and blank lines, only those named in `only` when it names any (the
# one reader of the list's format for every loop below)
mutations() {
	local name file script
	while IFS='|' read -r name file script; do
		name=$(echo "$name" | xargs)
		file=$(echo "$file" | xargs)
		script=$(echo "$script" | sed 's/^ *//')
		case $name in ''|'#'*) continue ;; esac
		if [ ${#only[@]} -gt 0 ] && [[ ! " ${only[*]} " =~ " $name " ]]; then
			continue
		fi
		printf '%s|%s|%s\n' "$name" "$file" "$script"
	done <"$1"
}
# --applies [LIST]: only check that every mutation still names code (its file
# exists and its sed changes it), on the working tree, without building: the
# default suite runs this (test mutants_apply), so a move or an edit that
# strands a mutation fails at once rather than in the slow run.
if [ "${1:-}" = "--applies" ]; then
	list=${2:-$root/scripts/mutants.txt}
	bad=0 n=0
	tmp=$(mktemp "${TMPDIR:-/tmp}/docket-mutant.XXXXXX")
	while IFS='|' read -r name file script; do
		n=$((n + 1))
		if [ ! -f "$root/$file" ]; then
			echo "mutants: $name: no such file $file"; bad=1; continue
		fi
		cp "$root/$file" "$tmp"
		if ! sed -i -e "$script" "$tmp" 2>/dev/null || cmp -s "$tmp" "$root/$file"; then
			echo "mutants: $name: the sed changes nothing in $file"; bad=1
		fi
	done < <(mutations "$list")
	rm -f "$tmp"
	[ $bad -eq 0 ] && echo "mutants: all $n mutations apply"
	exit $bad
fi
list=${1:-$root/scripts/mutants.txt}
[ $# -gt 0 ] && shift
only=("$@")
work=$(mktemp -d "${TMPDIR:-/tmp}/docket-mutants.XXXXXX")
trap 'rm -rf "$work"' EXIT
# the shared corpus sits beside the tree: keep it reachable from the copy
src="$work/tree"
mkdir -p "$src"
(cd "$root" && git archive HEAD) | tar -x -C "$src" || { echo "mutants: cannot copy the tree"; exit 2; }
[ -d "$root/../shared" ] && ln -s "$root/../shared" "$work/shared"
build="$src/build"
meson setup "$build" "$src" --werror >"$work/setup.log" 2>&1 || { cat "$work/setup.log"; exit 2; }
ninja -C "$build" -j2 >"$work/build.log" 2>&1 || { tail -30 "$work/build.log"; exit 2; }
# Only what a mutant can change is rebuilt and run: the docket binary, the
# unit tests that own the checks (the hooks' among them: recover plans their
# calls), and the CLI cases of record, serve and
# recover (run.sh directly), so a mutant costs a relink, not a full build.
targets=(app/cli/docket tests/unit/test_ledger tests/unit/test_runtime tests/unit/test_event tests/unit/test_integrations
	tests/sim/torture tests/sim/sim_runtime tests/sim/pwrcut.so)
run_core_tests() {
	local t cases=()
	for t in test_ledger test_runtime test_event test_integrations; do
		(cd "$build" && timeout 600 "tests/unit/$t") >>"$work/test.log" 2>&1 || { echo "$t FAIL" >>"$work/test.log"; return 1; }
	done
	for t in "$src"/tests/cli/cases/{record,serve,recover}-*.sh; do
		cases+=("$(basename "$t" .sh)")
	done
	DOCKET_SOURCE_ROOT="$src" timeout 900 bash "$src/tests/cli/run.sh" "$build/app/cli/docket" "$src" "${cases[@]}" \
		>>"$work/test.log" 2>&1
}
# every case of the fleet suite (a skip, no PostgreSQL, counts as a failure:
# a mutant no test ran is not killed)
run_fleet_tests() {
	local cases
	cases=$(sed -n 's/^case_\([a-z0-9_]*\)() {$/\1/p' "$src/tests/fleet/cases.sh")
	# shellcheck disable=SC2086
	DOCKET_PG_TEMPLATE="$work/pg-template" timeout 1800 bash "$src/tests/fleet/run.sh" "$build/app/cli/docket" "$src" \
		$cases >>"$work/test.log" 2>&1 || { echo "fleet FAIL" >>"$work/test.log"; return 1; }
}
# power cuts before syncs, a second client (tests/sim/meson.build, torture_power_window)
run_window_torture() {
	(cd "$build" && timeout 900 tests/sim/torture --power tests/sim/pwrcut.so --window app/cli/docket \
		tests/sim/sim_runtime 100) >>"$work/test.log" 2>&1 || { echo "torture_power_window FAIL" >>"$work/test.log"; return 1; }
}
# the suite that owns a mutation NAME of FILE: "window", or FILE
suite_of() {
	case $1 in durable-*) echo window ;; *) echo "$2" ;; esac
}
# the tests that own FILE's checks (or those of the suite "window")
run_tests() {
	case $1 in
	window) run_window_torture ;;
	app/fleet/*) run_fleet_tests ;;
	*) run_core_tests ;;
	esac
}
# the selected mutations, and which suites they need
declare -A need=()
while IFS='|' read -r name file script; do
	case $(suite_of "$name" "$file") in window) need[window]=1 ;; app/fleet/*) need[app/fleet/]=1 ;; *) need[core]=1 ;; esac
done < <(mutations "$list")
for suite in "${!need[@]}"; do
	run_tests "$suite" || { echo "mutants: the unmutated tree fails its tests ($suite)"; grep -E "FAIL" "$work/test.log" | head; exit 2; }
done

printf '%-22s %-20s %s\n' MUTATION FILE RESULT
bad=0
while IFS='|' read -r name file script <&3; do
	if [ ! -f "$src/$file" ]; then
		printf '%-22s %-20s %s\n' "$name" "$file" "no such file"
		bad=1
		continue
	fi
	cp "$src/$file" "$work/orig"
	if ! sed -i -e "$script" "$src/$file" 2>"$work/sed.log"; then
		result="sed failed: $(head -1 "$work/sed.log")"
		bad=1
	elif cmp -s "$src/$file" "$work/orig"; then
		result="not applied"
		bad=1
	elif ! ninja -C "$build" -j2 "${targets[@]}" >"$work/build.log" 2>&1; then
		result="killed (does not build)"
	elif : >"$work/test.log" && run_tests "$(suite_of "$name" "$file")"; then
		result="SURVIVED"
		bad=1
	else
		result="killed by $( { grep -oE '^(test_[a-z]+|torture_power_window) FAIL' "$work/test.log" | awk '{print $1}'; grep -oE '^FAIL [a-z0-9-]+' "$work/test.log" | awk '{print $2}'; grep -oE '^case [a-z0-9_]+: exit' "$work/test.log" | awk '{print $2}' | tr -d :; } | head -3 | paste -sd, -)"
	fi
	cp "$work/orig" "$src/$file"
	printf '%-22s %-20s %s\n' "$name" "$file" "$result"
done 3< <(mutations "$list")   # fd 3: a test that reads stdin must not eat the list
exit $bad
