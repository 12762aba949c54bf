# docket witness: trust on first use, then only checkpoints that extend what
# it saw (a consistency proof from the size it saw), co-signed with its key.
seed sessions/demo-basic.jsonl
docket keygen -o k >/dev/null
docket keygen -o w >/dev/null
docket checkpoint --key k -o cp1.note >/dev/null
mask() { sed -E 's/[0-9a-f]{32}/<id>/g; s/witness\/[0-9a-f]{16}/witness\/<key>/'; }
docket witness --state ws --pubkey k.pub --key w cp1.note -o co1.note 2>&1 | mask
echo "exit ${PIPESTATUS[0]}"
stat -c '%a %n' ws ws/*.note | sed -E 's/[0-9a-f]{64}/<origin hash>/'
# the same checkpoint again: nothing to prove
docket witness --state ws --pubkey k.pub cp1.note 2>&1 | mask
docket record "$FIXTURES/sessions/open-pending.jsonl" >/dev/null
docket checkpoint --key k -o cp2.note >/dev/null
docket checkpoint --consistency cp1.note -o proof | mask
head -1 proof
# a larger checkpoint needs the proof
docket witness --state ws --pubkey k.pub --key w cp2.note 2>&1 | mask
echo "exit ${PIPESTATUS[0]}"
docket witness --state ws --pubkey k.pub --key w --proof proof cp2.note -o co2.note 2>&1 | mask
echo "exit ${PIPESTATUS[0]}"
# the co-signed note: the log's line, then the witness's
grep -c '^— ' co2.note
# the proof file alone is a whole add-checkpoint request (another witness)
docket witness --state ws2 --pubkey k.pub proof 2>&1 | mask
# the proof to the newest checkpoint from itself is empty
docket checkpoint --consistency cp2.note | head -2
