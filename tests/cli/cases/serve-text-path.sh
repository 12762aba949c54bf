# tool.intent and tool.complete take serve's text path (simdjson, no jansson
# tree); whatever it does not take gets the tree path's answer, byte for byte
docket init >/dev/null
docket serve --stdio <<'REQ'
{"jsonrpc":"2.0","id":1,"method":"runtime.start","params":{"runtime":"agent/1"}}
{"jsonrpc":"2.0","id":2,"method":"session.open","params":{"session":"s1","cwd":"/w"}}
{"jsonrpc":"2.0","id":"i-3","method":"tool.intent","params":{"session":"s1","invocation":"c1","tool":"shell","args":{"command":["printf","%s\n","\u00e9\t\/"],"n":[1.25,-0,true,null,{}]},"decision":{"verdict":"allowed","source":"runtime"},"dispatch_if_allowed":true}}
{ "jsonrpc" : "2.0" , "id" : 4 , "method" : "tool.complete" , "params" : { "session" : "s1" , "invocation" : "c1" , "status" : "ok" , "exit_code" : 0 } }
{"jsonrpc":"2.0","id":5,"method":"tool.complete","params":{"session":"s1","invocation":"c1","status":"ok","exit_code":0}}
{"jsonrpc":"2.0","id":6,"method":"tool.intent","params":{"session":"s1","invocation":"c2","tool":"shell","args":{"k":"a\u0000b"}}}
{"jsonrpc":"2.0","id":7,"method":"tool.intent","params":{"session":"s1","invocation":"c2","tool":"shell","tool":"other"}}
{"jsonrpc":"2.0","id":8.5,"method":"tool.intent","params":{"session":"s1","invocation":"c2","tool":"shell"}}
{"jsonrpc":"2.0","id":[9],"method":"tool.complete","params":{"session":"s1","invocation":"c2","status":"ok"}}
{"jsonrpc":"1.0","id":10,"method":"tool.complete","params":{"session":"s1","invocation":"c2","status":"ok"}}
{"jsonrpc":"2.0","id":11,"method":"tool.complete"}
{"jsonrpc":"2.0","id":12,"method":"tool.complete","params":[1]}
{"jsonrpc":"2.0","id":13,"method":"tool.intent","params":{"session":"s1","invocation":"c3","tool":"shell","args":{"command":["ls"]},"type":"tool.completed"}}
{"jsonrpc":"2.0","id":14,"method":"tool.intent","params":{"session":"s1","invocation":"c4","tool":"shell","epoch":7}}
{"jsonrpc":"2.0","id":15,"method":"tool.intent","params":{"session":"s1","invocation":"c4","tool":"shell","decision":{"verdict":"allowed","source":"docket"}}}
{"jsonrpc":"2.0","id":16,"method":"tool.intent","params":{"session":"s1","invocation":"c4","tool":"shell","time":"2026-01-01T00:00:00Z"}}
{"jsonrpc":"2.0","id":17,"method":"tool.intent","params":{"session":"s1","invocation":"c4","tool":"shell","args":{"command":["ls"]},"dispatch_if_allowed":true}}
{"jsonrpc":"2.0","id":18,"method":"tool.intent","params":{"session":"s1","invocation":"c4","tool":"shell","args":{"command":["ls"]}}}
{"jsonrpc":"2.0","id":19,"method":"tool.complete","params":{"session":"nope","invocation":"c4","status":"ok"}}
{"jsonrpc":"2.0","id":null,"method":"tool.complete","params":{"session":"s1","invocation":"c4","status":"error","exit_code":99999999999999999999}}
{"jsonrpc":"2.0","method":"tool.complete","params":{"session":"s1","invocation":"c4","status":"error"}}
{"jsonrpc":"2.0","id":21,"method":"tool.complete","params":{"session":"s1","invocation":"c4","status":"error"}}
REQ
echo "exit $?"
docket log --json | sed 's/"time":"[^"]*"/"time":T/; s/"hash":"[^"]*"/"hash":H/; s/"uid":[0-9]*/"uid":U/; s/"env":{[^}]*}/"env":E/'
docket verify
