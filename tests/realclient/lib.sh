# SPDX-License-Identifier: Apache-2.0
# Helpers for the real-client runners claude.sh and codex.sh (sourced):
# opt-in, npm installs into a cache directory (skip, 77, when npm cannot
# reach its registry), the scratch work directory, loopback model stubs,
# named assertions on the ledger and the report at the end.

cache=${DOCKET_REALCLIENT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/docket-realclient}

# rc_begin NAME DOCKET_BIN SOURCE_ROOT: skip unless DOCKET_REALCLIENT=1; sets
# docket, src, here, work (removed at exit, with every stub), proj (the
# client's project, holding precious.txt) and work/policy.yaml, docket's
# enforced policy (it denies rm).
rc_begin() {
	if [ "${DOCKET_REALCLIENT:-0}" != 1 ]; then
		echo "real-client suite: set DOCKET_REALCLIENT=1 to run it"
		exit 77
	fi
	command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }
	docket=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
	src=$(cd "$3" && pwd)
	here=$src/tests/realclient
	work=$(mktemp -d "${TMPDIR:-/tmp}/docket-rc-$1.XXXXXX")
	stub_pids=
	trap 'for p in $stub_pids; do kill "$p" 2>/dev/null; done; rm -rf "$work"' EXIT
	proj=$work/proj
	mkdir -p "$work/home" "$proj"
	echo keep >"$proj/precious.txt"
	cat >"$work/policy.yaml" <<'YAML'
version: 1
sandbox: full_access
approval: never
commands:
  - pattern: [rm]
    decision: deny
    justification: the real-client suite forbids rm
YAML
}

# need_npm_package PKG BIN: the path of BIN from PKG, installed on first use.
need_npm_package() {
	local pkg=$1 bin=$2
	if [ ! -x "$cache/node_modules/.bin/$bin" ]; then
		command -v npm >/dev/null || { echo "SKIP: npm is not installed"; exit 77; }
		if ! timeout 60 npm view "$pkg" version >/dev/null 2>&1; then
			echo "SKIP: npm cannot reach its registry"
			exit 77
		fi
		mkdir -p "$cache"
		timeout 600 npm install --prefix "$cache" --no-audit --no-fund "$pkg" >&2 ||
			{ echo "SKIP: npm install $pkg failed"; exit 77; }
	fi
	echo "$cache/node_modules/.bin/$bin"
}

# start_stub NAME SCRIPT.py ARGS...: run a stand-in model API (stopped at
# exit); sets STUB_PORT.
start_stub() {
	local name=$1 py=$2
	shift 2
	python3 "$py" --port-file "$work/$name.port" --idle 120 "$@" &
	stub_pids="$stub_pids $!"
	for _ in $(seq 100); do [ -s "$work/$name.port" ] && break; sleep 0.05; done
	STUB_PORT=$(cat "$work/$name.port")
}

fails=0
check() {  # check WHAT COMMAND...: a named assertion
	local what=$1
	shift
	if "$@"; then echo "ok   $what"; else echo "FAIL $what"; fails=$((fails + 1)); fi
}

# ev JQ_FILTER: the ledger's events through jq (compact).
ev() { "$docket" -L "$work/ledger" log --json | jq -c "$1"; }

# outcome INVOCATION: the status of its tool.completed
outcome() { ev "select(.type == \"tool.completed\" and .invocation == \"$1\") | .status" | tr -d '"'; }

verifies() { "$docket" -L "$work/ledger" verify >/dev/null; }

# imports_nothing FORMAT FILE [IMPORT_FLAGS...]: importing (a copy of) FILE
# into the live ledger writes no event
imports_nothing() {
	local format=$1 file=$2 copy
	shift 2
	copy=$(mktemp "$work/copy.XXXXXX.jsonl") && cp "$file" "$copy" || return 1
	grep -q '^events     0 written' <<<"$("$docket" -L "$work/ledger" import "$@" "$format" "$copy")"
}

# rc_end CLIENT_STDERR...: on a failed check, show the ledger and the
# client's stderr, and fail.
rc_end() {
	local f
	[ "$fails" -eq 0 ] && return 0
	echo "--- ledger:"; "$docket" -L "$work/ledger" log
	for f in "$@"; do echo "--- $f:"; tail -30 "$f"; done
	exit 1
}
