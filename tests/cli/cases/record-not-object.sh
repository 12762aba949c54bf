docket init >/dev/null
cp "$FIXTURES/bad/not-object.jsonl" input.jsonl
docket record input.jsonl
