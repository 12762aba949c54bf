# issue 28: record checks a canonical tool's args against docs/call.schema.json
# as serve does: a command line as one string is refused, nothing is written
docket init >/dev/null
cat >input.jsonl <<'EV'
{"type":"session.opened","session":"s1"}
{"type":"tool.intent","session":"s1","invocation":"c1","tool":"shell","args":{"command":"ls -la"}}
EV
docket record input.jsonl 2>&1
echo "exit $?"
docket log --json | wc -l
