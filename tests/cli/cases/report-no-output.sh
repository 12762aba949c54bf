seed sessions/demo-basic.jsonl
docket report
