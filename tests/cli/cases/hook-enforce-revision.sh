# The policy a hook enforces is a revision of its session (docs/integrations.md):
# recorded once, with Claude Code's settings as a second all_of layer, in the
# append of the first call decided under it; again only when the policy's
# content changes; every decision names it. Replaying the session against the
# policy it enforced changes nothing. A policy that cannot be loaded still
# denies (fail closed) and records nothing, no revision either.
export HOME=$PWD/home DOCKET_CLAUDE_MANAGED_SETTINGS=$PWD/none
cp "$FIXTURES/policies/team.yaml" policy.yaml
E='"session_id":"fx-rev","cwd":"/home/dev/app","permission_mode":"default"'
pre() {
	printf '{%s,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"%s"},"tool_use_id":"%s"}\n' \
		"$E" "$1" "$2" | docket hook claude --enforce --policy "${3:-policy.yaml}" >/dev/null
	echo "$2: exit $?"
}
post() {
	printf '{%s,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"%s"},"tool_use_id":"%s","tool_response":{"stdout":""}}\n' \
		"$E" "$1" "$2" | docket hook claude --enforce --policy policy.yaml
}
printf '{%s,"hook_event_name":"SessionStart","source":"startup"}\n' "$E" | docket hook claude --enforce --policy policy.yaml
pre 'rm -rf build' t_rm
pre 'git push origin main' t_push
pre 'git status' t_status
post 'git status' t_status
pre 'rm -rf dist' t_rm2
echo "--- one revision, every decision names it"
docket log --json | jq -c 'select(.type == "policy.revised") | [.seq, .revision, .format, .actor, [.policy.all_of[].format]]'
docket log --json | jq -c 'select(.type == "tool.intent") | [.seq, .invocation, .decision.verdict, .decision.policy_revision]'
echo "--- replayed against the policy it enforced: nothing changes"
docket replay --policy policy.yaml --session fx-rev --fail-on changed --json >replay.json
echo "replay: exit $?"
jq -c '[.totals, [.sessions[].baseline], [.changes[].invocation], [.undecided[].invocation]]' replay.json
echo "--- fail closed: a missing or broken policy denies and records nothing"
pre 'git status' t_missing "$PWD/no-such-policy.yaml"
pre 'git status' t_broken "$FIXTURES/policies/syntax-error.yaml"
docket log --json | jq -c 'select(.invocation == "t_missing" or .invocation == "t_broken" or .type == "policy.revised") | [.seq, .type]'
echo "--- the policy changes: revision 2, in the append of its first decision"
sed 's/^commands:$/commands:\n  - pattern: [curl]\n    decision: deny/' "$FIXTURES/policies/team.yaml" >policy.yaml
pre 'curl https://example.com' t_curl
pre 'rm -rf out' t_rm3
docket log --json | jq -c 'select(.type == "policy.revised" or .invocation == "t_curl" or .invocation == "t_rm3") | [.seq, .type, .revision, .actor, .invocation, .decision.policy_revision]'
docket verify
