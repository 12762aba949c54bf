# the Merkle tree is checked by verify: a changed frontier (the stored root
# of the log) is reported, and reindex rebuilds it
seed sessions/demo-basic.jsonl
flip_meta ledger/data.mdb merkle 12
docket verify
echo "exit $?"
docket reindex >/dev/null
docket verify
