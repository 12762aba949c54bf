seed sessions/demo-basic.jsonl
docket stats
