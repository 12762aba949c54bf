seed sessions/demo-basic.jsonl
docket log --session nope
