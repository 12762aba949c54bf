seed sessions/demo-basic.jsonl
docket log
