# issue 10 defect 7: a re-send of anything already recorded returns the
# original seq and result (intent with its dispatch, settlement, policy,
# outcome after session.close)
cat >req <<'REQ'
{"jsonrpc":"2.0","id":1,"method":"runtime.start","params":{"runtime":"agent/1"}}
{"jsonrpc":"2.0","id":2,"method":"session.open","params":{"session":"s","cwd":"/home/dev/app"}}
{"jsonrpc":"2.0","id":3,"method":"policy.set","params":{"session":"s","format":"docket","policy":{"version":1,"commands":[{"pattern":["ls"],"decision":"deny"}]},"actor":"user:ana"}}
{"jsonrpc":"2.0","id":4,"method":"policy.set","params":{"session":"s","format":"docket","policy":{"version":1,"commands":[{"pattern":["ls"],"decision":"deny"}]},"actor":"user:ana"}}
{"jsonrpc":"2.0","id":5,"method":"tool.intent","params":{"session":"s","invocation":"a","tool":"shell","args":{"command":["git","status"]},"dispatch_if_allowed":true}}
{"jsonrpc":"2.0","id":6,"method":"tool.intent","params":{"session":"s","invocation":"a","tool":"shell","args":{"command":["git","status"]},"dispatch_if_allowed":true}}
{"jsonrpc":"2.0","id":7,"method":"tool.intent","params":{"session":"s","invocation":"b","tool":"shell","args":{"command":["git","push"]}}}
{"jsonrpc":"2.0","id":8,"method":"approval.request","params":{"session":"s","invocation":"b","request":"r1"}}
{"jsonrpc":"2.0","id":9,"method":"approval.settle","params":{"session":"s","invocation":"b","request":"r1","result":"denied","actor":"user:ana"}}
{"jsonrpc":"2.0","id":10,"method":"approval.settle","params":{"session":"s","invocation":"b","request":"r1","result":"denied","actor":"user:ana"}}
{"jsonrpc":"2.0","id":11,"method":"approval.request","params":{"session":"s","invocation":"b","request":"r2"}}
{"jsonrpc":"2.0","id":12,"method":"tool.complete","params":{"session":"s","invocation":"b","status":"denied"}}
{"jsonrpc":"2.0","id":13,"method":"tool.complete","params":{"session":"s","invocation":"a","status":"ok","exit_code":0}}
{"jsonrpc":"2.0","id":14,"method":"session.close","params":{"session":"s"}}
{"jsonrpc":"2.0","id":15,"method":"tool.complete","params":{"session":"s","invocation":"a","status":"ok","exit_code":0}}
{"jsonrpc":"2.0","id":16,"method":"tool.complete","params":{"session":"s","invocation":"a","status":"error","exit_code":1}}
REQ
both_ways req --policy "$FIXTURES/policies/team.yaml" --workspace /home
