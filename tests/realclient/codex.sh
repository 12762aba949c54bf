#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The real Codex CLI (npm @openai/codex), `codex exec` against
# openai_stub.py, with docket integrated (hooks.json + trust entries in
# config.toml) in enforce mode. Scenarios: a parallel pair, a command docket
# denies (the file it would delete still exists), a file write, and the
# rollout imported afterwards (--strict: every line type known) adding
# nothing. Assertions are on the ledger. Skips (77) when npm cannot reach
# its registry.
#
#   codex.sh DOCKET_BIN SOURCE_ROOT
set -u
docket=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
here=$src/tests/realclient
. "$here/lib.sh"
codex=$(need_npm_package @openai/codex codex) || exit $?
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }

work=$(mktemp -d "${TMPDIR:-/tmp}/docket-rc-codex.XXXXXX")
trap 'kill $stub_pid 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/codex" "$work/proj"
proj=$work/proj
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
cat >"$work/script.json" <<'JSON'
[
  [{"shell":"echo one"},{"shell":"echo two"}],
  {"shell":"rm -f precious.txt"},
  {"shell":"echo hello > written.txt"},
  "Done."
]
JSON
start_stub "$here/openai_stub.py" --script "$work/script.json" --log "$work/requests.jsonl"
cat >"$work/codex/config.toml" <<TOML
model = "gpt-5"
model_provider = "stub"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.stub]
name = "stub"
base_url = "http://127.0.0.1:$STUB_PORT/v1"
wire_api = "responses"
TOML
export HOME=$work/home CODEX_HOME=$work/codex
"$docket" -L "$work/ledger" integrate codex --enforce --policy "$work/policy.yaml" >/dev/null || exit 99
cd "$proj" || exit 99
timeout 180 "$codex" exec --skip-git-repo-check "run the script" >"$work/out.txt" 2>"$work/err.txt"
echo "codex exit $?"
outcome() { ev "select(.type == \"tool.completed\" and .invocation == \"$1\") | .status" | tr -d '"'; }

check "session recorded live" test "$(ev 'select(.type == "session.opened") | .runtime' | tr -d '"')" = codex
check "the trusted hooks ran (the hash formula is Codex's)" test "$(ev 'select(.type == "tool.intent")' | wc -l)" -ge 4
check "parallel pair: both ran" test "$(outcome call_stub_1_1)$(outcome call_stub_1_2)" = okok
check "docket denied rm" test "$(outcome call_stub_2_1)" = denied
check "the denied rm did not run" test -f "$proj/precious.txt"
check "file write ran" test "$(outcome call_stub_3_1)" = ok
check "the file was written" test "$(cat "$proj/written.txt" 2>/dev/null)" = hello
check "shell calls mapped as the importer maps them" \
	test "$(ev 'select(.invocation == "call_stub_1_1" and .type == "tool.intent") | .args.command[1]' | tr -d '"')" = -lc
check "ledger verifies" verifies
rollout=$(find "$CODEX_HOME/sessions" -name 'rollout-*.jsonl' | head -1)
cp "$rollout" "$work/copy.jsonl"
check "strict import of the rollout after live adds nothing" \
	grep -q '^events     0 written' <<<"$("$docket" -L "$work/ledger" import --strict codex "$work/copy.jsonl")"
if [ $fails -gt 0 ]; then
	echo "--- ledger:"; "$docket" -L "$work/ledger" log
	echo "--- codex stderr:"; tail -30 "$work/err.txt"
	exit 1
fi
