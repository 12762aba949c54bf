# markdown for a pull-request comment
seed replay/sessions.jsonl
cp "$FIXTURES/replay/loose.yaml" .
docket replay --policy loose.yaml --format markdown --fail-on tightened
