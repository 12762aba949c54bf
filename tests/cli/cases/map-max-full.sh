# --map-max / DOCKET_MAP_MAX cap the data file: a commit past the cap is
# refused whole (exit 3), nothing written; a higher cap lets it through (the
# outputs are random: segments compress repetitive text below the cap)
docket init >/dev/null
python3 -c '
import json, os
print(json.dumps({"type": "session.opened", "session": "big", "runtime": "t/1"}))
for i in range(4000):
    c = "call_%d" % i
    print(json.dumps({"type": "tool.intent", "session": "big", "invocation": c, "tool": "shell",
                      "args": {"command": ["echo", c]}, "decision": {"verdict": "allowed"}}))
    print(json.dumps({"type": "tool.dispatched", "session": "big", "invocation": c}))
    print(json.dumps({"type": "tool.completed", "session": "big", "invocation": c, "status": "ok",
                      "exit_code": 0, "output": os.urandom(200).hex()}))
' >big.jsonl || exit 99
docket --map-max 1M record big.jsonl
echo "exit $?"
DOCKET_MAP_MAX=1M docket record big.jsonl
echo "exit $?"
docket stats --json | jq .events
docket --map-max=64M record big.jsonl
echo "exit $?"
docket stats --json | jq .events
