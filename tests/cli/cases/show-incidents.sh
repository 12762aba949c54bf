# spooled records the ledger refused when it folded them (ledger.incident
# events, in no session) are shown by `show` with the session whose entry
# names it: in the call's timeline when the call is known, else under
# "other events", and in --json as "incidents"; `sessions` counts them.
# Another session's incidents are not shown.
export HOME=$PWD
hook() { docket hook codex </dev/stdin >/dev/null || echo "hook: exit $?"; }
echo '{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t1","cwd":"/w"}' | hook
echo '{"session_id":"s2","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"u1","cwd":"/w"}' | hook
docket pending >/dev/null   # a reader folds first: the hooks' records are in the chain
mkdir -m 700 -p "$DOCKET_LEDGER/spool"
e() { printf '%s\n' "$2" >"$DOCKET_LEDGER/spool/000000000000000$1-0000000001-00000000.json"; }
e 1 '{"type":"tool.dispatched","session":"s1","invocation":"t1"}'
e 2 '{"type":"tool.dispatched","session":"s1","invocation":"gone"}'
e 3 '{"type":"tool.completed","session":"s1","invocation":"t1","status":"bogus"}'
e 4 '{"type":"tool.dispatched","session":"s2","invocation":"nope"}'
e 5 'not json'
echo '{"session_id":"s3","hook_event_name":"UserPromptSubmit","cwd":"/w"}' | hook   # folds the spool
docket show s1 | sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z/<time>/g'
docket show s1 --json | jq -c '.incidents | map([.seq, .file])'
docket show s2 --json | jq -c '.incidents | map([.seq, .file])'
docket sessions | sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z/<time>/g'
docket sessions --json | jq -c '[.session, .incidents]'
