# a looser policy with --fail-on loosened: exit 1; a loosened call a human
# denied is flagged
seed replay/sessions.jsonl
cp "$FIXTURES/replay/loose.yaml" .
docket replay --policy loose.yaml --fail-on loosened
