# flip a byte of the chain hash the segment stores: its events decode, but
# the chain over them no longer ends where the segment says; verify names the
# segment's last seq (24)
seed sessions/demo-basic.jsonl
flip_segment ledger/data.mdb hash
docket verify --json | jq -c '{ok, first_bad_seq, problem: (.problem | test("chain hash does not match the events of seqs 1-24"))}'
