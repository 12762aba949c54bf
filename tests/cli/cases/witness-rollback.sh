# A rollback (a smaller size than the witness saw), a tampered consistency
# proof, a note signed by another key: refused, nothing co-signed (exit 1).
seed sessions/demo-basic.jsonl
docket keygen -o k >/dev/null
docket keygen -o other >/dev/null
docket checkpoint --key k -o cp1.note >/dev/null
docket record "$FIXTURES/sessions/open-pending.jsonl" >/dev/null
docket checkpoint --key k -o cp2.note >/dev/null
docket checkpoint --consistency cp1.note -o proof >/dev/null
mask() { sed -E 's/[0-9a-f]{32}/<id>/g; s/key ID [0-9a-f]{8}/key ID <id>/'; }
docket witness --state ws --pubkey k.pub cp1.note >/dev/null 2>&1
# one hash of the proof changed (its first character)
awk 'NR == 2 { c = substr($0, 1, 1); $0 = (c == "A" ? "B" : "A") substr($0, 2) } { print }' proof >bad-proof
docket witness --state ws --pubkey k.pub --key k --proof bad-proof cp2.note 2>&1 | mask
echo "bad proof: exit ${PIPESTATUS[0]}"
# a proof from another size
sed '1s/.*/old 20/' proof >other-size
docket witness --state ws --pubkey k.pub --proof other-size cp2.note 2>&1 | mask
echo "other size: exit ${PIPESTATUS[0]}"
# the note verified with another log key
docket witness --state ws --pubkey other.pub --proof proof cp2.note 2>&1 | mask
echo "other key: exit ${PIPESTATUS[0]}"
docket witness --state ws --pubkey k.pub --proof proof cp2.note 2>&1 | mask
echo "good proof: exit ${PIPESTATUS[0]}"
# now size 34 is what it saw: size 24 is a rollback
docket witness --state ws --pubkey k.pub --key k cp1.note 2>&1 | mask
echo "rollback: exit ${PIPESTATUS[0]}"
