docket init >/dev/null
cp "$FIXTURES/bad/close-with-pending.jsonl" input.jsonl
docket record input.jsonl
