# issue 10 defects 5 and 3: a call allowed under revision 1 that revision 2
# asks about can ask for an approval and then run; a YAML operator policy
# with approval: never refuses every approval request
cat >req <<'REQ'
{"jsonrpc":"2.0","id":1,"method":"runtime.start","params":{"runtime":"agent/1"}}
{"jsonrpc":"2.0","id":2,"method":"session.open","params":{"session":"s","cwd":"/home/dev/app"}}
{"jsonrpc":"2.0","id":3,"method":"tool.intent","params":{"session":"s","invocation":"a","tool":"shell","args":{"command":["git","status"]}}}
{"jsonrpc":"2.0","id":4,"method":"policy.set","params":{"session":"s","format":"docket","policy":{"version":1,"commands":[{"pattern":["git","status"],"decision":"ask"}]}}}
{"jsonrpc":"2.0","id":5,"method":"tool.dispatch","params":{"session":"s","invocation":"a"}}
{"jsonrpc":"2.0","id":6,"method":"approval.request","params":{"session":"s","invocation":"a","request":"r1"}}
{"jsonrpc":"2.0","id":7,"method":"approval.settle","params":{"session":"s","invocation":"a","request":"r1","result":"approved","actor":"user:ana"}}
{"jsonrpc":"2.0","id":8,"method":"tool.dispatch","params":{"session":"s","invocation":"a"}}
REQ
both_ways req --policy "$FIXTURES/policies/team.yaml" --workspace /home
echo "--- approval: never, recorded as YAML text"
sed 's/^approval: on_request/approval: never/' "$FIXTURES/policies/team.yaml" >never.yaml
cat >req2 <<'REQ'
{"jsonrpc":"2.0","id":1,"method":"runtime.start","params":{"runtime":"agent/1"}}
{"jsonrpc":"2.0","id":2,"method":"session.open","params":{"session":"s","cwd":"/home/dev/app"}}
{"jsonrpc":"2.0","id":3,"method":"tool.intent","params":{"session":"s","invocation":"a","tool":"shell","args":{"command":["git","push"]},"decision":{"verdict":"approval_required"}}}
{"jsonrpc":"2.0","id":4,"method":"approval.request","params":{"session":"s","invocation":"a","request":"r1"}}
REQ
both_ways req2 --policy never.yaml --workspace /home
