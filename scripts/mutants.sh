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
# (meson ANDs test names with --suite: two runs)
run_tests() {
	timeout 1200 meson test -C "$build" --no-rebuild --num-processes 2 test_ledger test_runtime test_event \
		>"$work/test.log" 2>&1 &&
	timeout 1200 meson test -C "$build" --no-rebuild --num-processes 2 --suite cli >>"$work/test.log" 2>&1
}
run_tests || { echo "mutants: the unmutated tree fails its tests"; grep -E "FAIL" "$work/test.log" | head; exit 2; }

printf '%-22s %-20s %s\n' MUTATION FILE RESULT
bad=0
while IFS='|' read -r name file script; do
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
	elif ! ninja -C "$build" -j2 >"$work/build.log" 2>&1; then
		result="killed (does not build)"
	elif run_tests; then
		result="SURVIVED"
		bad=1
	else
		result="killed by $(grep -oE '(test_[a-z_]+|cli_[a-z0-9-]+) +FAIL' "$work/test.log" | awk '{print $1}' | head -3 | paste -sd, -)"
	fi
	cp "$work/orig" "$src/$file"
	printf '%-22s %-20s %s\n' "$name" "$file" "$result"
done <"$list"
ninja -C "$build" -j2 >/dev/null 2>&1
exit $bad
