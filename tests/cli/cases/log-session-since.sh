seed sessions/demo-basic.jsonl sessions/open-pending.jsonl
docket log --session build-42 --since "#30"
