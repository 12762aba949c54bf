# prove one approved call and check its receipt offline: the story names
# who approved what, when, under which policy revision
seed sessions/demo-basic.jsonl
docket keygen -o k >/dev/null
docket checkpoint --key k >/dev/null
docket prove demo-basic call_rm_build -o r.json 2>&1 | sed -E 's/[0-9]+ bytes/N bytes/'
docket verify-receipt r.json --pubkey k.pub >out
echo "exit $?"
sed -E 's/ledger [0-9a-f]{32}/ledger <id>/' out
# --redact with no secret in the call's events changes none: every event
# keeps its bytes, the receipt is fully verified (exit 0)
docket prove demo-basic call_rm_build --redact -o rr.json 2>/dev/null
docket verify-receipt rr.json --pubkey k.pub | tail -1
echo "exit ${PIPESTATUS[0]}"
# pseudonymised: every event changes, so every event is proved by leaf hash
# only and shown only as redacted; exit 4, "verified with redacted events"
docket keygen --hmac -o h >/dev/null
docket prove demo-basic call_rm_build --pseudonymize h -o rp.json 2>&1 | sed -E 's/[0-9]+ bytes/N bytes/'
docket verify-receipt rp.json --pubkey k.pub | sed -E 's/ledger [0-9a-f]{32}/ledger <id>/; s/session-[0-9a-f]{16}/session-<pseudonym>/'
echo "exit ${PIPESTATUS[0]}"
