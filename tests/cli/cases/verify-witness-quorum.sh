# verify --witness NOTE --witness-key KEY... --witnesses N: N of the given
# witness keys must have co-signed a checkpoint that is the ledger's tree.
seed sessions/demo-basic.jsonl
for n in k w1 w2 w3 stranger; do docket keygen -o $n >/dev/null; done
docket checkpoint --key k -o cp.note >/dev/null
docket witness --state s1 --pubkey k.pub --key w1 cp.note -o by1.note 2>/dev/null
docket witness --state s2 --pubkey k.pub --key w2 by1.note -o by12.note 2>/dev/null
docket witness --state s3 --pubkey k.pub --key stranger cp.note -o bys.note 2>/dev/null
grep -c '^— ' by12.note
v() { docket verify --pubkey k.pub "$@" | tail -n 1 | sed -E 's/key [0-9a-f]{16}/key <key>/'; echo "exit ${PIPESTATUS[0]}"; }
v --witness by12.note --witness-key w1.pub --witness-key w2.pub --witness-key w3.pub --witnesses 2
v --witness by12.note --witness-key w1.pub --witness-key w2.pub --witness-key w3.pub --witnesses 3
v --witness by12.note --witness-key w1.pub --witness-key w2.pub
# two notes, one witness each: counted together
v --witness by1.note --witness bys.note --witness-key w1.pub --witness-key stranger.pub
# a cosignature by a key not given is not counted
v --witness bys.note --witness-key w3.pub
# the same key twice counts once
v --witness by1.note --witness-key w1.pub --witness-key w1.pub --witnesses 2
# a witnessed note of a forked copy fails whatever co-signed it
cp -a ledger fork
sed 's/build-42/build-43/g' "$FIXTURES/sessions/open-pending.jsonl" >other.jsonl
docket -L fork record other.jsonl >/dev/null
docket record "$FIXTURES/sessions/open-pending.jsonl" >/dev/null
docket -L fork checkpoint --key k -o f.note >/dev/null
docket witness --state s4 --pubkey k.pub --key w1 f.note -o fw.note 2>/dev/null
v --witness fw.note --witness-key w1.pub
docket verify --pubkey k.pub --witness cp.note --witnesses 3 2>&1; echo "exit $?"
