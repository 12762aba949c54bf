# JUnit for CI: one testcase per changed call, failures for --fail-on
seed replay/sessions.jsonl
cp "$FIXTURES/replay/strict.yaml" .
docket replay --policy strict.yaml --format junit --fail-on changed
