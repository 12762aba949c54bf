# Malformed notes are refused with the reason (exit 1), never co-signed; a
# state file the witness cannot parse stops it (exit 3).
seed sessions/demo-basic.jsonl
docket keygen -o k >/dev/null
docket checkpoint --key k -o cp.note >/dev/null
try() { docket witness --state ws --pubkey k.pub --key k "$1" 2>&1 | sed -E 's/[0-9a-f]{32}/<id>/g'; echo "$1: exit ${PIPESTATUS[0]}"; }
sed '4d' cp.note >no-blank.note; try no-blank.note
sed 's/$/\r/' cp.note >crlf.note; try crlf.note
sed '3s/=$/*/' cp.note >bad-b64.note; try bad-b64.note
{ printf 'x%.0s' $(seq 1 9000); echo; cat cp.note; } >long.note; try long.note
{ printf '\xff\xfe\n'; cat cp.note; } >latin.note; try latin.note
head -c 100 cp.note >cut.note; try cut.note
sed '2s/^/0/' cp.note >zero.note; try zero.note
: >empty.note; try empty.note
# nothing was stored by any of them: the real one is the first seen
docket witness --state ws --pubkey k.pub cp.note 2>&1 | grep -o 'trusted on first use'
echo garbage >ws/$(ls ws | grep '\.note$')
docket witness --state ws --pubkey k.pub cp.note 2>&1 | grep -o 'cannot be used'
echo "damaged state: exit ${PIPESTATUS[0]}"
chmod 755 ws
docket witness --state ws --pubkey k.pub cp.note 2>&1 | grep -o 'accessible by others'
