#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# CLI golden tests (zstd tests/cli-tests style).
#
#   run.sh [--update] [--verbose] DOCKET_BIN SOURCE_ROOT [CASE...]
#
# A case is cases/NAME.sh, a bash script run in a fresh empty directory with
#   docket        on PATH (the binary under test)
#   DOCKET_LEDGER=ledger (relative: messages stay the same on every machine)
#   FIXTURES      the source tree's fixtures/ directory
#   NO_COLOR=1, LC_ALL=C, TZ=UTC
# and the helpers of lib.sh (seed, mask_hashes, flip_bytes, wait_for).
# Its expectations sit beside it:
#   NAME.stdout       stdout, exactly
#   NAME.stdout.glob  stdout as a bash pattern (* ? [..]), for numbers that may move
#   NAME.exit         the exit status (absent: 0)
#   NAME.stderr       lines that must each appear in stderr (absent with exit 0:
#                     stderr must be empty)
# --update rewrites NAME.stdout (unless a .glob exists) and NAME.exit from what
# the command did; review the diff before committing it.
set -u

update=0
verbose=0
while [ $# -gt 0 ]; do
	case "$1" in
	--update) update=1; shift ;;
	--verbose|-v) verbose=1; shift ;;
	*) break ;;
	esac
done
if [ $# -lt 2 ]; then
	echo "usage: $0 [--update] [--verbose] DOCKET_BIN SOURCE_ROOT [CASE...]" >&2
	exit 2
fi

docket_bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src_root=$(cd "$2" && pwd)
shift 2
here="$src_root/tests/cli"
cases_dir="$here/cases"

if [ ! -x "$docket_bin" ]; then
	echo "run.sh: no docket binary at $docket_bin" >&2
	exit 2
fi

if [ $# -eq 0 ]; then
	set --
	for f in "$cases_dir"/*.sh; do
		n=$(basename "$f" .sh)
		set -- "$@" "$n"
	done
fi

work_root=$(mktemp -d "${TMPDIR:-/tmp}/docket-cli.XXXXXX")
trap 'rm -rf "$work_root"' EXIT
mkdir -p "$work_root/bin"
ln -s "$docket_bin" "$work_root/bin/docket"

passed=0
failed=0
failed_names=""

run_case() {
	local name=$1
	local script="$cases_dir/$name.sh"
	local dir="$work_root/case-$name"
	local out="$work_root/$name.out" err="$work_root/$name.err"
	local want_exit=0 rc ok=1 why=""

	if [ ! -f "$script" ]; then
		echo "FAIL $name: no such case ($script)"
		return 1
	fi
	rm -rf "$dir"
	mkdir -p "$dir"
	(
		cd "$dir" || exit 97
		export PATH="$work_root/bin:$PATH"
		export DOCKET_LEDGER=ledger FIXTURES="$src_root/fixtures"
		export NO_COLOR=1 LC_ALL=C TZ=UTC
		unset COLUMNS
		unset DOCKET_BIN
		exec bash -c 'set -o pipefail; . "$1"; . "$2"' case "$here/lib.sh" "$script"
	) >"$out" 2>"$err" </dev/null
	rc=$?

	[ -f "$cases_dir/$name.exit" ] && want_exit=$(cat "$cases_dir/$name.exit")
	if [ $update -eq 1 ]; then
		if [ ! -f "$cases_dir/$name.stdout.glob" ]; then
			cp "$out" "$cases_dir/$name.stdout"
		fi
		if [ "$rc" -ne 0 ]; then
			echo "$rc" >"$cases_dir/$name.exit"
		else
			rm -f "$cases_dir/$name.exit"
		fi
		want_exit=$rc
	fi

	if [ "$rc" -eq 99 ]; then
		ok=0; why="setup failed"
	elif [ "$rc" -ne "$want_exit" ]; then
		ok=0; why="exit status $rc, expected $want_exit"
	fi
	if [ $ok -eq 1 ] && [ -f "$cases_dir/$name.stdout" ] && [ ! -f "$cases_dir/$name.stdout.glob" ]; then
		if ! cmp -s "$out" "$cases_dir/$name.stdout"; then
			ok=0; why="stdout differs"
		fi
	fi
	if [ $ok -eq 1 ] && [ -f "$cases_dir/$name.stdout.glob" ]; then
		local pattern actual
		pattern=$(cat "$cases_dir/$name.stdout.glob")
		actual=$(cat "$out")
		# shellcheck disable=SC2053
		if [[ $actual != $pattern ]]; then
			ok=0; why="stdout does not match the pattern"
		fi
	fi
	if [ $ok -eq 1 ]; then
		if [ -f "$cases_dir/$name.stderr" ]; then
			while IFS= read -r line || [ -n "$line" ]; do
				[ -z "$line" ] && continue
				if ! grep -qF -- "$line" "$err"; then
					ok=0; why="stderr lacks: $line"
					break
				fi
			done <"$cases_dir/$name.stderr"
		elif [ "$want_exit" -eq 0 ] && [ -s "$err" ]; then
			ok=0; why="unexpected stderr"
		fi
	fi

	if [ $ok -eq 1 ]; then
		echo "PASS $name"
		if [ $verbose -eq 1 ]; then cat "$out"; cat "$err" >&2; fi
		return 0
	fi
	echo "FAIL $name: $why"
	echo "--- command:"
	sed 's/^/    /' "$script"
	if [ -f "$cases_dir/$name.stdout" ] && [ ! -f "$cases_dir/$name.stdout.glob" ]; then
		echo "--- stdout diff (expected -> actual):"
		diff -u "$cases_dir/$name.stdout" "$out" | sed 's/^/    /'
	else
		echo "--- stdout:"
		sed 's/^/    /' "$out"
	fi
	echo "--- stderr:"
	sed 's/^/    /' "$err"
	return 1
}

for name in "$@"; do
	if run_case "$name"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		failed_names="$failed_names $name"
	fi
done

echo "$passed passed, $failed failed"
if [ $failed -gt 0 ]; then
	echo "failed:$failed_names"
	exit 1
fi
exit 0
