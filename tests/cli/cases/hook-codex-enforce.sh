# docket hook codex: the same mapping as the rollout importer (Bash scripts as
# bash -lc, apply_patch from the patch text, MCP tools), enforce mode denying
# with Codex's hookSpecificOutput; Codex rejects "ask", so a call docket would
# ask about is denied with the reason; Stop closes what never ran
hook_feed codex "$FIXTURES/hooks/codex/session.jsonl" --enforce --policy "$FIXTURES/policies/team.yaml"
trail
docket log --json | jq -c 'select(.type == "tool.intent") | [.invocation, .turn, .tool, .args]'
