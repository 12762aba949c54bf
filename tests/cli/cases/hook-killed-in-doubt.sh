# Claude Code killed mid-call (issue 27): a call a hook let through at
# PreToolUse whose PostToolUse never came may have run. pending, show and
# recover all say in_doubt, with what to check; never "undecided" nor "ask
# for approval" (which would run it again). The same once the session is
# resumed and ended (a session with a call in doubt stays open), and once
# recover settles the abandoned call (indeterminate).
export HOME=$PWD/home DOCKET_CLAUDE_MANAGED_SETTINGS=$PWD/none
E='"session_id":"fx-kill","cwd":"/home/dev/app","permission_mode":"default"'
ev() { printf '{%s,"hook_event_name":"%s"%s}\n' "$E" "$1" "$2" | docket hook claude; }
ev SessionStart ',"source":"startup"'
ev PreToolUse ',"tool_name":"Bash","tool_input":{"command":"make deploy"},"tool_use_id":"toolu_k1"'
echo "--- killed: nothing more came"
docket pending
docket pending --json | jq -c '[.invocation, .state, .check]'
docket show fx-kill | tail -2 | sed "s/[0-9T:.-]*Z /TIME /"
docket show fx-kill --json | jq -c '.invocations[] | [.invocation, .state, .check]'
docket recover --json | jq -c '.items[] | [.invocation, .state, .action, .events[0].provenance.file]'
echo "--- resumed (a new process), then ended"
ev SessionStart ',"source":"resume"'
ev SessionEnd ',"reason":"exit"'
docket pending --json | jq -c '[.invocation, .state, .check]'
docket show fx-kill --json | jq -c '[.closed, (.invocations[] | [.invocation, .state, (.dispatches | length), .outcome])]'
docket recover --json | jq -c '.items[] | [.invocation, .state, .action]'
echo "--- abandoned: recover settles it"
docket recover --apply --json | jq -c '.items[] | [.invocation, .state, .action, .applied]'
docket pending
docket show fx-kill --json | jq -c '.invocations[] | [.invocation, .state, .outcome.status, .outcome.error]'
