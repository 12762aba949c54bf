docket init >/dev/null
cp "$FIXTURES/bad/unknown-field.jsonl" input.jsonl
docket record input.jsonl
rc=$?
echo "events after: $(docket log --json | wc -l)"
exit $rc
