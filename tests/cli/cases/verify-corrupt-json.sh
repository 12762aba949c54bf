seed sessions/demo-basic.jsonl
flip_bytes ledger/data.mdb "42 passing"
docket verify --json | grep -E '"(ok|first_bad_seq)"'
