# A large input is appended while it is parsed (record-large-bad-lines): what
# stops it late still names file:line and leaves nothing written: an object
# that is no event; an event the ledger refuses; a bad line after an event
# the ledger would refuse (the bad line wins, as when parsing came first);
# a bad line in the second of two files.
docket init >/dev/null
large_stream good.jsonl || exit 99
awk 'NR == 9000 { sub(/"tool": "shell"/, "\"tool\": \"shell\", \"tool_x\": 1") } { print }' good.jsonl >unknown.jsonl
awk 'NR == 11000 { print "{\"type\": \"tool.dispatched\", \"session\": \"s\", \"invocation\": \"nope\"}"; next } { print }' \
	good.jsonl >refused.jsonl
awk 'NR == 100 { print "{\"type\": \"tool.dispatched\", \"session\": \"s\", \"invocation\": \"nope\"}"; next }
     NR == 11999 { print "{\"a\":"; next } { print }' good.jsonl >both.jsonl
head -n 5000 good.jsonl | tail -n 4000 | sed 's/"s"/"s2"/; 4000 s/^/x/' >second.jsonl
for f in unknown refused both; do
	docket record $f.jsonl 2>&1; echo "exit $?"
	docket stats --json | jq .events
done
docket record good.jsonl second.jsonl 2>&1; echo "exit $?"
docket stats --json | jq .events
