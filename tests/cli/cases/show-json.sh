seed sessions/demo-basic.jsonl
docket show --json demo-basic
