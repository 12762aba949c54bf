seed sessions/demo-basic.jsonl sessions/open-pending.jsonl
docket verify
