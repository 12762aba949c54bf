# a call that needed approval, was approved and dispatched, and has no
# outcome yet: pending shows its command and "approved", not "approval_required"
docket init >/dev/null
cat > s.jsonl <<'JSONL'
{"type":"session.opened","session":"p","runtime":"codex/0.77.0","platform":"linux","cwd":"/w","time":"2026-01-05T10:00:01.000Z"}
{"type":"tool.intent","session":"p","invocation":"c1","tool":"shell","args":{"command":["git","push","origin","main"]},"decision":{"verdict":"approval_required","source":"runtime"},"time":"2026-01-05T10:00:02.000Z"}
{"type":"approval.requested","session":"p","invocation":"c1","request":"r1","reviewer":"user","time":"2026-01-05T10:00:02.100Z"}
{"type":"approval.settled","session":"p","invocation":"c1","request":"r1","result":"approved","actor":"user:ana","time":"2026-01-05T10:00:04.000Z"}
{"type":"tool.dispatched","session":"p","invocation":"c1","time":"2026-01-05T10:00:04.100Z"}
JSONL
docket record s.jsonl >/dev/null
docket pending
docket pending --json | jq -c '[.call, .state, .verdict, .decision]'
