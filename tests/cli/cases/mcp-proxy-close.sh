# nothing stays open when the proxy ends: a client that closes during an
# unanswered elicitation leaves the call settled `closed` and denied; SIGTERM
# while a call is at the server settles it indeterminate; both close the session
M=$FIXTURES/mcp
{
	printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{"elicitation":{}}}}'
	printf '%s\n' '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fail","arguments":{}}}'
} >ask.jsonl
docket mcp-proxy --name echo --session asked --policy "$M/policy.yaml" -- python3 "$M/echo_server.py" <ask.jsonl |
	jq -c '[.id, .method]'
echo "proxy exit ${PIPESTATUS[0]}"
trail
mkfifo in
docket mcp-proxy --name slow --session term -- sh -c 'cat >/dev/null' <in >/dev/null &
pid=$!
exec 3>in
printf '%s\n' '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"sleep","arguments":{}}}' >&3
for i in $(seq 100); do
	docket log --json 2>/dev/null | grep -q '"tool.dispatched"' && break
	sleep 0.1
done
docket pending | sed 's/  */ /g'
kill -TERM $pid
wait $pid
echo "proxy after SIGTERM: exit $?"
exec 3>&-
docket log --json | jq -c 'select(.session == "term") | [.seq, .type, .invocation, .status, .error] | map(select(. != null))'
docket pending
