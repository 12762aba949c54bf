#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# usage: clients_example_test.sh DOCKET RUNNER...
# Runs a client example pair (RUNNER quickstart, RUNNER agent_loop: e.g.
# `python3 DIR/` or `node DIR/`, completed with the file name) in a fresh
# directory: the ten-line quickstart, then the agent loop crashing inside
# call-4's scope, then the agent loop again, which must recover call-4
# (re-run as attempt 2: replay_safe) and finish, leaving nothing pending
# and a ledger that verifies.
set -u
docket=$(cd "$(dirname "$1")" && pwd)/$(basename "$1"); shift
runner=("$@")
ext=${EXAMPLE_EXT:-py}
work=$(mktemp -d "${TMPDIR:-/tmp}/docket-client-example.XXXXXX")
trap 'rm -rf "$work"' EXIT
export PATH="$(dirname "$docket"):$PATH" DOCKET_BIN=$docket
fail() { echo "FAIL: $*"; exit 1; }
prog() { local p=("${runner[@]}"); p[${#p[@]}-1]="${p[${#p[@]}-1]}$1.$ext"; shift; "${p[@]}" "$@"; }
cd "$work"

out=$(prog quickstart "$work/q-ledger") || fail "quickstart failed: $out"
echo "$out"
case $out in *hi*) ;; *) fail "quickstart printed no output" ;; esac
[ "$("$docket" -L q-ledger pending)" = "no pending calls" ] || fail "quickstart left a pending call"

out=$(prog agent_loop "$work/ledger" --crash-in call-4 2>&1); rc=$?
echo "$out"
[ $rc -ne 0 ] || fail "the crashing run exited 0"
echo "$out" | grep -q '^call-4 .*the runtime dies' || fail "no crash inside call-4"
echo "$out" | grep -q '^call-3 .*not run: .*denied' || fail "call-3 was not denied"
echo "$out" | grep -q '^call-2 .*approval: approved' || fail "call-2 was not approved"
pending=$("$docket" -L ledger pending)
echo "$pending"
echo "$pending" | grep -q 'call-4 .*in_doubt' || fail "call-4 is not in doubt after the crash"

out=$(prog agent_loop "$work/ledger" 2>&1) || fail "the recovering run failed: $out"
echo "$out"
echo "$out" | grep -q '^recover .*call-4: in_doubt, replay_safe -> redispatch' || fail "call-4 not recovered"
echo "$out" | grep -q '^call-4 .*re-run as attempt 2: exit 0' || fail "call-4 not re-run"
echo "$out" | grep -q '^done .*5 calls' || fail "the loop did not finish"
[ "$("$docket" -L ledger pending)" = "no pending calls" ] || fail "calls still pending"
n=$("$docket" -L ledger log --json | grep -c '"type":"tool.dispatched","[^}]*"invocation":"call-4"')
[ "$n" = 2 ] || fail "call-4 dispatched $n times, want 2"
n=$("$docket" -L ledger log --json | grep -c '"type":"tool.dispatched","[^}]*"invocation":"call-3"')
[ "$n" = 0 ] || fail "denied call-3 was dispatched"
n=$("$docket" -L ledger log --json | grep -c '"type":"tool.completed"')
[ "$n" = 5 ] || fail "$n outcomes, want 5"
"$docket" -L ledger verify || fail "verify"
[ "$(wc -l < build.log)" -eq 2 ] || fail "build.log: call-4 ran $(wc -l < build.log) times, want 2 (replay_safe)"
echo "ok"
