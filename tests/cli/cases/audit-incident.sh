# a spool entry the ledger refuses when it folds it (an intent for a session
# closed meanwhile) becomes a ledger.incident (docs/write-path.md): the risk
# view lists it and counts it, in the terminal and on the report's first
# screen, never a green "needs attention 0"
cat > closed.jsonl <<'JSONL'
{"type":"session.opened","session":"s1","runtime":"claude-code/2.0.1","platform":"linux","cwd":"/w","time":"2026-01-06T10:00:00.000Z"}
{"type":"session.closed","session":"s1","time":"2026-01-06T10:05:00.000Z"}
JSONL
cat > later.jsonl <<'JSONL'
{"type":"session.opened","session":"s2","runtime":"codex/0.77.0","platform":"linux","cwd":"/w","time":"2026-01-06T11:00:00.000Z"}
JSONL
docket init >/dev/null
docket record closed.jsonl >/dev/null
mkdir -m 700 "$DOCKET_LEDGER/spool"
printf '%s' '{"type":"tool.intent","session":"s1","invocation":"late","tool":"shell","args":{"command":["git","push","--force"]},"time":"2026-01-06T10:06:00.000Z"}' \
	>"$DOCKET_LEDGER/spool/0000000000000001-4242-0.json"
# any write folds the spool first
docket record later.jsonl >/dev/null
# the incident's time is when it was folded: masked
docket audit | sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z/<folded>/'
docket audit --fail >/dev/null || echo "exit $?"
docket audit --json | python3 -c 'import json,sys; f=json.load(sys.stdin); i=f["incidents"][0]; print(f["attention"], len(f["incidents"]), i["seq"], i["kind"], i["file"])'
# from seq 4 on, the incident (seq 3) is not in scope
docket audit --since '#4' --json | python3 -c 'import json,sys; f=json.load(sys.stdin); print(f["attention"], len(f["incidents"]))'
docket report -o r.html >/dev/null
python3 - <<'PY'
html = open("r.html", encoding="utf-8").read()
risk, glance = html.index('id="risk"'), html.index("At a glance")
inc = html.index('id="incidents"')
print("attention card red:", 'card bad attention' in html[:risk])
print("incidents in the risk view:", risk < inc < glance)
print("the file and the error on it:", "0000000000000001-4242-0.json" in html[inc:glance],
      "session was closed at seq 2" in html[inc:glance])
PY
