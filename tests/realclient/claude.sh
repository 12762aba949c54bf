#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The real Claude Code CLI (npm @anthropic-ai/claude-code), headless, against
# anthropic_stub.py, with docket integrated in enforce mode. Scenarios: a
# parallel pair of allowed commands, a command docket denies (and the file it
# would delete still exists), a file write, a command Claude itself refuses
# headless, an MCP server behind `docket mcp-proxy`. Assertions are on the
# ledger. Opt-in (DOCKET_REALCLIENT=1); skips (77) when npm cannot reach its
# registry.
#
#   claude.sh DOCKET_BIN SOURCE_ROOT
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
rc_begin claude "$1" "$2"
claude=$(need_npm_package @anthropic-ai/claude-code claude) || exit $?
mkdir -p "$proj/.claude"
cat >"$proj/.claude/settings.json" <<JSON
{"permissions":{"allow":["Bash(echo:*)","Bash(rm:*)","Write","mcp__echo__echo"]}}
JSON
cat >"$work/script.json" <<JSON
[
  [{"name":"Bash","input":{"command":"echo one"}},{"name":"Bash","input":{"command":"echo two"}}],
  {"name":"Bash","input":{"command":"rm -f precious.txt"}},
  {"name":"Write","input":{"file_path":"$proj/written.txt","content":"hello"}},
  {"name":"Bash","input":{"command":"touch refused.txt"}},
  {"name":"mcp__echo__echo","input":{"text":"via mcp"}},
  "Done."
]
JSON
cat >"$work/mcp.json" <<JSON
{"mcpServers":{"echo":{"command":"$docket","args":["-L","$work/ledger","mcp-proxy","--name","echo",
 "--session","rc-mcp","--","python3","$src/fixtures/mcp/echo_server.py"]}}}
JSON
# a trusted workspace: Claude Code applies its project settings' allow rules
echo "{\"projects\":{\"$proj\":{\"hasTrustDialogAccepted\":true}}}" >"$work/home/.claude.json"
export HOME=$work/home DOCKET_CLAUDE_MANAGED_SETTINGS=$work/none
start_stub anthropic "$here/anthropic_stub.py" --script "$work/script.json" --log "$work/requests.jsonl"
cd "$proj" || exit 99
"$docket" -L "$work/ledger" integrate claude --scope project --enforce --policy "$work/policy.yaml" >/dev/null || exit 99
ANTHROPIC_BASE_URL=http://127.0.0.1:$STUB_PORT ANTHROPIC_API_KEY=stub timeout 180 \
	"$claude" -p "run the script" --output-format json --mcp-config "$work/mcp.json" \
	>"$work/out.json" 2>"$work/err.txt"
echo "claude exit $?"
sid=$(jq -r .session_id "$work/out.json")

check "session recorded live and closed" grep -qx "$sid" <<<"$(ev 'select(.type == "session.closed") | .session' | tr -d '"')"
check "effective settings are the policy in force" \
	test "$(ev 'select(.type == "policy.revised" and .format == "claude") | .policy.permissions.allow | length')" = 4
check "the session's mode is no new revision (SessionStart has none: the settings' default)" \
	test "$(ev 'select(.type == "policy.revised") | .revision')" = 1
check "parallel pair: both ran" test "$(outcome toolu_stub_1_1)$(outcome toolu_stub_1_2)" = okok
check "docket denied rm" test "$(outcome toolu_stub_2_1)" = denied
check "the denied rm did not run" test -f "$proj/precious.txt"
check "the denial names docket's rule" \
	grep -q 'forbids rm' <<<"$(ev 'select(.invocation == "toolu_stub_2_1" and .type == "tool.completed") | .error')"
check "file write ran" test "$(outcome toolu_stub_3_1)" = ok
check "the file was written" test "$(cat "$proj/written.txt" 2>/dev/null)" = hello
check "headless refusal recorded as denied" test "$(outcome toolu_stub_4_1)" = denied
check "the refused command did not run" test ! -e "$proj/refused.txt"
check "MCP call through the hooks" test "$(outcome toolu_stub_5_1)" = ok
check "MCP call through mcp-proxy: joined to the hook's call (claudecode/toolUseId)" \
	test "$(ev "select(.session == \"$sid\" and .type == \"tool.completed\" and .provenance.file == \"mcp-proxy\") | .status" | tr -d '"')" = ok
check "one record per MCP call: none in the proxy's own session" \
	test -z "$(ev 'select(.session == "rc-mcp" and .type == "tool.intent")')"
check "nothing pending" test -z "$("$docket" -L "$work/ledger" pending --json)"
check "ledger verifies" verifies
# importing the transcript after the live session adds no copy and no conflict
transcript=$(ev 'select(.type == "session.opened" and .labels.transcript != null) | .labels.transcript' | head -1 | tr -d '"')
check "import after live adds nothing" imports_nothing claude "$transcript"
rc_end "$work/err.txt"
