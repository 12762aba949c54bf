# policy eval refuses calls it cannot take (exit 2): a command line given as
# --call (with a hint), a call outside the published schema, bad quoting,
# two ways to give the call
cp "$FIXTURES/policies/authoring.yaml" .
docket policy eval authoring.yaml --call 'rm -rf /'
echo "exit $?"
docket policy eval authoring.yaml --call '{"tool":"shell","args":{"command":"rm -rf /"}}'
echo "exit $?"
docket policy eval authoring.yaml --call '{"tool":"network","args":{"port":70000}}'
echo "exit $?"
docket policy eval authoring.yaml --command "rm 'x"
echo "exit $?"
docket policy eval authoring.yaml --command ls --path /x
echo "exit $?"
docket policy eval authoring.yaml --call '{"tool":"shell","args":{"command":["ls"]}}' --command ls
echo "exit $?"
docket policy eval authoring.yaml --calls missing.jsonl
