# --strict: one bad line refuses the import, nothing is written
docket init >/dev/null
cp "$FIXTURES/import/codex-problems.jsonl" rollout.jsonl
docket import --strict codex rollout.jsonl
rc=$?
echo "events after: $(docket log --json | wc -l)"
exit $rc
