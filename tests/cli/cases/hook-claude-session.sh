# a Claude Code session recorded live from its hooks: every hook event, the
# effective settings as the policy in force, Stop settling from the transcript
# what no hook reports (the prompt the user refused, a rule's denial), and an
# import of the same transcript afterwards adding no second copy of anything
mkdir -p home/.claude app/.claude
echo '{"permissions":{"allow":["Bash(git status)"],"deny":["Bash(rm:*)"],"defaultMode":"acceptEdits"},"model":"x"}' >home/.claude/settings.json
echo '{"permissions":{"ask":["Bash(npm:*)"],"allow":["Bash(git status)"]}}' >app/.claude/settings.json
export HOME=$PWD/home DOCKET_CLAUDE_MANAGED_SETTINGS=$PWD/none CLAUDE_PROJECT_DIR=$PWD/app
cp "$FIXTURES/hooks/claude/transcript.jsonl" transcript.jsonl
hook_feed claude "$FIXTURES/hooks/claude/session.jsonl"
trail
docket log --json | jq -c 'select(.type == "policy.revised") | .policy'
docket log --json | jq -c 'select(.type == "tool.dispatched") | [.invocation, (.provenance.file | sub("^/.*/"; ""))]'
docket verify
cp transcript.jsonl copy.jsonl
docket import claude copy.jsonl | grep -E '^(calls|events)'
docket import claude transcript.jsonl | grep -E '^(files|events)'
