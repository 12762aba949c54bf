# A redacted event is shown only as redacted: nothing of its text (result,
# verdict, status) is drawn from it, and verify-receipt exits 4 ("verified
# with redacted events"), never 0. So a plain receipt turned into a redacted
# one, its shown result edited to approved/ok, cannot pass as verified.
seed sessions/demo-basic.jsonl
docket keygen -o k >/dev/null
# a call whose intent holds a secret: --redact redacts that event only
printf '%s\n' '{"type":"session.opened","session":"sx"}' \
	'{"type":"tool.intent","session":"sx","invocation":"c1","tool":"http_request","args":{"url":"https://api.example.com","headers":{"Authorization":"Bearer abcdefghijklmnop"}},"decision":{"verdict":"approval_required","source":"runtime"}}' \
	'{"type":"approval.requested","session":"sx","invocation":"c1","request":"r1","reviewer":"user","prompt":"call the API?","time":"2025-03-14T10:00:00Z"}' \
	'{"type":"approval.settled","session":"sx","invocation":"c1","request":"r1","result":"denied","actor":"user:ana","time":"2025-03-14T10:00:05Z"}' \
	'{"type":"tool.completed","session":"sx","invocation":"c1","status":"denied","time":"2025-03-14T10:00:05.1Z"}' |
	docket record - >/dev/null
docket checkpoint --key k >/dev/null
docket prove sx c1 --redact -o mixed.json 2>/dev/null
jq -c '[.redacted, [.events[] | if .bytes then "bytes" else "leaf_hash" end]]' mixed.json
docket verify-receipt mixed.json --pubkey k.pub | sed -E 's/ledger [0-9a-f]{32}/ledger <id>/'
echo "exit ${PIPESTATUS[0]}"
# the forgery: a plain receipt of a denied call turned into a "redacted" one
# (each event's bytes replaced by their leaf hash), its settlement and
# outcome edited to approved by user:ceo, ok
docket prove demo-basic call_fetch_script -o plain.json 2>/dev/null
python3 - <<'PY'
import base64, hashlib, json
r = json.load(open("plain.json"))
def redact(e, **edit):
    raw = base64.b64decode(e.pop("bytes"))
    e["leaf_hash"] = base64.b64encode(hashlib.sha256(b"\0" + raw).digest()).decode()
    e["event"].update(edit)
forged = json.loads(json.dumps(r))
forged["redacted"] = True
for e in forged["events"]:
    if e["type"] == "approval.settled":
        redact(e, result="approved", actor="user:ceo")
    elif e["type"] == "tool.completed":
        redact(e, status="ok")
    else:
        redact(e)
json.dump(forged, open("forged.json", "w"))
unmarked = json.loads(json.dumps(forged))
unmarked["redacted"] = False
json.dump(unmarked, open("unmarked.json", "w"))
both = json.loads(json.dumps(forged))
for e in both["events"]:
    if "leaf_hash" in e:
        e["bytes"] = "AAAA"
json.dump(both, open("both.json", "w"))
PY
docket verify-receipt plain.json --pubkey k.pub | grep -E 'approval.settled|tool.completed'
echo "plain: exit ${PIPESTATUS[0]}"
docket verify-receipt forged.json --pubkey k.pub >forged.out
echo "forged: exit $?"
grep -E 'approved|user:ceo|tool.completed +ok' forged.out || echo "forged: no edited text shown"
grep -E '^(NOT|  1[78]|verified)' forged.out
for f in unmarked both; do docket verify-receipt $f.json --pubkey k.pub >/dev/null; echo "$f: exit $?"; done
