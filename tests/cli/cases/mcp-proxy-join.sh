# one record per MCP call: the proxy joins the client's call through _meta.
# Claude Code (claudecode/toolUseId): the PreToolUse hook recorded the call,
# the proxy adds the dispatch and outcome to it, PostToolUse adds nothing.
# Codex (callId, threadId) without hooks: the proxy records the call in the
# thread's session under Codex's id, so importing the rollout adds no second
# copy. A denied joined call ends denied in the client's record.
M=$FIXTURES/mcp
pre='{"session_id":"s-claude","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"mcp__echo__echo","tool_input":{"text":"hi"},"tool_use_id":"toolu_mcp_1"}'
post='{"session_id":"s-claude","cwd":"/w","hook_event_name":"PostToolUse","tool_name":"mcp__echo__echo","tool_input":{"text":"hi"},"tool_response":"hi","tool_use_id":"toolu_mcp_1"}'
printf '%s\n' "$pre" | docket hook claude
{
	printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}'
	printf '%s\n' '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"claudecode/toolUseId":"toolu_mcp_1","progressToken":2}}}'
	printf '%s\n' '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"codex"},"_meta":{"callId":"call_mcp_9","threadId":"t-codex"}}}'
	printf '%s\n' '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"touch","arguments":{"path":"x"},"_meta":{"callId":"call_mcp_10","threadId":"t-codex"}}}'
	printf '%s\n' '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"plain"}}}'
} >in.jsonl
docket mcp-proxy --name echo --session proxy --policy "$M/policy.yaml" -- python3 "$M/echo_server.py" <in.jsonl >/dev/null
printf '%s\n' "$post" | docket hook claude
cat >rollout.jsonl <<'JSONL'
{"timestamp":"2026-11-22T10:00:00.000Z","type":"session_meta","payload":{"id":"t-codex","timestamp":"2026-11-22T10:00:00.000Z","cwd":"/w","cli_version":"0.169.0"}}
{"timestamp":"2026-11-22T10:00:01.000Z","type":"response_item","payload":{"type":"function_call","name":"mcp__echo__echo","arguments":"{\"text\":\"codex\"}","call_id":"call_mcp_9"}}
{"timestamp":"2026-11-22T10:00:02.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_mcp_9","output":"codex"}}
JSONL
docket import rollout.jsonl | grep -E '^(calls|events)'
docket log --json | jq -c '[.seq, .type, .session, .invocation, .status] | map(select(. != null))'
docket pending
docket log --json | jq -c 'select(.type == "tool.intent" and .decision) | [.session, .invocation, .decision.policy_revision]'
