# hooks fail open in Claude Code, so in enforce mode every internal error at
# PreToolUse denies (exit 2, the reason on stderr): an unwritable ledger, an
# unreadable policy, input that is not a hook event. Without --enforce the
# same errors are non-blocking (exit 1): recording failed, the call goes on
export HOME=$PWD/home DOCKET_CLAUDE_MANAGED_SETTINGS=$PWD/none
P='{"session_id":"fx-f","cwd":"/home/dev/app","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git status"},"tool_use_id":"toolu_f"}'
touch not-a-directory
echo "$P" | docket -L not-a-directory/ledger hook claude --enforce --policy "$FIXTURES/policies/team.yaml"
echo "unwritable ledger, enforce: exit $?"
echo "$P" | docket -L not-a-directory/ledger hook claude
echo "unwritable ledger, record only: exit $?"
docket init >/dev/null
mkdir -p broken/data.mdb  # a ledger whose data file cannot be opened (works as root too)
echo "$P" | docket -L broken hook claude --enforce --policy "$FIXTURES/policies/team.yaml" 2>/dev/null
echo "broken ledger, enforce: exit $?"
echo "$P" | docket hook claude --enforce --policy "$FIXTURES/policies/syntax-error.yaml" 2>/dev/null
echo "bad policy, enforce: exit $?"
echo 'not json' | docket hook claude --enforce --policy "$FIXTURES/policies/team.yaml" 2>/dev/null
echo "bad input, enforce: exit $?"
echo 'not json' | docket hook claude 2>/dev/null
echo "bad input, record only: exit $?"
# a Stop that fails is not blocked (exit 2 there would mean "keep going")
echo '{"session_id":"fx-f","hook_event_name":"Stop"}' | docket -L not-a-directory/ledger hook claude --enforce --policy "$FIXTURES/policies/team.yaml" 2>/dev/null
echo "unwritable ledger at Stop, enforce: exit $?"
docket hook claude --enforce </dev/null
echo "--enforce without --policy: exit $?"
docket log | tail -n +2 | wc -l
