# codex-relay passes every app-server line through byte for byte in both
# directions (a line that is not JSON, a notification docket does not know)
# and records each call from the stream: T0 at item/started, the approval
# request with what was offered, the user's decision from the client's
# answer (accept, acceptForSession, decline, cancel, an error response),
# T1 on an accepted approval (inferred at T2 without one), a request the
# server withdrew, a failed command, a patch, an MCP call
C=$FIXTURES/codex
cat >script.json <<'JSON'
[
 {"id":"call_ok","command":"/bin/bash -lc 'echo hi'","approval":true,"output":"hi\n"},
 {"id":"call_session","command":"/bin/bash -lc 'git status'","approval":true},
 {"id":"call_no","command":"/bin/bash -lc 'rm -rf build'","approval":true},
 {"id":"call_cancel","command":"ls -la 'my dir'","approval":true},
 {"id":"call_err","command":"/bin/bash -lc make","approval":true},
 {"id":"call_gone","command":"/bin/bash -lc 'sleep 1'","approval":true,"withdraw":true},
 {"id":"call_free","command":"/bin/bash -lc false","exit":1},
 {"id":"call_patch","patch":[{"path":"a.txt","kind":{"type":"add"}},{"path":"b.txt","kind":{"type":"update","move_path":"c.txt"}}],"approval":true},
 {"id":"call_mcp","mcp":["echo","echo",{"text":"hi"}],"output":"hi"}
]
JSON
echo '["accept","acceptForSession","decline","cancel","error",null,"accept"]' >decisions.json
FAKE_IN=$PWD/server.in FAKE_OUT=$PWD/server.out python3 "$C/app_client.py" decisions.json \
	--sent client.sent --recv client.recv -- docket codex-relay -- python3 "$C/fake_app_server.py" script.json
cmp client.sent server.in && echo "client -> server: byte for byte"
cmp server.out client.recv && echo "server -> client: byte for byte"
trail
docket log --json | jq -c 'select(.type == "session.opened") | [.session, .runtime, .cwd == env.PWD, .labels.capture]'
docket log --json | jq -c 'select(.type == "tool.intent") | [.invocation, .tool, .args.command // .args.changes // .args.tool, .turn]'
docket log --json | jq -c 'select(.type == "approval.requested" and .invocation == "call_ok") | [.request, .prompt]'
docket log --json | jq -c 'select(.type == "approval.settled") | [.invocation, .result, .actor, .reason]'
docket log --json | jq -c 'select(.type == "tool.dispatched") | [.invocation, .provenance.file]'
docket log --json | jq -c 'select(.type == "tool.completed" and .invocation == "call_ok") | [.exit_code, .duration_ms, .output]'
echo "pending: $(docket pending --json | wc -l)"
docket verify >/dev/null && echo "ledger verifies"
