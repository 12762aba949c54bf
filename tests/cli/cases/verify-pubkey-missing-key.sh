seed sessions/demo-basic.jsonl
docket verify --pubkey nope.pub
