# issue 10 defect 8: an id that is an object or a float is an invalid
# request (-32600): answered, and nothing is executed
docket init >/dev/null
docket serve --stdio <<'REQ'
{"jsonrpc":"2.0","id":1,"method":"runtime.start","params":{"runtime":"agent/1"}}
{"jsonrpc":"2.0","id":{"x":1},"method":"session.open","params":{"session":"s1"}}
{"jsonrpc":"2.0","id":2.5,"method":"session.open","params":{"session":"s2"}}
{"jsonrpc":"2.0","id":[3],"method":"session.open","params":{"session":"s3"}}
{"jsonrpc":"2.0","id":true,"method":"session.open","params":{"session":"s4"}}
REQ
docket log --json | wc -l
