# Codex has no SessionEnd: docket closes a live Codex session at every Stop
# (turn end), and the next turn of the same session (or `codex exec resume`)
# goes on in a continuation linked to it, as a resumed Claude Code session
# does; no Codex session stays open for ever. A call of a later turn whose
# outcome the rollout did not have at PostToolUse gets it at that turn's
# Stop (read from the rollout for that call: the continuation is not
# imported), and a killed turn's call the hook let through is in doubt once
# the session resumes: its session stays open (invariant 8: a session closes
# when every call has an outcome) until `recover --apply` settles it, and
# the next Stop closes it
E='"session_id":"fx-turns","transcript_path":"'$PWD'/rollout.jsonl","cwd":"/home/dev/app","model":"gpt-5","permission_mode":"default"'
cat >rollout.jsonl <<'JSONL'
{"timestamp":"2026-11-22T10:00:00.000Z","type":"session_meta","payload":{"id":"fx-turns","timestamp":"2026-11-22T10:00:00.000Z","cwd":"/home/dev/app","originator":"codex_exec","cli_version":"0.171.0","source":"exec","model_provider":"openai"}}
{"timestamp":"2026-11-22T10:00:00.500Z","type":"turn_context","payload":{"turn_id":"turn-1","cwd":"/home/dev/app","approval_policy":"never","sandbox_policy":{"type":"workspace-write","network_access":false},"model":"gpt-5"}}
{"timestamp":"2026-11-22T10:00:01.000Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\": \"true\"}","call_id":"c1"}}
{"timestamp":"2026-11-22T10:00:01.100Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"Chunk ID: 1\nWall time: 0.0 seconds\nProcess exited with code 0\nOutput:\n"}}
JSONL
ev() { printf '{%s,"turn_id":"%s","hook_event_name":"%s"%s}\n' "$E" "$1" "$2" "${3:-}" | docket hook codex; echo "$2 -> exit $?"; }
pre() { ev "$1" PreToolUse ',"tool_name":"Bash","tool_input":{"command":"'"$2"'"},"tool_use_id":"'"$3"'"'; }
post() { ev "$1" PostToolUse ',"tool_name":"Bash","tool_input":{"command":"'"$2"'"},"tool_response":"","tool_use_id":"'"$3"'"'; }
ev turn-1 SessionStart ',"source":"startup"'
ev turn-1 UserPromptSubmit ',"prompt":"check"'
pre turn-1 true c1
post turn-1 true c1
ev turn-1 Stop ',"stop_hook_active":false'
docket sessions --json | jq -r '[.session, .state] | join(" ")' | sort
# turn 2: make fails, and the rollout has its outcome only after PostToolUse
ev turn-2 UserPromptSubmit ',"prompt":"build"'
pre turn-2 make c2
post turn-2 make c2
docket pending --json | jq -r '[.session, .invocation, .state] | join(" ")'
cat >>rollout.jsonl <<'JSONL'
{"timestamp":"2026-11-22T10:01:01.000Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\": \"make\"}","call_id":"c2"}}
{"timestamp":"2026-11-22T10:01:03.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c2","output":"Chunk ID: 2\nWall time: 2.0 seconds\nProcess exited with code 2\nOutput:\nmake: *** No targets.\n"}}
JSONL
ev turn-2 Stop ',"stop_hook_active":false'
# turn 3 (codex exec resume): killed mid-call, then resumed
ev turn-3 SessionStart ',"source":"resume"'
pre turn-3 "sleep 60" c3
ev turn-4 SessionStart ',"source":"resume"'
ev turn-4 Stop ',"stop_hook_active":false'
docket sessions --json | jq -r '[.session, .state] | join(" ")' | sort
docket log --json | jq -c 'select(.type == "session.opened" or .type == "tool.completed" or .type == "tool.dispatched")
	| [.session, .type, .invocation, .status, .exit_code, .labels.continues] | map(select(. != null))'
docket pending
docket recover --apply >/dev/null
ev turn-5 Stop ',"stop_hook_active":false'
docket sessions --json | jq -r '[.session, .state] | join(" ")' | sort
docket verify >/dev/null && echo verified
