# Under `hook codex --enforce`, docket's policy is revision 1 of the live
# session; at Stop the rollout import adopts the rollout's settings
# (turn_context: approval_policy, sandbox_policy) as the session's next
# revision, under docket's layer: {"all_of":[docket's, the rollout's]}, the
# strictest verdict wins (docs/integrations.md). The next turn (a
# continuation) opens with that revision in force. Replaying the sessions
# against their recorded revisions changes nothing. Not adopted: a
# turn_context whose settings are malformed (the import says why), a
# rollout of another session (the Stop hook says why on stderr).
cp "$FIXTURES/policies/team.yaml" policy.yaml
meta() {  # meta SESSION APPROVAL [SANDBOX]: a rollout's first turn
	printf '{"timestamp":"2026-11-22T10:00:00.000Z","type":"session_meta","payload":{"id":"%s","timestamp":"2026-11-22T10:00:00.000Z","cwd":"/home/dev/app","originator":"codex_exec","cli_version":"0.171.0","source":"exec","model_provider":"openai"}}\n' "$1"
	printf '{"timestamp":"2026-11-22T10:00:00.500Z","type":"turn_context","payload":{"turn_id":"turn-1","cwd":"/home/dev/app","approval_policy":%s,"sandbox_policy":%s,"model":"gpt-5"}}\n' "$2" "${3:-{\"type\":\"workspace-write\",\"network_access\":false\}}"
	printf '{"timestamp":"2026-11-22T10:00:01.000Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\\"cmd\\": \\"git status\\"}","call_id":"c1"}}\n'
	printf '{"timestamp":"2026-11-22T10:00:01.100Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"Chunk ID: 1\\nWall time: 0.0 seconds\\nProcess exited with code 0\\nOutput:\\n"}}\n'
}
# ev SESSION ROLLOUT TURN EVENT [FIELDS]
ev() {
	printf '{"session_id":"%s","transcript_path":"%s","cwd":"/home/dev/app","model":"gpt-5","turn_id":"%s","hook_event_name":"%s"%s}\n' \
		"$1" "$PWD/$2" "$3" "$4" "${5:-}" | docket hook codex --enforce --policy policy.yaml >/dev/null 2>err.txt
	echo "$1 $4 -> exit $? $(sed "s|$PWD/||" err.txt)"
}
pre() { ev "$1" "$2" "$3" PreToolUse ',"tool_name":"Bash","tool_input":{"command":"'"$4"'"},"tool_use_id":"'"$5"'"'; }
post() { ev "$1" "$2" "$3" PostToolUse ',"tool_name":"Bash","tool_input":{"command":"'"$4"'"},"tool_response":"","tool_use_id":"'"$5"'"'; }
turn() {  # turn SESSION ROLLOUT TURN ID: git status (allowed), rm -rf (denied), Stop
	ev "$1" "$2" "$3" UserPromptSubmit ',"prompt":"go"'
	pre "$1" "$2" "$3" "git status" "$4"
	post "$1" "$2" "$3" "git status" "$4"
	pre "$1" "$2" "$3" "rm -rf build" "$4-rm"
	ev "$1" "$2" "$3" Stop ',"stop_hook_active":false'
}
revisions() {
	docket log --json | jq -c 'select(.type == "policy.revised") | (.policy | if type == "object" then .all_of else null end) as $all
		| [.session, .revision, .format, .actor, [$all[]?.format], $all[1].policy.approval_policy,
		   $all[1].policy.sandbox_policy.type] | map(select(. != null))'
}
echo "--- an enforced session: the rollout's settings composed under docket's layer"
meta fx-cx '"on-request"' >rollout.jsonl
ev fx-cx rollout.jsonl turn-1 SessionStart ',"source":"startup"'
turn fx-cx rollout.jsonl turn-1 c1
turn fx-cx rollout.jsonl turn-2 c2
revisions
docket log --json | jq -c 'select(.type == "tool.intent") | [.session, .invocation, .decision.verdict, .decision.policy_revision] | map(select(. != null))'
docket show fx-cx | grep -E '^policy|^ +r[0-9]' | sed -E 's/ at [0-9TZ:.-]+;/ at <time>;/'
echo "--- replayed (the baseline: the decisions recorded under those revisions): nothing changes"
for s in fx-cx fx-cx/continued-2; do
	docket replay --policy policy.yaml --session "$s" --fail-on changed --json >replay.json
	echo "replay $s: exit $?"
	jq -c '[.totals, [.sessions[].baseline], [.changes[].invocation]]' replay.json
done
echo "--- the session closed: a later turn's settings are not adopted by an import (resumed, or a copy)"
printf '{"timestamp":"2026-11-22T10:05:00.000Z","type":"turn_context","payload":{"turn_id":"turn-3","cwd":"/home/dev/app","approval_policy":"never","sandbox_policy":{"type":"danger-full-access"},"model":"gpt-5"}}\n' >>rollout.jsonl
docket import codex rollout.jsonl | grep -E '^events'
cp rollout.jsonl copy.jsonl
docket import codex copy.jsonl | grep -E '^events'
echo "--- imported while the session is open, then a copy: the same settings are adopted once"
meta fx-open '"on-request"' >open.jsonl
ev fx-open open.jsonl turn-1 UserPromptSubmit ',"prompt":"go"'
pre fx-open open.jsonl turn-1 "git status" c1
post fx-open open.jsonl turn-1 "git status" c1
docket import codex open.jsonl | grep -E '^events'
cp open.jsonl open-copy.jsonl
docket import codex open-copy.jsonl | grep -E '^events'
ev fx-open open.jsonl turn-1 Stop ',"stop_hook_active":false'
revisions | grep fx-open
echo "--- malformed settings: not adopted, and the import says why"
meta fx-bad '5' >bad.jsonl
turn fx-bad bad.jsonl turn-1 b1
revisions | grep fx-bad
cp bad.jsonl bad-copy.jsonl
docket import codex bad-copy.jsonl 2>&1 | grep -E '^skipped|turn_context' | sed "s|$PWD/||"
echo "--- the older sandbox form {\"mode\": …} is a Codex setting: adopted"
meta fx-old '"never"' '{"mode":"danger-full-access"}' >old.jsonl
turn fx-old old.jsonl turn-1 m1
docket log --json | jq -c 'select(.session == "fx-old" and .type == "policy.revised") | [.revision, (.policy | objects | .all_of[1].policy.sandbox_policy.mode)]'
echo "--- a rollout of another session: not imported, and the hook says why"
turn fx-other rollout.jsonl turn-1 o1
revisions | grep fx-other
docket log --json | jq -c 'select(.session == "fx-cx" and .type == "policy.revised") | .revision'
docket verify
