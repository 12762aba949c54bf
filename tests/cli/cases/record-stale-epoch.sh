docket init >/dev/null
cp "$FIXTURES/bad/stale-epoch.jsonl" input.jsonl
docket record input.jsonl
rc=$?
echo "events after: $(docket log --json | wc -l)"
exit $rc
