# without a policy every line passes through byte for byte (what the client
# gets is exactly what the server wrote), each tools/call is recorded, and a
# server that dies ends the proxy (the client sees EOF, never a hang)
M=$FIXTURES/mcp
{
	printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}'
	printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/initialized"}'
	printf '%s\n' '{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{"text":"ünïcode"}}}'
	printf '%s\n' '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope"}}'
} >in.jsonl
python3 "$M/echo_server.py" <in.jsonl >direct.out
docket mcp-proxy --name echo --session pass -- python3 "$M/echo_server.py" <in.jsonl >proxied.out
echo "proxy exit $?"
cmp direct.out proxied.out && echo "byte for byte"
trail
timeout 10 docket mcp-proxy --name gone --session crash -- sh -c 'exit 3' </dev/zero >/dev/null
echo "server died: proxy exit $?"
