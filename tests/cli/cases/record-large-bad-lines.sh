# A large input is parsed on two threads (in chunks, while the append runs):
# the bad lines are still reported in input order, from every chunk, with
# file:line, and nothing is recorded; a good large input records every event
# in order.
docket init >/dev/null
python3 -c '
import json
print(json.dumps({"type": "session.opened", "session": "s", "runtime": "t/1"}))
for i in range(6000):
    c = "c%d" % i
    print(json.dumps({"type": "tool.intent", "session": "s", "invocation": c, "tool": "shell",
                      "args": {"command": ["echo", c]}, "decision": {"verdict": "allowed"}}))
    print(json.dumps({"type": "tool.dispatched", "session": "s", "invocation": c}))
' >good.jsonl || exit 99
awk 'NR == 3 { print "{not json"; next } NR == 9000 { print "[1]"; next } NR == 11999 { print "{\"a\":"; next } { print }' \
	good.jsonl >bad.jsonl
docket record bad.jsonl 2>&1; echo "exit $?"
docket stats --json | jq .events
docket record good.jsonl
docket log --json | jq -s -c '[length, .[1].invocation, .[-1].invocation, ([.[].seq] == [range(1; length + 1)])]'
