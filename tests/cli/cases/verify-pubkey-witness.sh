seed sessions/demo-basic.jsonl
docket keygen -o k >/dev/null
docket checkpoint --key k -o witness.json >/dev/null
docket record "$FIXTURES/sessions/open-pending.jsonl" >/dev/null
docket verify --pubkey k.pub --witness witness.json | sed -E "s/key [0-9a-f]{16}/key <key id>/"
