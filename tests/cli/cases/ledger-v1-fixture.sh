# The frozen format-1 ledger (fixtures/ledger-v1, written by 420496a). This
# docket does not read format 1: every command names `docket migrate`, which
# converts it in place. Every seq, time and hash is kept: log --json is
# byte-identical to the format-1 binary's and its two signed checkpoints
# still verify with the key that signed them.
mkdir -m 700 ledger
cp "$FIXTURES/ledger-v1/data.mdb" ledger/ && chmod 600 ledger/data.mdb
docket verify 2>&1 | grep -o 'is in format 1; .*'
echo "verify: exit ${PIPESTATUS[0]}"
docket log >/dev/null 2>&1; echo "log: exit $?"
docket migrate | sed -E 's/head [0-9a-f]{16}/head H/; s/[0-9]+ -> [0-9]+ bytes/N -> M bytes/'
docket verify --pubkey "$FIXTURES/ledger-v1/checkpoint-key.pub"
docket log --json | cmp - "$FIXTURES/ledger-v1/log.jsonl" && echo "log --json: identical to the format-1 binary's"
docket stats --json | jq -c '{events, chain_head}'
ls -a ledger | grep -v '^\.\.\?$'
ls -a . | grep -c rewrite
# a second migrate has nothing to do
docket migrate | sed -E 's/head [0-9a-f]{16}/head H/'
# the migrated ledger appends and verifies as any other
docket record "$FIXTURES/sessions/open-pending.jsonl"
docket verify
docket log --json >all.jsonl
head -n 708 all.jsonl | cmp - "$FIXTURES/ledger-v1/log.jsonl" && echo "the 708 old events: unchanged"
