# a whole session over JSON-RPC, with the errors a runtime can meet
docket init >/dev/null
docket serve --stdio <<'REQ'
{"jsonrpc":"2.0","id":1,"method":"runtime.start","params":{"runtime":"agent/1"}}
{"jsonrpc":"2.0","id":2,"method":"session.open","params":{"session":"s1","cwd":"/w"}}
{"jsonrpc":"2.0","id":3,"method":"tool.intent","params":{"session":"s1","invocation":"c1","tool":"shell","args":{"command":["ls"]},"decision":{"verdict":"allowed","source":"runtime"},"dispatch_if_allowed":true}}
{"jsonrpc":"2.0","id":4,"method":"tool.dispatch","params":{"session":"s1","invocation":"c1"}}
{"jsonrpc":"2.0","id":5,"method":"tool.complete","params":{"session":"s1","invocation":"c1","status":"ok","exit_code":0}}
{"jsonrpc":"2.0","id":6,"method":"tool.complete","params":{"session":"s1","invocation":"c1","status":"ok","exit_code":0}}
{"jsonrpc":"2.0","id":7,"method":"tool.intent","params":{"session":"s1","invocation":"c2","tool":"shell","args":{"command":["rm","x"]},"decision":{"verdict":"approval_required"}}}
{"jsonrpc":"2.0","id":8,"method":"tool.dispatch","params":{"session":"s1","invocation":"c2"}}
{"jsonrpc":"2.0","id":9,"method":"approval.request","params":{"session":"s1","invocation":"c2","request":"r1"}}
{"jsonrpc":"2.0","id":10,"method":"approval.settle","params":{"session":"s1","invocation":"c2","request":"r1","result":"denied","actor":"user:ana"}}
{"jsonrpc":"2.0","id":11,"method":"tool.complete","params":{"session":"s1","invocation":"c2","status":"denied"}}
{"jsonrpc":"2.0","id":12,"method":"tool.intent","params":{"session":"s1","invocation":"c3","tool":"shell","args":{"command":["ls"]},"bogus":1}}
not json at all
{"id":13,"method":"session.close"}
{"jsonrpc":"2.0","id":14,"method":"tool.nope","params":{}}
{"jsonrpc":"2.0","id":15,"method":"runtime.start","params":{"runtime":"agent/2"}}
{"jsonrpc":"2.0","id":16,"method":"tool.intent","params":{"session":"s1","invocation":"c9","tool":"shell","epoch":1}}
{"jsonrpc":"2.0","method":"session.close","params":{"session":"s1"}}
REQ
echo "exit $?"
docket log --json | wc -l
docket verify
