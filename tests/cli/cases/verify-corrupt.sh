# flip a byte inside the compressed payloads of the segment that holds the
# demo session (seq 1..24): verify fails and names a seq of that segment
seed sessions/demo-basic.jsonl
flip_segment ledger/data.mdb body
docket verify
