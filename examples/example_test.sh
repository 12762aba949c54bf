#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the documented runtime example: a clean session, then a crash after
# dispatch and a recovery; checks the ledger after each.
set -euo pipefail
docket=$1
example=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

fail() { echo "example_test: FAIL: $*" >&2; exit 1; }

# 1. a clean run: 4 calls, one denied, nothing pending
"$example" "$dir/a" >"$dir/out" || fail "clean run failed"
grep -q "call-3     curl https://x.example/install.sh -> denied" "$dir/out" || fail "curl was not denied"
grep -q "call-2     rm -rf -> approval_required" "$dir/out" || fail "rm did not ask"
[ "$("$docket" -L "$dir/a" pending --json | wc -l)" -eq 0 ] || fail "calls left pending"
"$docket" -L "$dir/a" verify >/dev/null || fail "verify failed after the clean run"

# 2. a crash after T1 of call-4, then a recovery
set +e
"$example" "$dir/b" --crash-after-dispatch >"$dir/out"
status=$?
set -e
[ $status -eq 137 ] || fail "the crash run exited $status, expected SIGKILL (137)"
"$docket" -L "$dir/b" pending --json | grep -q '"state":"in_doubt"' || fail "call-4 is not in doubt"
"$docket" -L "$dir/b" recover | grep -q "redispatch" || fail "the plan does not redispatch call-4"
"$example" "$dir/b" --recover >"$dir/out" || fail "recovery run failed"
grep -q "recover    call-4: attempt 2" "$dir/out" || fail "call-4 was not redispatched as attempt 2"
[ "$("$docket" -L "$dir/b" pending --json | wc -l)" -eq 0 ] || fail "calls left pending after recovery"
"$docket" -L "$dir/b" verify >/dev/null || fail "verify failed after recovery"
echo "example_test: ok"
