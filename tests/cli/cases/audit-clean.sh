# nothing to worry about: attention 0 and --fail exits 0; the careful
# session's refusal still counts (attention is never 0 while a list is not empty)
seed sessions/audit-risky.jsonl
cat > clean.jsonl <<'JSONL'
{"type":"session.opened","session":"clean","runtime":"codex/0.77.0","platform":"linux","cwd":"/w","time":"2026-01-06T10:00:00.000Z"}
{"type":"tool.intent","session":"clean","invocation":"c1","tool":"shell","args":{"command":["ls"]},"time":"2026-01-06T10:00:01.000Z"}
{"type":"tool.dispatched","session":"clean","invocation":"c1","time":"2026-01-06T10:00:01.100Z"}
{"type":"tool.completed","session":"clean","invocation":"c1","status":"ok","exit_code":0,"time":"2026-01-06T10:00:01.200Z"}
JSONL
docket record clean.jsonl >/dev/null
docket audit --session clean --fail | head -1
echo "exit ${PIPESTATUS[0]}"
docket audit --session careful-claude --fail >/dev/null
echo "exit $?"
