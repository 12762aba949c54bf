seed sessions/demo-basic.jsonl
docket keygen -o k >/dev/null
docket verify --pubkey k.pub
