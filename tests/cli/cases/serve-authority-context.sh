# issue 10: under an operator policy a client's session context cannot
# widen it (workspace_roots "/", TMPDIR=/etc, cwd outside --workspace), and
# a session without a trusted policy (recorded, imported) is not driven
docket init >/dev/null
printf '%s\n' '{"type":"session.opened","session":"rec","cwd":"/"}' | docket record - >/dev/null
cat >req <<'REQ'
{"jsonrpc":"2.0","id":1,"method":"runtime.start","params":{"runtime":"agent/1"}}
{"jsonrpc":"2.0","id":2,"method":"session.open","params":{"session":"a","cwd":"/home/dev/app","workspace_roots":["/"]}}
{"jsonrpc":"2.0","id":3,"method":"session.open","params":{"session":"b","cwd":"/home/dev/app","env":{"TMPDIR":"/etc"}}}
{"jsonrpc":"2.0","id":4,"method":"session.open","params":{"session":"c","cwd":"/"}}
{"jsonrpc":"2.0","id":5,"method":"session.open","params":{"session":"d","cwd":"/home/dev/app"}}
{"jsonrpc":"2.0","id":6,"method":"tool.intent","params":{"session":"d","invocation":"w","tool":"write_file","args":{"path":"/etc/passwd"}}}
{"jsonrpc":"2.0","id":7,"method":"policy.set","params":{"session":"rec","format":"docket","policy":{"version":1,"commands":[{"pattern":["rm"],"decision":"allow"}]}}}
{"jsonrpc":"2.0","id":8,"method":"tool.intent","params":{"session":"rec","invocation":"x","tool":"shell","args":{"command":["rm","-rf","/"]},"decision":{"verdict":"allowed"}}}
REQ
docket serve --stdio --policy "$FIXTURES/policies/team.yaml" --workspace /home/dev <req | python3 -c '
import json, sys
for l in sys.stdin:
    r = json.loads(l)
    e = r.get("error")
    print(r["id"], e["data"]["kind"] + ": " + e["message"] if e else r["result"].get("verdict", "ok"))'
