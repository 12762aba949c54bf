# issue 10 defect 1: a client cannot forge a superseded settlement, and a
# dispatch revalidates whatever phase the ledger shows, split or merged
cat >req <<'REQ'
{"jsonrpc":"2.0","id":1,"method":"runtime.start","params":{"runtime":"agent/1"}}
{"jsonrpc":"2.0","id":2,"method":"session.open","params":{"session":"s","cwd":"/home/dev/app"}}
{"jsonrpc":"2.0","id":3,"method":"tool.intent","params":{"session":"s","invocation":"a","tool":"shell","args":{"command":["git","push"]}}}
{"jsonrpc":"2.0","id":4,"method":"approval.request","params":{"session":"s","invocation":"a","request":"r1"}}
{"jsonrpc":"2.0","id":5,"method":"approval.settle","params":{"session":"s","invocation":"a","request":"r1","result":"superseded","decision":{"verdict":"allowed","source":"docket","policy_revision":1}}}
{"jsonrpc":"2.0","id":6,"method":"tool.dispatch","params":{"session":"s","invocation":"a"}}
{"jsonrpc":"2.0","id":7,"method":"tool.intent","params":{"session":"s","invocation":"b","tool":"shell","args":{"command":["git","fetch"]},"decision":{"verdict":"allowed","source":"docket"}}}
{"jsonrpc":"2.0","id":8,"method":"approval.settle","params":{"session":"s","invocation":"a","request":"r1","result":"approved","actor":"user:ana"}}
{"jsonrpc":"2.0","id":9,"method":"tool.dispatch","params":{"session":"s","invocation":"a"}}
REQ
both_ways req --policy "$FIXTURES/policies/team.yaml" --workspace /home
