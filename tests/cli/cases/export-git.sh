seed sessions/demo-basic.jsonl
docket export --format git --repo archive
docket export --format git --repo archive
docket record "$FIXTURES/sessions/open-pending.jsonl" >/dev/null
docket export --format git --repo archive
docket verify --git archive
