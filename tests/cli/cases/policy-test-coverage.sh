# --coverage: the rules no test matched; with a ledger, the rules that
# decided none of its recorded calls either (the npm rule decides none)
cp "$FIXTURES/policies/authoring.yaml" .
cat > few.test.yaml <<'T'
tests:
  - {command: git status, expect: allowed}
  - {command: rm -rf /, expect: denied}
T
docket policy test authoring.yaml few.test.yaml --coverage || exit
seed replay/sessions.jsonl
docket policy test authoring.yaml few.test.yaml --coverage || exit
docket policy test authoring.yaml few.test.yaml --coverage --json | jq -c '.coverage'
