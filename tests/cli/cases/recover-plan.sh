docket init >/dev/null
docket record "$FIXTURES/runtime/in-doubt.jsonl" >/dev/null
docket recover
