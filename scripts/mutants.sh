#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Mutation check (opt-in): disable one invariant or authority check at a
# time and see that the fast suites fail. Works on a copy of the committed
# tree (git archive HEAD), never on the checkout; builds it once, then for
# each mutation of scripts/mutants.txt: apply it (sed), rebuild, run the
# unit tests that own the checks and the CLI golden cases, restore.
# Prints a table (killed / SURVIVED / not applied) and exits 1 when a
# mutation survived or did not apply.
#
#   scripts/mutants.sh [LIST] [NAME...]     default LIST: scripts/mutants.txt
#   meson test -C build --suite slow mutants
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
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
# unit tests that own the checks, and the CLI cases of record, serve and
# recover (run.sh directly), so a mutant costs a relink, not a full build.
targets=(cli/docket tests/unit/test_ledger tests/unit/test_runtime tests/unit/test_event)
run_tests() {
	local t cases=()
	for t in test_ledger test_runtime test_event; do
		(cd "$build" && timeout 600 "tests/unit/$t") >>"$work/test.log" 2>&1 || { echo "$t FAIL" >>"$work/test.log"; return 1; }
	done
	for t in "$src"/tests/cli/cases/{record,serve,recover}-*.sh; do
		cases+=("$(basename "$t" .sh)")
	done
	DOCKET_SOURCE_ROOT="$src" timeout 900 bash "$src/tests/cli/run.sh" "$build/cli/docket" "$src" "${cases[@]}" \
		>>"$work/test.log" 2>&1
}
run_tests || { echo "mutants: the unmutated tree fails its tests"; grep -E "FAIL" "$work/test.log" | head; exit 2; }

printf '%-22s %-20s %s\n' MUTATION FILE RESULT
bad=0
while IFS='|' read -r name file script <&3; do
	name=$(echo "$name" | xargs)
	file=$(echo "$file" | xargs)
	script=$(echo "$script" | sed 's/^ *//')
	case $name in ''|'#'*) continue ;; esac
	if [ ${#only[@]} -gt 0 ] && [[ ! " ${only[*]} " =~ " $name " ]]; then
		continue
	fi
	cp "$src/$file" "$work/orig"
	sed -i -e "$script" "$src/$file"
	if cmp -s "$src/$file" "$work/orig"; then
		result="not applied"
		bad=1
	elif ! ninja -C "$build" -j2 "${targets[@]}" >"$work/build.log" 2>&1; then
		result="killed (does not build)"
	elif : >"$work/test.log" && run_tests; then
		result="SURVIVED"
		bad=1
	else
		result="killed by $( { grep -oE '^test_[a-z]+ FAIL' "$work/test.log" | awk '{print $1}'; grep -oE '^FAIL [a-z0-9-]+' "$work/test.log" | awk '{print $2}'; } | head -3 | paste -sd, -)"
	fi
	cp "$work/orig" "$src/$file"
	printf '%-22s %-20s %s\n' "$name" "$file" "$result"
done 3<"$list"   # fd 3: a test that reads stdin must not eat the list
exit $bad
