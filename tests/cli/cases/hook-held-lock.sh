# another process holds the ledger's writer lock (a long record, compact, a
# stuck process): a call docket denies is denied within the budget, never
# run; its records wait in the spool (verify says so) and reach the chain
# with the next write, in order, with the time the hook saw them
export HOME=$PWD/home DOCKET_CLAUDE_MANAGED_SETTINGS=$PWD/none
docket init >/dev/null
E='"session_id":"fx-lock","cwd":"/home/dev/app","hook_event_name":"PreToolUse","tool_name":"Bash"'
python3 "$FIXTURES/hooks/hold_lock.py" ledger 3 ready &
wait_for ready holding
printf '{%s,"tool_input":{"command":"rm -rf build"},"tool_use_id":"toolu_deny"}\n' "$E" |
	docket hook claude --enforce --policy "$FIXTURES/policies/team.yaml" --budget 400
echo "exit $?"
docket verify
ls ledger/spool | wc -l
wait
printf '{%s,"tool_input":{"command":"git status"},"tool_use_id":"toolu_next"}\n' "$E" |
	docket hook claude --enforce --policy "$FIXTURES/policies/team.yaml"
echo "exit $?"
docket log --json | jq -c '[.seq, .type, .invocation]'
ls ledger/spool | wc -l
docket verify
