# every change to a receipt is refused (exit 1), and so is a receipt whose
# checkpoint is another ledger's, a truncated one and a garbage file
seed sessions/demo-basic.jsonl
docket keygen -o k >/dev/null
docket keygen -o other >/dev/null
docket checkpoint --key k >/dev/null
docket prove demo-basic call_rm_build -o r.json 2>/dev/null
try() { docket verify-receipt "$1" --pubkey "${2:-k.pub}" >/dev/null; echo "$1: $?"; }
jq -c '.events[3].proof[0] |= (if startswith("A") then "B" + .[1:] else "A" + .[1:] end)' r.json >proof-hash.json
try proof-hash.json
jq -c '.events[3].bytes |= (if startswith("A") then "B" + .[1:] else "A" + .[1:] end)' r.json >bytes.json
try bytes.json
jq -c '.events[3].event.actor = "user:mallory"' r.json >json-edited.json
try json-edited.json
DOCKET_LEDGER=ledger2 seed sessions/open-pending.jsonl sessions/demo-basic.jsonl
DOCKET_LEDGER=ledger2 docket checkpoint --key k >/dev/null
DOCKET_LEDGER=ledger2 docket prove demo-basic call_rm_build -o r2.json 2>/dev/null
jq -c --slurpfile o r2.json '.checkpoint = $o[0].checkpoint' r.json >other-ledger.json
try other-ledger.json
jq -c --slurpfile o r2.json '.checkpoint = $o[0].checkpoint | .ledger = $o[0].ledger | .tree_size = $o[0].tree_size' r.json >relabelled.json
try relabelled.json
head -c 700 r.json >truncated.json
try truncated.json
printf 'garbage\n' >garbage.json
try garbage.json
try r.json other.pub
try r.json
docket verify-receipt r.json; echo "no key: $?"
