#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# completion: source the bash completion and ask it what a user's <TAB>
# would offer, with the docket under test on PATH.
#
#   completion_test.sh DOCKET_BIN SOURCE_ROOT
set -uo pipefail
docket=$1 src=$(cd "$2" && pwd)
PATH=$(cd "$(dirname "$docket")" && pwd):$PATH
export PATH
fail=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
touch policy.yaml polish.txt

# shellcheck source=/dev/null
. "$src/completion/docket.bash"
complete -p docket | grep -- '-F _docket docket' >/dev/null || { echo "completion_test: FAIL: not registered" >&2; exit 1; }

# offers LINE EXPECTED...: completing the last word of LINE (a trailing
# space: a new empty word) offers exactly EXPECTED (in any order)
offers() {
	local line=$1 got want
	shift
	read -ra COMP_WORDS <<<"$line"
	[ "${line: -1}" = " " ] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_docket
	got=$(printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | sort | tr '\n' ' ')
	want=$(printf '%s\n' "$@" | sed '/^$/d' | sort | tr '\n' ' ')
	if [ "$got" != "$want" ]; then
		echo "completion_test: FAIL: '$line<TAB>' offers [$got], expected [$want]" >&2
		fail=1
	fi
}

# every command, as `docket --help` lists them
mapfile -t all < <(NO_COLOR=1 docket --help | awk '/^commands:/{f=1;next} f&&/^$/{exit} f{print $1}')
[ "${#all[@]}" -ge 19 ] || { echo "completion_test: FAIL: docket --help lists ${#all[@]} commands" >&2; fail=1; }
offers "docket " "${all[@]}"
offers "docket re" record reindex report redact recover replay
offers "docket -L /tmp/ledger sh" ship show
offers "docket --ledger /tmp/ledger ver" verify verify-receipt
offers "docket -" -L --ledger -h --help --version
offers "docket log --" --session --invocation --type --status --since --until --json --follow --help
offers "docket export --f" --format
offers "docket export --format " jsonl ocsf otel csv git
offers "docket replay --format j" json junit
offers "docket import " codex claude
offers "docket policy e" eval explain
offers "docket help ver" verify verify-receipt
offers "docket help pro" prove
offers "docket replay --policy pol" policy.yaml polish.txt
offers "docket record pol" policy.yaml polish.txt
# nothing for what docket does not have
offers "docket zz"
offers "docket nosuchcommand --"
offers "docket export --format x"
offers "docket log --nosuch"
[ $fail -eq 0 ] && echo "completion_test: ok"
exit $fail
