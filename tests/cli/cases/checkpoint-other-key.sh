seed sessions/demo-basic.jsonl
docket keygen -o k1 >/dev/null
docket keygen -o k2 >/dev/null
docket checkpoint --key k1 >/dev/null
docket record "$FIXTURES/sessions/open-pending.jsonl" >/dev/null
docket checkpoint --key k2
