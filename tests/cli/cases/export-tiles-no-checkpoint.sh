seed sessions/demo-basic.jsonl
docket export --format tlog-tiles pub
