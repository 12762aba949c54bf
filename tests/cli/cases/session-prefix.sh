# a unique prefix names a session in show, log, pending, audit, export and
# report; a prefix of a session and its subagents names the session; two
# sessions that share a prefix are ambiguous (exit 2, the candidates listed)
seed sessions/audit-risky.jsonl
cat > sub.jsonl <<'JSONL'
{"type":"session.opened","session":"careful-claude/agent-a1","parent":"careful-claude","runtime":"claude-code/2.1.80","platform":"macos","cwd":"/Users/bo/app","time":"2026-01-05T11:00:02.000Z"}
{"type":"session.opened","session":"care-2","runtime":"claude-code/2.1.80","platform":"macos","cwd":"/Users/bo/other","time":"2026-01-05T12:00:00.000Z"}
JSONL
docket record sub.jsonl >/dev/null
docket show risky | head -1
docket show careful | head -1
docket show careful-claude/ | head -1
docket log --session risky-c --type session.opened | tail -1 | awk '{print $3, $4}'
docket pending --session risky | tail -1 | awk '{print $1, $2}'
docket audit --session risk --json | jq -r '.risky_sessions[0].session'
docket export --session risky -f csv | tail -1 | cut -d, -f1,2
docket show care; echo "exit $?"
docket show nope; echo "exit $?"
