# FORMAT is optional: each file's format is detected, a directory mixes both
docket init >/dev/null
mkdir mixed
cp "$FIXTURES/import/codex-basic.jsonl" "$FIXTURES/import/claude-basic.jsonl" mixed/
docket import mixed | grep -E '^(files|sessions|calls)'
