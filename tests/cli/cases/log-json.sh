seed sessions/demo-basic.jsonl
docket log --json --since "#10" | mask_hashes
