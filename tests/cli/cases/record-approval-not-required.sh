docket init >/dev/null
cp "$FIXTURES/bad/approval-not-required.jsonl" input.jsonl
docket record input.jsonl
