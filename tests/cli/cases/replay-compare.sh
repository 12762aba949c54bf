# two policies against each other, one session: the baseline is the first
seed replay/sessions.jsonl
cp "$FIXTURES/replay/strict.yaml" "$FIXTURES/replay/loose.yaml" .
docket replay --compare strict.yaml loose.yaml --session s-codex
