seed sessions/demo-basic.jsonl
docket export --format xml
