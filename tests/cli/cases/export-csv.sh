seed sessions/demo-basic.jsonl
docket export --format csv | tr -d "\r"
