docket init >/dev/null
cp "$FIXTURES/bad/dispatch-before-intent.jsonl" input.jsonl
docket record input.jsonl
rc=$?
echo "events after: $(docket log --json | wc -l)"
exit $rc
