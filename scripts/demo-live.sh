#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The live demo (scripts/demo.sh --live): a real Claude Code session,
# recorded and enforced by docket. Claude Code is installed from npm on first
# use (into ~/.cache/docket-realclient); its model API is the scripted
# stand-in tests/realclient/anthropic_stub.py on loopback, so no account or
# network beyond npm is needed. The model asks for a parallel pair of
# commands, an `rm` that docket's policy forbids, a file write and a command
# Claude Code refuses headless; docket records all of it and denies the rm.
#
#   scripts/demo-live.sh DOCKET_BIN OUT_DIR
set -euo pipefail
docket=$1
out=$2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$out/live
rm -rf "$work"
mkdir -p "$work/home" "$work/project/.claude"
work=$(cd "$work" && pwd)
. "$root/tests/realclient/lib.sh"
claude=$(need_npm_package @anthropic-ai/claude-code claude) || {
	echo "live demo skipped: npm cannot install @anthropic-ai/claude-code"
	exit 0
}
proj=$work/project
echo "a file the agent must not delete" >"$proj/precious.txt"
cat >"$work/policy.yaml" <<'YAML'
version: 1
sandbox: full_access
approval: never
commands:
  - pattern: [rm]
    decision: deny
    justification: this demo forbids rm
YAML
echo '{"permissions":{"allow":["Bash(echo:*)","Bash(rm:*)","Write"]}}' >"$proj/.claude/settings.json"
echo "{\"projects\":{\"$proj\":{\"hasTrustDialogAccepted\":true}}}" >"$work/home/.claude.json"
cat >"$work/script.json" <<JSON
[
  [{"name":"Bash","input":{"command":"echo building"}},{"name":"Bash","input":{"command":"echo testing"}}],
  {"name":"Bash","input":{"command":"rm -f precious.txt"}},
  {"name":"Write","input":{"file_path":"$proj/NOTES.md","content":"release notes\\n"}},
  {"name":"Bash","input":{"command":"curl -s https://example.com"}},
  "All done."
]
JSON
export HOME=$work/home DOCKET_CLAUDE_MANAGED_SETTINGS=$work/none DOCKET_LEDGER=$work/ledger
start_stub "$root/tests/realclient/anthropic_stub.py" --script "$work/script.json"
trap 'kill $stub_pid 2>/dev/null || true' EXIT
cd "$proj"
show() { printf '\n== %s\n$ %s\n' "$1" "${*:2}"; "${@:2}"; }
show "switch docket on for Claude Code, enforcing a policy (one command)" \
	"$docket" integrate claude --scope project --enforce --policy "$work/policy.yaml"
show "run the real Claude Code headless (its model is a scripted stand-in)" \
	env ANTHROPIC_BASE_URL="http://127.0.0.1:$STUB_PORT" ANTHROPIC_API_KEY=stub \
	"$claude" -p "build, clean up, write notes" --output-format text
sid=$("$docket" sessions --json | jq -r 'select(.runtime == "claude-code") | .session' | head -1)
show "the session docket recorded live" "$docket" show "$sid"
show "the rm docket denied did not run" ls "$proj"
show "the ledger verifies" "$docket" verify
