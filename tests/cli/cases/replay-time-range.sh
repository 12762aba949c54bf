# --since (inclusive) and --until (exclusive); offsets are accepted
seed replay/sessions.jsonl
cp "$FIXTURES/replay/strict.yaml" .
docket replay --policy strict.yaml --since 2025-04-01T10:06:00Z --until 2025-04-02T11:01:00+02:00 --json
