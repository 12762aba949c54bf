# a client line the proxy cannot parse or check is refused, answered and
# recorded, never forwarded: a lone surrogate, a 30-digit integer, a
# duplicate key, a batch, a tools/call without an id or with a non-string
# name, a line that is no JSON; the server sees only the good call
M=$FIXTURES/mcp
{
	printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}'
	printf '%s\n' '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"\ud800"}}}'
	printf '%s\n' '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"n":123456789012345678901234567890}}}'
	printf '%s\n' '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","name":"rm","arguments":{}}}'
	printf '%s\n' '[{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{}}}]'
	printf '%s\n' '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{}}}'
	printf '%s\n' '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":["echo"],"arguments":{}}}'
	printf '%s\n' '{"jsonrpc":"2.0","id":{"x":1},"method":"tools/call","params":{"name":"echo"}}'
	printf '%s\n' 'not json at all'
	printf '%s\n' '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":"fine"}}}'
} >in.jsonl
docket mcp-proxy --name echo --session refuse -- python3 "$M/echo_server.py" <in.jsonl >out.jsonl
echo "proxy exit $?"
jq -c '[.id, .error.code, .error.data.kind, (.result != null)]' out.jsonl
trail
docket log --json | jq -c 'select(.type == "tool.intent" and .invocation == "mcp-refused:2") | .args'
docket pending
