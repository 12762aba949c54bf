# show tells what it knows: an imported approval stamped at its answer has an
# unknown wait (not "waited 0ms"), an outcome written by recovery is not a
# run time, a denial's reason is not repeated after its status, and an
# escalation shows its justification
docket init >/dev/null
cat > s.jsonl <<'JSONL'
{"type":"runtime.started","runtime":"codex/0.77.0","time":"2026-01-05T10:00:00.000Z"}
{"type":"session.opened","session":"h","runtime":"codex/0.77.0","platform":"linux","cwd":"/w","time":"2026-01-05T10:00:01.000Z"}
{"type":"tool.intent","session":"h","invocation":"c_esc","tool":"shell","args":{"command":["git","push"],"sandbox_permissions":"require_escalated","justification":"Need network access to push"},"time":"2026-01-05T10:00:02.000Z"}
{"type":"approval.requested","session":"h","invocation":"c_esc","request":"r1","reviewer":"user","provenance":{"file":"x.jsonl","line":7},"time":"2026-01-05T10:00:09.000Z"}
{"type":"approval.settled","session":"h","invocation":"c_esc","request":"r1","result":"denied","actor":"user","provenance":{"file":"x.jsonl","line":7},"time":"2026-01-05T10:00:09.000Z"}
{"type":"tool.completed","session":"h","invocation":"c_esc","status":"denied","error":"denied: don't ask mode","time":"2026-01-05T10:00:09.000Z"}
{"type":"tool.intent","session":"h","invocation":"c_rec","tool":"shell","args":{"command":["make"]},"recovery":"never_auto_retry","time":"2026-01-05T10:00:10.000Z"}
{"type":"tool.dispatched","session":"h","invocation":"c_rec","time":"2026-01-05T10:00:10.100Z"}
JSONL
docket record s.jsonl >/dev/null
docket recover --apply >/dev/null
docket show h | tail -n +6 | sed -E -e 's/^( +)[0-9T:.-]+Z/\1<time>/' -e 's/recovery [0-9hmsm .]+ after/recovery <d> after/'
