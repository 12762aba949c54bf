seed sessions/demo-basic.jsonl
docket export --session demo-basic | sed -n 1,4p | mask_hashes
