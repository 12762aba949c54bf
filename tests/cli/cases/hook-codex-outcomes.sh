# docket hook codex: PostToolUse's tool_response gives the real outcome (exit
# codes, an MCP error, the user's no, an interrupted prompt), never a blanket
# ok. Codex 0.171 sends a shell call's output without its exit code: then the
# rollout says it (item_completed, or the function_call_output); a call the
# rollout has no outcome for yet stays dispatched until the Stop-time import
# gives it one. At Stop the rollout's approval and sandbox policy becomes the
# session's.
cp "$FIXTURES/hooks/codex/outcomes-rollout.jsonl" transcript.jsonl
hook_feed codex "$FIXTURES/hooks/codex/outcomes.jsonl"
docket pending --json | jq -r '[.invocation, .state] | join(" ")'
cat "$FIXTURES/hooks/codex/outcomes-rollout-later.jsonl" >>transcript.jsonl
hook_feed codex "$FIXTURES/hooks/codex/outcomes-stop.jsonl"
docket log --json | jq -c 'select(.type == "tool.completed" or .type == "approval.settled")
	| [.invocation, .type, .status // .result, .exit_code, .error] | map(select(. != null))'
docket log --json | jq -c 'select(.type == "policy.revised") | [.revision, .format, .policy.approval_policy, .policy.sandbox_policy.type]'
docket pending
docket verify >/dev/null && echo verified
