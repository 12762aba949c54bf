# --calls: one result line per input line, in order, the policy loaded
# once; a bad line (not JSON, outside the call schema, no tool) is an error
# line and the batch goes on; blank lines are skipped; exit 2 for the bad
# lines; stdin with -
cp "$FIXTURES/policies/authoring.yaml" "$FIXTURES/policies/calls.jsonl" .
docket policy eval authoring.yaml --calls calls.jsonl --context '{"cwd":"/home/dev/app","workspace_roots":["/home/dev/app"]}' |
	jq -c '{line, invocation, verdict, error}'
echo "exit $?"
head -2 calls.jsonl | docket policy eval authoring.yaml --calls - --exit-code | jq -c '.verdict'
echo "exit $?"
