# sessions names each session's client, state, mode (RISKY when it never
# asks or runs unsandboxed), working directory and parent; an imported
# transcript without an end is "no end recorded", not "open"
seed sessions/audit-risky.jsonl
cat > more.jsonl <<'JSONL'
{"type":"session.opened","session":"careful-claude/agent-a1","parent":"careful-claude","runtime":"claude-code/2.1.80","platform":"macos","cwd":"/Users/bo/app/sub","time":"2026-01-05T11:00:02.000Z"}
{"type":"session.opened","session":"imported-1","runtime":"codex/0.98.0","platform":"linux","cwd":"/srv/x","provenance":{"file":"rollout.jsonl","line":1},"time":"2026-01-06T09:00:00.000Z"}
{"type":"policy.revised","session":"imported-1","revision":1,"format":"claude","policy":{"permissions":{"defaultMode":"bypassPermissions"}},"time":"2026-01-06T09:00:00.100Z"}
JSONL
docket record more.jsonl >/dev/null
docket sessions
docket sessions --json | jq -c '[.session, .state, .imported, .risky_mode, .parent]'
