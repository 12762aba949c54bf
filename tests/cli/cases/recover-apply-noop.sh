# issue 28: recover --apply with nothing to settle writes nothing (no epoch,
# no fencing): the healthy runtime serving the ledger carries on
docket init >/dev/null
docket serve --stdio <<'REQ' | grep -o '"id":[0-9]*,"[a-z]*"'
{"jsonrpc":"2.0","id":1,"method":"runtime.start","params":{"runtime":"agent/1"}}
{"jsonrpc":"2.0","id":2,"method":"session.open","params":{"session":"s1"}}
{"jsonrpc":"2.0","id":3,"method":"tool.intent","params":{"session":"s1","invocation":"c1","tool":"shell","args":{"command":["ls"]},"decision":{"verdict":"allowed"},"dispatch_if_allowed":true}}
{"jsonrpc":"2.0","id":4,"method":"tool.complete","params":{"session":"s1","invocation":"c1","status":"ok","exit_code":0}}
REQ
docket log --json | wc -l
docket recover --apply
docket log --json | wc -l
