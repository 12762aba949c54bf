#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Mutation check (opt-in): disable one invariant or authority check at a
# time and see that the tests owning it fail. Works on a copy of the
# committed tree (git archive HEAD), never on the checkout; builds it once,
# runs every owning test once on the unmutated copy (each must pass: a test
# that fails or skips there cannot kill anything), then for each mutation of
# scripts/mutants.txt: apply it (sed), run its owning tests through
# `meson test` (which rebuilds what they depend on; the first failure stops
# the run), restore. A mutation's owning tests are its line's 4th column
# (`tests: NAME...`, meson test names or bash patterns of them), or, without
# one, its directory's default (default_tests below; scripts/mutants.txt's
# header lists them). Prints a table (killed by TEST / SURVIVED / does not
# build / not applied / no such file / no such test / sed failed) and exits 1
# unless every mutation was killed by a test: a mutation that names nothing,
# or a test name that names no test, is a failure, never a pass.
#
#   scripts/mutants.sh [LIST] [NAME...]     default LIST: scripts/mutants.txt
#   scripts/mutants.sh --applies [LIST]     every mutation applies (no build)
#   meson test -C build --suite slow mutants
set -uo pipefail
# the whole script is one block, read before it runs: a long run is not
# disturbed by an edit of this file meanwhile (bash reads a script as it goes)
{

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
only=()
# default_tests FILE: the tests that own a mutation of FILE when its line
# names none (bash patterns over meson test names)
default_tests() {
	case $1 in
	app/fleet/*) echo "fleet_ship fleet_central fleet_trust fleet_shards" ;;
	lib/policy/*) echo "test_policy* cli_policy-*" ;;
	lib/replay/*) echo "test_replay* cli_replay-*" ;;
	lib/exporters/*|lib/audit/*) echo "test_audit test_export test_receipt test_tlog cli_audit-* cli_export-* cli_report-*" ;;
	app/integrations/*) echo "test_integrations cli_hook-* cli_integrate-*" ;;
	app/cli/*) echo "test_cli cli_*" ;;
	*) echo "test_ledger test_runtime test_event test_integrations cli_record-* cli_serve-* cli_recover-*" ;;
	esac
}
# trim VAR: strip its value's leading and trailing blanks (no subshell)
trim() {
	local -n v=$1
	v=${v#"${v%%[![:space:]]*}"}
	v=${v%"${v##*[![:space:]]}"}
}
# mutations LIST: its mutations as NAME|FILE|TESTS|SCRIPT lines (TESTS: the
# owning test patterns, space-separated, the default filled in), trimmed,
# without comments and blank lines, only those named in `only` when it names
# any (the one reader of the list's format for every loop below). A line is
# NAME | FILE | SED [| tests: TEST...]: the sed script may itself hold `|`,
# so the optional 4th column is told by its `tests:` and holds no `|`.
mutations() {
	local name file script tests
	while IFS='|' read -r name file script; do
		trim name
		case $name in ''|'#'*) continue ;; esac
		trim file
		script=${script#"${script%%[! ]*}"}
		tests=
		if [[ $script =~ ^(.*[^\ ])\ *\|\ *tests:([^|]*)$ ]]; then
			script=${BASH_REMATCH[1]}
			tests=${BASH_REMATCH[2]}
			trim tests
		fi
		[ -n "$tests" ] || tests=$(default_tests "$file")
		if [ ${#only[@]} -gt 0 ] && [[ ! " ${only[*]} " =~ " $name " ]]; then
			continue
		fi
		printf '%s|%s|%s|%s\n' "$name" "$file" "$tests" "$script"
	done <"$1"
}
# test_names BUILD: every meson test of BUILD, one a line
test_names() {
	python3 -c 'import json,sys; [print(t["name"]) for t in json.load(open(sys.argv[1]))]' \
		"$1/meson-info/intro-tests.json"
}
# expand PATTERNS...: the meson test names (from $work/names) the patterns
# match, in order, each once; a pattern that matches none is printed to fd 4
expand() {
	local p n hit out=()
	for p in "$@"; do
		hit=0
		while read -r n; do
			# shellcheck disable=SC2053
			if [[ $n == $p ]]; then
				hit=1
				[[ " ${out[*]} " =~ " $n " ]] || out+=("$n")
			fi
		done <"$names"
		[ $hit -eq 1 ] || echo "$p" >&4
	done
	echo "${out[*]}"
}
# --applies [LIST]: only check that every mutation still names code (its file
# exists and its sed changes it), on the working tree, without building: the
# default suite runs this (test mutants_apply), so a move or an edit that
# strands a mutation fails at once rather than in the slow run. With
# MUTANTS_BUILD naming a configured build (meson sets it), every test a
# mutation names must exist too.
if [ "${1:-}" = "--applies" ]; then
	list=${2:-$root/scripts/mutants.txt}
	bad=0 n=0
	tmp=$(mktemp "${TMPDIR:-/tmp}/docket-mutant.XXXXXX")
	names=$tmp.names
	: >"$names"
	[ -f "${MUTANTS_BUILD:-/nonexistent}/meson-info/intro-tests.json" ] && test_names "$MUTANTS_BUILD" >"$names"
	while IFS='|' read -r name file tests script; do
		n=$((n + 1))
		if [ -s "$names" ]; then
			# shellcheck disable=SC2086
			missing=$( { expand $tests >/dev/null; } 4>&1)
			[ -z "$missing" ] || { echo "mutants: $name: no such test: $missing"; bad=1; }
		fi
		if [ ! -f "$root/$file" ]; then
			echo "mutants: $name: no such file $file"; bad=1; continue
		fi
		cp "$root/$file" "$tmp"
		if ! sed -i -e "$script" "$tmp" 2>/dev/null || cmp -s "$tmp" "$root/$file"; then
			echo "mutants: $name: the sed changes nothing in $file"; bad=1
		fi
	done < <(mutations "$list")
	rm -f "$tmp" "$names"
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
names="$work/names"
meson setup "$build" "$src" --werror >"$work/setup.log" 2>&1 || { cat "$work/setup.log"; exit 2; }
ninja -C "$build" -j2 >"$work/build.log" 2>&1 || { tail -30 "$work/build.log"; exit 2; }
test_names "$build" >"$names"
# a cmocka test binary stops at its first failing test (a kill needs one)
export CMOCKA_TEST_ABORT=1
# run_tests TEST...: meson test over them (rebuilding only what they need);
# prints the tests that failed, or "SKIP NAME" for one that did not run;
# returns 3 when the rebuild failed
run_tests() {
	local log="$build/meson-logs/mutant.json"
	rm -f "$log"
	meson test -C "$build" --maxfail 1 --timeout-multiplier "${MUTANTS_TIMEOUT_MULTIPLIER:-3}" \
		--logbase mutant --print-errorlogs "$@" >"$work/test.log" 2>&1
	if grep -q "Could not rebuild" "$work/test.log" || [ ! -f "$log" ]; then
		return 3
	fi
	python3 - "$log" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["result"] in ("FAIL", "TIMEOUT", "ERROR", "UNEXPECTEDPASS"):
        print(r["name"].split(" / ")[-1])
    elif r["result"] == "SKIP":
        print("SKIP " + r["name"].split(" / ")[-1])
PY
}

# the selected mutations' owning tests, expanded; all of them must pass on
# the unmutated tree
all=()
while IFS='|' read -r name file tests script; do
	# shellcheck disable=SC2086
	missing=$( { expand $tests >/dev/null; } 4>&1)
	[ -z "$missing" ] || { echo "mutants: $name: no such test: $missing"; exit 2; }
	# shellcheck disable=SC2086
	all+=($(expand $tests 4>/dev/null))
done < <(mutations "$list")
# shellcheck disable=SC2207
all=($(printf '%s\n' "${all[@]}" | sort -u))
failed=$(run_tests "${all[@]}")
rc=$?
if [ $rc -ne 0 ] || [ -n "$failed" ]; then
	echo "mutants: the unmutated tree fails its tests (rc $rc): $failed"
	tail -40 "$work/test.log"
	exit 2
fi

printf '%-24s %-28s %s\n' MUTATION FILE RESULT
bad=0
while IFS='|' read -r name file tests script <&3; do
	if [ ! -f "$src/$file" ]; then
		printf '%-24s %-28s %s\n' "$name" "$file" "no such file"
		bad=1
		continue
	fi
	cp "$src/$file" "$work/orig"
	# shellcheck disable=SC2086
	run=$(expand $tests 4>/dev/null)
	if ! sed -i -e "$script" "$src/$file" 2>"$work/sed.log"; then
		result="sed failed: $(head -1 "$work/sed.log")"
		bad=1
	elif cmp -s "$src/$file" "$work/orig"; then
		result="not applied"
		bad=1
	else
		# shellcheck disable=SC2086
		failed=$(run_tests $run)
		rc=$?
		killers=$(echo "$failed" | grep -v '^SKIP ' | paste -sd, -)
		if [ $rc -eq 3 ]; then
			result="does not build"
			bad=1
		elif [ -n "$killers" ]; then
			result="killed by $killers"
		else
			result="SURVIVED ($run)"
			bad=1
		fi
	fi
	cp "$work/orig" "$src/$file"
	printf '%-24s %-28s %s\n' "$name" "$file" "$result"
done 3< <(mutations "$list")   # fd 3: a test that reads stdin must not eat the list
exit $bad
}
