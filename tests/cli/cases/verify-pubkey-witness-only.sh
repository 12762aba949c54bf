seed sessions/demo-basic.jsonl
docket verify --witness w.json
