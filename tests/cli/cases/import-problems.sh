# malformed and unknown lines are skipped and reported; the rest is imported
docket init >/dev/null
cp "$FIXTURES/import/codex-problems.jsonl" rollout.jsonl
docket import codex rollout.jsonl
