# a docket ask under claude -p: no one can answer, Claude Code refuses the call
# ("... needs approval ..."); the Stop-time import settles the open request
# denied and ends the call denied (never dispatched), nothing stays pending,
# and importing the transcript again (or any other file) works: no false
# "changed since it was imported"
export HOME=$PWD/home DOCKET_CLAUDE_MANAGED_SETTINGS=$PWD/none
E='"session_id":"fx-hl","transcript_path":"'$PWD'/t.jsonl","cwd":"/home/dev/app"'
cat >t.jsonl <<JSONL
{"isSidechain":false,"cwd":"/home/dev/app","sessionId":"fx-hl","version":"2.1.328","type":"user","timestamp":"2026-11-21T09:00:00.000Z","message":{"role":"user","content":"push it"}}
{"isSidechain":false,"cwd":"/home/dev/app","sessionId":"fx-hl","version":"2.1.328","type":"assistant","timestamp":"2026-11-21T09:00:01.000Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_hl_push","name":"Bash","input":{"command":"git push origin main"}}]}}
{"isSidechain":false,"cwd":"/home/dev/app","sessionId":"fx-hl","version":"2.1.328","type":"user","timestamp":"2026-11-21T09:00:01.200Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_hl_push","content":"Bash(git push origin main) needs approval, and this session cannot ask for it.","is_error":true}]}}
JSONL
printf '{%s,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git push origin main"},"tool_use_id":"toolu_hl_push"}\n' "$E" |
	docket hook claude --enforce --policy "$FIXTURES/policies/team.yaml" | jq -c '.hookSpecificOutput.permissionDecision'
printf '{%s,"hook_event_name":"Stop","stop_hook_active":false}\n' "$E" | docket hook claude --enforce --policy "$FIXTURES/policies/team.yaml"
echo "stop: exit $?"
trail
docket pending
docket import t.jsonl | grep -E '^events'
docket verify >/dev/null && echo verified
