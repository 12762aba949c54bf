docket init >/dev/null
docket import --json claude "$FIXTURES/import/claude-bypass.jsonl"
