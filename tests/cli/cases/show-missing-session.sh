seed sessions/demo-basic.jsonl
docket show nope
