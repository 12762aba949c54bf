docket init >/dev/null
cp "$FIXTURES/bad/second-completed.jsonl" input.jsonl
docket record input.jsonl
rc=$?
echo "events after: $(docket log --json | wc -l)"
exit $rc
