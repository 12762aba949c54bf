docket init >/dev/null
head -n 3 "$FIXTURES/sessions/demo-basic.jsonl" > first.jsonl
tail -n +4 "$FIXTURES/sessions/demo-basic.jsonl" | docket record first.jsonl -
