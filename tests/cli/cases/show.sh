seed sessions/demo-basic.jsonl
docket show demo-basic
