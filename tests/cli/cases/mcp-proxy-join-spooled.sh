# one record per MCP call when the hook's record is still in the spool: the
# proxy runs already (it folded what waited when it started), the
# PreToolUse hook records the call spool first while another process holds
# the ledger's writer lock (its detached fold leaves the record waiting),
# then Codex calls the tool through the proxy: the proxy folds the spool
# before it looks the call up, so it joins the hook's call (one intent, its
# dispatch and outcome) instead of writing an intent of its own that
# conflicts with the hook's once both reach the chain
export HOME=$PWD/home
docket init >/dev/null
M=$FIXTURES/mcp
mkfifo to-proxy
docket mcp-proxy --name echo --session proxy -- python3 "$M/echo_server.py" <to-proxy >from-proxy &
proxy=$!
exec 3>to-proxy
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}' >&3
wait_for from-proxy '"id": 1,'
python3 "$FIXTURES/hooks/hold_lock.py" ledger 1 ready &
holder=$!
wait_for ready holding
printf '%s\n' '{"session_id":"t-codex","turn_id":"u1","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"mcp__echo__echo","tool_input":{"text":"hi"},"tool_use_id":"call_mcp_1"}' |
	docket hook codex
echo "hook exit $?"
wait $holder   # the holder lets go: the record still waits in the spool
find ledger/spool -type f -size +0 -printf '%f\n'
printf '%s\n' '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"callId":"call_mcp_1","threadId":"t-codex"}}}' >&3
wait_for from-proxy '"id": 2,'
exec 3>&-
wait $proxy
jq -c 'select(.id == 2) | .result.content[0].text' from-proxy
docket log --json | jq -c '[.seq, .type, .session, .invocation, .status] | map(select(. != null))'
docket verify | head -1
