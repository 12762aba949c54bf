#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# usage: bench_clients.sh DOCKET SOURCE_ROOT WORK_DIR [--quick]
# The client overhead benchmark (issue 31; goal <= 1.2x the raw round trip):
# one `docket serve --socket` on a fresh ledger; bench_clients.py (Python
# client vs raw JSON-RPC) and bench_clients.mjs (TypeScript client vs raw),
# each interleaving its two sides in rounds. --quick: few calls, checks only
# that every call went through and nothing is left pending. A half whose
# toolchain is missing is skipped (both missing: exit 77).
set -eu
docket=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") root=$2 work=$3
n=100 rounds=4
[ "${4:-}" = --quick ] && n=10 rounds=2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-clients.XXXXXX")
server=
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
"$docket" -L "$tmp/ledger" init >/dev/null
"$docket" -L "$tmp/ledger" serve --socket "$tmp/s" 2>"$tmp/serve.log" &
server=$!
# the socket file appears before listen(): wait until a connection is accepted
accepting() {
	if command -v python3 >/dev/null; then
		python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])' "$1" 2>/dev/null
	else
		node -e 'require("net").connect(process.argv[1]).on("connect",()=>process.exit(0)).on("error",()=>process.exit(1))' "$1" 2>/dev/null
	fi
}
for _ in $(seq 500); do accepting "$tmp/s" && break; sleep 0.01; done
ran=0
if command -v python3 >/dev/null && python3 -c 'import sys; sys.exit(sys.version_info < (3, 9))'; then
	PYTHONPATH="$root/clients/python/src" python3 "$root/tests/bench/bench_clients.py" "$tmp/s" $n $rounds
	ran=1
else
	echo "python: skipped (no python3 >= 3.9)"
fi
if bash "$root/clients/run_typescript.sh" "$docket" "$root/clients/typescript" "$work" --build-only >"$tmp/ts.log" 2>&1; then
	node "$root/tests/bench/bench_clients.mjs" "$work/dist/src/index.js" "$tmp/s" $n $rounds
	ran=1
else
	echo "typescript: skipped ($(tail -1 "$tmp/ts.log"))"
fi
"$docket" -L "$tmp/ledger" verify >/dev/null
[ $ran = 1 ] || exit 77
