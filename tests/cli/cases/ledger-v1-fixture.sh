# The frozen format-1 ledger (fixtures/ledger-v1, written by 420496a) still
# reads as that binary read it: same chain verdict from verify (its indexes,
# written by an older docket, are not compared), same log --json.
mkdir -m 700 ledger
cp "$FIXTURES/ledger-v1/data.mdb" ledger/ && chmod 600 ledger/data.mdb
docket verify --pubkey "$FIXTURES/ledger-v1/checkpoint-key.pub"
docket log --json | cmp - "$FIXTURES/ledger-v1/log.jsonl" && echo "log --json: identical to the format-1 binary's"
# the first append through this docket rebuilds the indexes the format-1 code
# wrote (projection version 1, without the authority fields of issue 10);
# after it verify compares them all again
docket record "$FIXTURES/sessions/open-pending.jsonl"
docket verify
docket log --json >all.jsonl
head -n 708 all.jsonl | cmp - "$FIXTURES/ledger-v1/log.jsonl" && echo "the 708 old events: unchanged"
