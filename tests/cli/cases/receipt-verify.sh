# prove one approved call and check its receipt offline: the story names
# who approved what, when, under which policy revision
seed sessions/demo-basic.jsonl
docket keygen -o k >/dev/null
docket checkpoint --key k >/dev/null
docket prove demo-basic call_rm_build -o r.json 2>&1 | sed -E 's/[0-9]+ bytes/N bytes/'
docket verify-receipt r.json --pubkey k.pub >out
echo "exit $?"
sed -E 's/ledger [0-9a-f]{32}/ledger <id>/' out
# redacted: only the leaf hashes are proved, and it says so
docket prove demo-basic call_rm_build --redact -o rr.json 2>/dev/null
docket verify-receipt rr.json --pubkey k.pub | grep -E '^(REDACTED|verified)'
