# a permission-mode change after SessionStart (shift-tab, ExitPlanMode) is a
# new policy revision, recorded before the call that showed it: the effective
# settings with that mode. The same mode again records nothing, also when the
# note that makes the check cheap is gone or damaged; a SessionStart without
# a mode (Claude Code 2.1 sends none) means the settings' defaultMode, so
# events in that mode record nothing either; Codex's events (whose
# policy is no Claude settings file) record no revision
mkdir -p home/.claude app
echo '{"permissions":{"allow":["Bash(ls:*)"]}}' >home/.claude/settings.json
export HOME=$PWD/home DOCKET_CLAUDE_MANAGED_SETTINGS=$PWD/none
ev() {  # ev EVENT ID MODE
	printf '{"session_id":"s1","cwd":"%s/app","hook_event_name":"%s","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"%s","permission_mode":"%s","tool_response":{"stdout":""}}\n' "$PWD" "$1" "$2" "$3"
}
{
	ev SessionStart "" default
	ev PreToolUse t1 default; ev PostToolUse t1 default
	ev PreToolUse t2 bypassPermissions; ev PostToolUse t2 bypassPermissions
	ev PreToolUse t3 plan
} >a.jsonl
hook_feed claude a.jsonl
rm -r ledger/hook-modes
ev PostToolUse t3 plan >b.jsonl
hook_feed claude b.jsonl
for f in ledger/hook-modes/*; do echo "9 garbage" >"$f"; done
{ ev PreToolUse t4 plan; ev PostToolUse t4 plan; ev PreToolUse t5 default; ev PostToolUse t5 default; } >c.jsonl
hook_feed claude c.jsonl
trail
docket log --json | jq -c 'select(.type == "policy.revised") | [.revision, .policy.permissions.defaultMode, (.reason | sub(":.*"; ""))]'
stat -c '%a' ledger/hook-modes ledger/hook-modes/*
{
	echo '{"session_id":"s2","cwd":"'"$PWD"'/app","hook_event_name":"SessionStart","source":"startup"}'
	ev PreToolUse t1 default | sed 's/"s1"/"s2"/'
} >d.jsonl
hook_feed claude d.jsonl
docket log --json | jq -c 'select(.session == "s2" and .type == "policy.revised") | .revision'
sed 's/"s1"/"c1"/; s/t\([0-9]\)/c\1/' a.jsonl >codex.jsonl
hook_feed codex codex.jsonl
docket log --json | jq -c 'select(.session == "c1" and .type == "policy.revised")' | wc -l
