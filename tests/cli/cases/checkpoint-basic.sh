seed sessions/demo-basic.jsonl
docket keygen -o k >/dev/null
docket checkpoint --key k -o cp.note --record witness.json | sed -E "s/key [0-9a-f]{16}/key <key id>/"
docket checkpoint --key k
docket record "$FIXTURES/sessions/open-pending.jsonl" >/dev/null
docket checkpoint --key k | sed -E "s/key [0-9a-f]{16}/key <key id>/"
docket checkpoint --list | sed -E "s/  20[0-9T:.-]+Z  /  <time>  /; s/[0-9a-f]{16}\$/<key id>/"
jq -r ".index, .seq" witness.json
# the signed note: origin (the ledger id), tree size, root, a blank line, the signature by the origin
sed -E 's/[0-9a-f]{32}/<ledger id>/; s/^[A-Za-z0-9+\/]{43}=$/<root>/; s/ [A-Za-z0-9+\/]{91}=$/ <signature>/' cp.note
