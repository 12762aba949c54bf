seed sessions/demo-basic.jsonl
docket keygen -o k >/dev/null
docket checkpoint --key k -o witness.json | sed -E "s/key [0-9a-f]{16}/key <key id>/"
docket checkpoint --key k
docket record "$FIXTURES/sessions/open-pending.jsonl" >/dev/null
docket checkpoint --key k | sed -E "s/key [0-9a-f]{16}/key <key id>/"
docket checkpoint --list | sed -E "s/  20[0-9T:.-]+Z  /  <time>  /; s/[0-9a-f]{16}\$/<key id>/"
jq -r ".index, .seq" witness.json
