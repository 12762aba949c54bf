# an ask for a client that did not declare elicitation is a denial with the
# reason; a client that declines the elicitation denies the call too
M=$FIXTURES/mcp
echo '{"elicitation":false,"calls":[["fail",{}]]}' >a.json
python3 "$M/client.py" a.json -- docket mcp-proxy --name echo --session no-elicit --policy "$M/policy.yaml" -- python3 "$M/echo_server.py"
echo '{"elicitation":true,"answer":"decline","calls":[["fail",{}]]}' >b.json
MCP_SERVER_LOG=$PWD/server.log python3 "$M/client.py" b.json -- docket mcp-proxy --name echo --session declined --policy "$M/policy.yaml" -- python3 "$M/echo_server.py"
test -e server.log || echo "the server saw no call"
trail
