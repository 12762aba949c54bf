seed sessions/demo-basic.jsonl
docket keygen -o k >/dev/null
docket checkpoint --key k >/dev/null
docket verify --json --pubkey k.pub | jq -c "{ok, events_checked, c: (.checkpoints | {ok, checked, covered_seq, head_seq, witness})}"
