# a data file cut short (a copy that stopped early): verify says the data
# file is corrupt, exit 1, no SIGBUS; with --json too
seed sessions/demo-basic.jsonl
truncate -s 16K ledger/data.mdb
docket verify
echo "exit $?"
docket verify --json | jq -c '{ok, problem: (.problem | test("^the data file is corrupt: .*truncated"))}'
