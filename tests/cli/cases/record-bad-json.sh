# a bad line names file:line; nothing is written, not even the good lines
docket init >/dev/null
cp "$FIXTURES/bad/bad-json.jsonl" input.jsonl
docket record input.jsonl
rc=$?
echo "events after: $(docket log --json | wc -l)"
exit $rc
