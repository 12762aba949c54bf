# docket hook codex: PostToolUse's tool_response gives the real outcome (exit
# codes, an MCP error, the user's no, an interrupted prompt), never a blanket
# ok; at Stop the rollout's approval and sandbox policy becomes the session's
cp "$FIXTURES/hooks/codex/outcomes-rollout.jsonl" transcript.jsonl
hook_feed codex "$FIXTURES/hooks/codex/outcomes.jsonl"
docket log --json | jq -c 'select(.type == "tool.completed" or .type == "approval.settled")
	| [.invocation, .type, .status // .result, .exit_code, .error] | map(select(. != null))'
docket log --json | jq -c 'select(.type == "policy.revised") | [.revision, .format, .policy.approval_policy, .policy.sandbox_policy.type]'
docket verify >/dev/null && echo verified
