# A forked log: two checkpoints of the same size with different roots (two
# copies of one ledger grown differently, signed by the same key). The
# witness co-signs the first and refuses the second.
seed sessions/demo-basic.jsonl
docket keygen -o k >/dev/null
cp -a ledger fork
docket record "$FIXTURES/sessions/open-pending.jsonl" >/dev/null
sed 's/build-42/build-43/g' "$FIXTURES/sessions/open-pending.jsonl" >other.jsonl
docket -L fork record other.jsonl >/dev/null
docket checkpoint --key k -o a.note >/dev/null
docket -L fork checkpoint --key k -o b.note >/dev/null
sed -n 2p a.note b.note
docket witness --state ws --pubkey k.pub a.note >/dev/null 2>&1; echo "first: exit $?"
docket witness --state ws --pubkey k.pub --key k b.note 2>&1 | sed -E 's/[0-9a-f]{32}/<id>/g'
echo "exit ${PIPESTATUS[0]}"
# nothing was recorded: the first one is still accepted
docket witness --state ws --pubkey k.pub a.note >/dev/null 2>&1; echo "again: exit $?"
# and the fork's own consistency proof from the first note is refused too
docket -L fork checkpoint --consistency a.note 2>&1 | sed -E 's/[0-9a-f]{32}/<id>/g'
