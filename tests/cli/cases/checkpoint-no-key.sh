seed sessions/demo-basic.jsonl
docket checkpoint
