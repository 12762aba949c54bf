# issue 10 defects 4 and 9: a connection that never called runtime.start
# changes nothing, a client cannot name an epoch (a zombie saying "epoch":2)
# nor attach to one it did not start, and live appends keep docket's clock
cat >req <<'REQ'
{"jsonrpc":"2.0","id":1,"method":"session.open","params":{"session":"s"}}
{"jsonrpc":"2.0","id":2,"method":"session.open","params":{"session":"s","epoch":1}}
{"jsonrpc":"2.0","id":3,"method":"runtime.attach","params":{"epoch":1}}
{"jsonrpc":"2.0","id":4,"method":"runtime.start","params":{"runtime":"agent/1"}}
{"jsonrpc":"2.0","id":5,"method":"session.open","params":{"session":"s","epoch":2}}
{"jsonrpc":"2.0","id":6,"method":"session.open","params":{"session":"s","time":"1970-01-01T00:00:00Z"}}
{"jsonrpc":"2.0","id":7,"method":"session.open","params":{"session":"s","epoch":1}}
REQ
both_ways req
DOCKET_LEDGER=ledger-merged docket log --json | grep -c '"time":"1970' || true
