# a stricter policy: tightened calls with the rule that decides, the
# undecided call reported apart
seed replay/sessions.jsonl
cp "$FIXTURES/replay/strict.yaml" .
docket replay --policy strict.yaml
