# flip a byte inside the payload of seq 11 (the npm test output)
seed sessions/demo-basic.jsonl
flip_bytes ledger/data.mdb "42 passing"
docket verify
