docket record "$FIXTURES/sessions/demo-basic.jsonl"
