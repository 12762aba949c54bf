docket init >/dev/null
cp "$FIXTURES/bad/policy-gap.jsonl" input.jsonl
docket record input.jsonl
