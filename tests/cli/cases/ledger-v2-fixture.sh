# The frozen format-2 ledger (fixtures/ledger-v2, written by a820056): this
# docket reads it as it is, and `docket migrate` converts it in place. Every
# seq, time and hash is kept: log --json is byte-identical to the format-2
# binary's, its two signed checkpoints still verify with the key that signed
# them, and replay, pending, sessions and show print the same before and after.
mkdir -m 700 ledger
cp "$FIXTURES/ledger-v2/data.mdb" ledger/ && chmod 600 ledger/data.mdb
reads() {
	docket log --json | cmp - "$FIXTURES/ledger-v2/log.jsonl" && echo "log --json: identical to the format-2 binary's"
	docket replay --policy "$FIXTURES/policies/team.yaml" --json >"replay.$1"
	docket pending --json >"pending.$1"
	docket sessions --json >"sessions.$1"
	docket show big >"show.$1"
	docket export --format jsonl --output "export.$1"
}
# a format-2 ledger takes appends as it is (in format-2 segments)
mkdir -m 700 other
cp "$FIXTURES/ledger-v2/data.mdb" other/ && chmod 600 other/data.mdb
docket -L other record "$FIXTURES/sessions/audit-risky.jsonl"
docket -L other verify
docket -L other migrate --json | jq -c '{rewritten, from_format, to_format, events}'
docket -L other verify
docket verify --pubkey "$FIXTURES/ledger-v2/checkpoint-key.pub"
docket stats | grep '^format'
reads before
docket migrate | sed -E 's/head [0-9a-f]{16}/head H/; s/[0-9]+ -> [0-9]+ bytes/N -> M bytes/'
docket verify --pubkey "$FIXTURES/ledger-v2/checkpoint-key.pub"
reads after
for f in replay pending sessions show export; do
	cmp "$f.before" "$f.after" && echo "$f: the same after migrate ($(wc -l <"$f.after") lines)"
done
docket stats --json | jq -c '{events, chain_head, format}'
ls -a ledger | grep -v '^\.\.\?$'
ls -a . | grep -c rewrite
# a second migrate has nothing to do
docket migrate | sed -E 's/head [0-9a-f]{16}/head H/'
# the migrated ledger appends and verifies as any other
docket record "$FIXTURES/sessions/audit-risky.jsonl"
docket verify
docket log --json >all.jsonl
head -n 852 all.jsonl | cmp - "$FIXTURES/ledger-v2/log.jsonl" && echo "the 852 old events: unchanged"
