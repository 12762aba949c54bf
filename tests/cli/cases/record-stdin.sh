docket init >/dev/null
docket record < "$FIXTURES/sessions/demo-basic.jsonl"
docket sessions
