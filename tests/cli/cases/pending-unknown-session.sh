seed sessions/demo-basic.jsonl
docket pending --session nope
