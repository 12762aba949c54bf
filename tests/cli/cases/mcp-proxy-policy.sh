# mcp-proxy with a policy: an allowed call is recorded T0/T1/T2; a denied one
# gets a JSON-RPC error and never reaches the server; an ask becomes an MCP
# elicitation the client answers (accept: forwarded; isError: an error outcome)
M=$FIXTURES/mcp
echo '{"elicitation":true,"answer":"accept","calls":[["echo",{"text":"hi"}],["touch",{"path":"touched"}],["fail",{}]]}' >script.json
python3 "$M/client.py" script.json -- docket mcp-proxy --name echo --session m1 --policy "$M/policy.yaml" -- python3 "$M/echo_server.py"
test -e touched || echo "the denied call never reached the server"
trail
docket log --json | jq -c 'select(.type == "tool.intent") | .args'
docket log --json | jq -c 'select(.type == "tool.intent" and .decision) | [.session, .invocation, .decision.policy_revision]'
