# importing the same file again adds nothing; a grown file adds its new lines
docket init >/dev/null
cp "$FIXTURES/import/codex-grow-1.jsonl" rollout.jsonl
docket import codex rollout.jsonl | grep -E '^(files|events)'
docket import codex rollout.jsonl | grep -E '^(files|events)'
cp "$FIXTURES/import/codex-grow-2.jsonl" rollout.jsonl
docket import codex rollout.jsonl | grep -E '^(files|events)'
docket pending
