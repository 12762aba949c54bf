# the error names the file and line of the refused event, across files
docket init >/dev/null
head -n 1 "$FIXTURES/bad/second-completed.jsonl" > a.jsonl
tail -n +2 "$FIXTURES/bad/second-completed.jsonl" > b.jsonl
docket record a.jsonl b.jsonl
rc=$?
echo "events after: $(docket log --json | wc -l)"
exit $rc
