# the operator's policy decides; a client's policy.set can narrow, never widen
docket init >/dev/null
docket serve --stdio --policy "$FIXTURES/policies/team.yaml" --workspace /home <<'REQ' | grep -o '"id":[0-9]*\|"verdict":"[a-z_]*"\|"revision":[0-9]*\|"kind":"[a-z_]*"' | paste -sd' ' | sed 's/ "id"/\n"id"/g'
{"jsonrpc":"2.0","id":1,"method":"runtime.start","params":{"runtime":"agent/1"}}
{"jsonrpc":"2.0","id":2,"method":"session.open","params":{"session":"s","cwd":"/home/ana/shop"}}
{"jsonrpc":"2.0","id":3,"method":"tool.intent","params":{"session":"s","invocation":"a","tool":"shell","args":{"command":["git","status"]}}}
{"jsonrpc":"2.0","id":4,"method":"tool.intent","params":{"session":"s","invocation":"b","tool":"shell","args":{"command":["git","push"]},"decision":{"verdict":"allowed"}}}
{"jsonrpc":"2.0","id":5,"method":"policy.set","params":{"session":"s","format":"docket","policy":{"version":1,"commands":[{"pattern":["git"],"decision":"allow"},{"pattern":["ls"],"decision":"deny"}]}}}
{"jsonrpc":"2.0","id":6,"method":"tool.intent","params":{"session":"s","invocation":"c","tool":"shell","args":{"command":["git","push"]}}}
{"jsonrpc":"2.0","id":7,"method":"tool.intent","params":{"session":"s","invocation":"d","tool":"shell","args":{"command":["ls"]}}}
REQ
