# The frozen format-1 ledger (fixtures/ledger-v1, written by 420496a) still
# reads as that binary read it: same verdict from verify, same log --json.
mkdir -m 700 ledger
cp "$FIXTURES/ledger-v1/data.mdb" ledger/ && chmod 600 ledger/data.mdb
docket verify --pubkey "$FIXTURES/ledger-v1/checkpoint-key.pub"
docket log --json | cmp - "$FIXTURES/ledger-v1/log.jsonl" && echo "log --json: identical to the format-1 binary's"
