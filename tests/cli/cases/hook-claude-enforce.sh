# --enforce: docket's policy decides at PreToolUse. A denial answers deny with
# the rule as reason (and the call is over: denied, never dispatched); an ask
# answers ask; an allowed call gets no answer, so Claude's own rules still
# apply (docket narrows, never widens)
export HOME=$PWD/home DOCKET_CLAUDE_MANAGED_SETTINGS=$PWD/none
E='"session_id":"fx-enf","transcript_path":"/nonexistent/t.jsonl","cwd":"/home/dev/app","hook_event_name":"PreToolUse","tool_name":"Bash"'
for c in 'rm -rf build:toolu_deny' 'git push origin main:toolu_ask' 'git status:toolu_allow'; do
	printf '{%s,"tool_input":{"command":"%s"},"tool_use_id":"%s"}\n' "$E" "${c%%:*}" "${c##*:}" |
		docket hook claude --enforce --policy "$FIXTURES/policies/team.yaml"
	echo "exit $?"
done
trail
docket log --json | jq -c 'select(.type == "tool.intent") | [.invocation, .decision.source, .decision.rules]'
