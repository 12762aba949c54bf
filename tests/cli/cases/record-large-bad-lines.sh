# A large input is parsed on two threads (in chunks, while the append runs):
# the bad lines are still reported in input order, from every chunk, with
# file:line, and nothing is recorded; a good large input records every event
# in order.
docket init >/dev/null
large_stream good.jsonl || exit 99
awk 'NR == 3 { print "{not json"; next } NR == 9000 { print "[1]"; next } NR == 11999 { print "{\"a\":"; next } { print }' \
	good.jsonl >bad.jsonl
docket record bad.jsonl 2>&1; echo "exit $?"
docket stats --json | jq .events
docket record good.jsonl
docket log --json | jq -s -c '[length, .[1].invocation, .[-1].invocation, ([.[].seq] == [range(1; length + 1)])]'
