seed sessions/demo-basic.jsonl
docket verify --json
