# a policy that does not load: exit 2 with file:line:column
seed replay/sessions.jsonl
cp "$FIXTURES/replay/malformed.yaml" .
docket replay --policy malformed.yaml
