# the versioned JSON report; without grants the second push tightens
seed replay/sessions.jsonl
cp "$FIXTURES/replay/base.yaml" .
docket replay --policy base.yaml --approvals none --format json
