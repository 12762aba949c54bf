# an imported call records no decision (the transcript says what happened,
# not why): its receipt verifies and says so, never an empty verdict "under
# policy revision 0" (issue 29)
docket init >/dev/null
docket import codex "$FIXTURES/import/codex-basic.jsonl" >/dev/null
docket keygen -o k >/dev/null
docket checkpoint --key k >/dev/null
docket prove fx-codex-1 call_rejected -o r.json >/dev/null 2>&1
docket verify-receipt r.json --pubkey k.pub | sed -E 's/ledger [0-9a-f]{32}/ledger <id>/'
echo "exit ${PIPESTATUS[0]}"
# a call made after the session's policy was recorded: the receipt shows the
# revision in force (the intent cites none), which comes before the intent
docket prove fx-codex-1 call_local -o l.json >/dev/null 2>&1
docket verify-receipt l.json --pubkey k.pub | sed -E 's/ledger [0-9a-f]{32}/ledger <id>/'
echo "exit ${PIPESTATUS[0]}"
