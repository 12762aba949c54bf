seed sessions/demo-basic.jsonl
docket keygen -o k >/dev/null
docket keygen -o attacker >/dev/null
docket checkpoint --key attacker >/dev/null
docket verify --pubkey k.pub | sed -E "s/key [0-9a-f]{16}/key <id>/g"
